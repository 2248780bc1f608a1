#pragma once

#include <cstdio>
#include <iosfwd>
#include <string>

#include "diagnose/diagnose.h"
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

// Writes DIR/report.json and DIR/report.html. Throws Error naming the file it cannot write.
void write_reports(const std::string& dir, const record::RunRecord& run,
                   const diagnose::Diagnosis& diagnosis);

// run.json: the engine, the scenario and the end time, so `zerodrop report DIR` can re-render.
// Engines write it next to events.ndjson and requests.ndjson. Throws Error if it cannot.
void write_run_json(const std::string& dir, const record::RunRecord& run);

// Reads a run folder back: events.ndjson, requests.ndjson (either may be absent, not both) and
// run.json (optional). Throws Error naming the file and line on malformed content.
record::RunRecord read_run(const std::string& dir);

}  // namespace zerodrop::report
