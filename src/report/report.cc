#include "report/report.h"

#include <unistd.h>

#include <fstream>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "record/hole.h"

namespace zerodrop::report {
namespace {

using nlohmann::json;

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
  return out;
}

}  // namespace

// Minimal first version: the rendering follows.
void print_terminal(std::ostream& out, const record::RunRecord& /*run*/,
                    const diagnose::Diagnosis& d, const TerminalOptions& /*options*/,
                    bool /*tty*/) {
  out << fmt::format("requests {}  ok {}  failed {}\n", d.totals.requests, d.totals.ok,
                     d.totals.failed);
  out << (d.verdict == diagnose::Verdict::pass ? "PASS" : "FAIL") << ": " << d.conclusion << '\n';
}

bool is_terminal(std::FILE* stream) {
  return ::isatty(::fileno(stream)) == 1;
}

void write_json(std::ostream& out, const record::RunRecord& run, const diagnose::Diagnosis& d) {
  json j = {{"verdict", d.verdict == diagnose::Verdict::pass ? "pass" : "fail"},
            {"engine", run.engine},
            {"holes", json::array()}};
  out << j.dump(2) << '\n';
}

void write_html(std::ostream& out, const record::RunRecord& /*run*/, const diagnose::Diagnosis& d) {
  out << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>zerodrop report</title>"
      << "</head><body><p>" << d.conclusion << "</p></body></html>\n";
}

void write_reports(const std::string& dir, const record::RunRecord& run,
                   const diagnose::Diagnosis& diagnosis) {
  std::ofstream json_out = open_for_writing(dir + "/report.json");
  write_json(json_out, run, diagnosis);
  std::ofstream html_out = open_for_writing(dir + "/report.html");
  write_html(html_out, run, diagnosis);
}

void write_run_json(const std::string& dir, const record::RunRecord& run) {
  std::ofstream out = open_for_writing(dir + "/run.json");
  json j = {{"engine", run.engine}, {"scenario", run.scenario}, {"end_us", run.end.count()}};
  out << j.dump(2) << '\n';
}

record::RunRecord read_run(const std::string& dir) {
  record::RunRecord run;
  run.engine = "lab";
  run.events = record::read_events(dir + "/events.ndjson");
  run.requests = record::read_requests(dir + "/requests.ndjson");
  return run;
}

}  // namespace zerodrop::report
