#pragma once

#include <cstdio>
#include <iosfwd>
#include <optional>
#include <string>

#include "diagnose/diagnose.h"
#include "record/run_folder.h"
#include "record/run_record.h"

namespace zerodrop::report {

// Renders a run and its diagnosis for people (terminal, HTML) and machines (report.json).
// docs/report.md describes the output, docs/report-json.md the JSON schema.

enum class Colour : uint8_t { automatic, always, never };  // automatic: only when a tty

struct TerminalOptions {
  Colour colour = Colour::automatic;
  int width = 100;  // columns; the timeline fits in it
};

// Prints the summary (requests, failures by class, per pod and phase), the failures per hole with
// their evidence, the recommendations and the per-second timeline. `tty` says whether `out` is a
// terminal (use is_terminal(stdout)); colour is used only when automatic and tty, or always.
void print_terminal(std::ostream& out, const record::RunRecord& run,
                    const diagnose::Diagnosis& diagnosis, const TerminalOptions& options, bool tty);

// Whether the C stdio stream is a terminal (isatty on its descriptor).
bool is_terminal(std::FILE* stream);

// report.json: verdict, load summary, scenario, pods with events, failed requests, holes.
void write_json(std::ostream& out, const record::RunRecord& run,
                const diagnose::Diagnosis& diagnosis);

// report.html: one self-contained page (inline CSS, inline SVG, one inline script, no network).
void write_html(std::ostream& out, const record::RunRecord& run,
                const diagnose::Diagnosis& diagnosis);

// A JUnit XML for CI systems: one testsuite, one testcase per hole (a failure, with the hole's
// evidence, when requests failed through it) and one for the run (a failure past
// `max_failures`; an error when a verify run ended before its rollout completed).
void write_junit(std::ostream& out, const record::RunRecord& run,
                 const diagnose::Diagnosis& diagnosis, uint64_t max_failures);

// Writes the folder's report.json and report.html. Throws Error naming the file it cannot write.
void write_reports(const record::RunFolder& folder, const record::RunRecord& run,
                   const diagnose::Diagnosis& diagnosis);

// What finish_run needs besides the record.
struct FinishOptions {
  diagnose::Options diagnose;
  TerminalOptions terminal;
  bool tty = false;  // whether `out` is a terminal: is_terminal(stdout) when it is std::cout
};

// The one way a run ends, whichever engine recorded it: diagnose the record, print the terminal
// report on `out`, then, given a folder, write report.json, report.html and run.json into it.
// Returns the diagnosis. Throws Error on malformed options or a file it cannot write.
diagnose::Diagnosis finish_run(const std::optional<record::RunFolder>& folder,
                               const record::RunRecord& run, std::ostream& out,
                               const FinishOptions& options);

}  // namespace zerodrop::report
