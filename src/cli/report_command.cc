// zerodrop report RUN_DIR: reads a past run folder, diagnoses it again and re-renders it.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/parse.h"
#include "cli/command.h"
#include "diagnose/diagnose.h"
#include "report/report.h"

namespace zerodrop::cli {
namespace report_command {
namespace {

struct Flags {
  std::string dir;
  std::string out;
  std::string k8s_version = "1.30";
  std::string margin = "1s";
  std::string container = "app";
  std::string colour = "auto";
  std::string width = "100";
  bool json = false;
};

constexpr const char* kFooter = R"(
Reads RUN_DIR/events.ndjson, RUN_DIR/requests.ndjson (or buckets.ndjson) and RUN_DIR/run.json
(written by lab, sim --out, verify and watch), names the hole behind every failed request,
writes report.json and report.html (into --out, default RUN_DIR) and prints the diagnosis:
failures per hole with their evidence, the fixes with numbers computed from the run, and a
per-second timeline.

Examples:
  zerodrop report /tmp/zerodrop-lab.x1Yz
  zerodrop report run/ --k8s-version 1.28 --margin 2s     # exec preStop, 2 s of margin
  zerodrop report run/ --json | jq '.holes[].id'

Exit codes: 0 no request failed, 1 requests failed, 2 usage or input error.
See docs/report.md and docs/report-json.md.)";

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("RUN_DIR", f.dir,
                 "run folder of a past run: lab, sim --out, verify or one of watch's")
      ->required();
  app.add_option("--out", f.out, "write report.json and report.html here (default RUN_DIR)");
  app.add_option("--k8s-version", f.k8s_version,
                 "Kubernetes version the fixes target; below 1.30 preStop is an exec hook")
      ->capture_default_str();
  app.add_option("--margin", f.margin, "safety margin added to measured propagation and drain")
      ->capture_default_str();
  app.add_option("--container", f.container, "container name in the manifest snippets")
      ->capture_default_str();
  app.add_option("--color", f.colour, "auto (only on a terminal), always or never")
      ->capture_default_str();
  app.add_option("--width", f.width, "terminal columns")->capture_default_str();
  app.add_flag("--json", f.json, "print report.json on stdout instead of the text report");
  app.footer(kFooter);
}

report::Colour colour_of(const std::string& text) {
  if (text == "auto") {
    return report::Colour::automatic;
  }
  if (text == "always") {
    return report::Colour::always;
  }
  if (text == "never") {
    return report::Colour::never;
  }
  throw Error(fmt::format("--color: expected auto, always or never, got '{}'", text));
}

diagnose::Options options_of(const Flags& f) {
  diagnose::Options o;
  o.k8s_version = f.k8s_version;
  o.margin =
      std::chrono::duration_cast<std::chrono::milliseconds>(parse_duration(f.margin, "--margin"));
  o.container = f.container;
  return o;
}

int run_report(const Flags& f) {
  report::TerminalOptions terminal{colour_of(f.colour),
                                   static_cast<int>(parse_integer(f.width, "--width", 60, 1000))};
  diagnose::Options options = options_of(f);
  record::RunRecord run = record::RunFolder(f.dir).read();
  diagnose::Diagnosis diagnosis = diagnose::diagnose(run, options);
  report::write_reports(record::RunFolder(f.out.empty() ? f.dir : f.out), run, diagnosis);
  if (f.json) {
    report::write_json(std::cout, run, diagnosis);
  } else {
    report::print_terminal(std::cout, run, diagnosis, terminal, report::is_terminal(stdout));
  }
  std::cout.flush();
  return to_int(diagnosis.verdict == diagnose::Verdict::pass ? ExitCode::ok : ExitCode::failed);
}

}  // namespace
}  // namespace report_command

Runner setup_report(CLI::App& app) {
  using namespace report_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_report(*flags);
  };
}

}  // namespace zerodrop::cli
