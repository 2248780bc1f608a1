// A JUnit XML for CI systems: one testsuite, a testcase per hole, one for the run.
#include <chrono>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "report/markup.h"
#include "report/report.h"

namespace zerodrop::report {
namespace {

const diagnose::HoleSummary* summary_of(const diagnose::Diagnosis& d, record::Hole hole) {
  for (const diagnose::HoleSummary& h : d.holes) {
    if (h.hole == hole && h.requests > 0) {
      return &h;
    }
  }
  return nullptr;
}

bool rollout_finished(const record::RunRecord& run) {
  for (const record::Event& e : run.events) {
    if (e.kind == record::EventKind::rollout_finished) {
      return true;
    }
  }
  return false;
}

std::string hole_case(const diagnose::Diagnosis& d, const record::HoleInfo& info) {
  std::string head =
      fmt::format(R"(  <testcase classname="zerodrop.holes" name="{}")", escape(info.id));
  const diagnose::HoleSummary* h = summary_of(d, info.hole);
  if (h == nullptr) {
    return head + "/>\n";
  }
  std::string message =
      fmt::format("{} request(s) failed through {}: {}", h->requests, info.id, info.meaning);
  return fmt::format("{}>\n    <failure type=\"{}\" message=\"{}\">{}</failure>\n  </testcase>\n",
                     head, escape(info.id), escape(message), escape(h->evidence));
}

std::string run_case(const record::RunRecord& run, const diagnose::Diagnosis& d,
                     uint64_t max_failures) {
  double seconds = std::chrono::duration<double>(run.end).count();
  std::string head =
      fmt::format(R"(  <testcase classname="zerodrop.run" name="{} run" time="{:.3f}")",
                  escape(run.engine), seconds);
  if (!rollout_finished(run) && (run.engine == "verify" || run.engine == "watch")) {
    return fmt::format(
        "{}>\n    <error type=\"inconclusive\" message=\"the rollout did not complete: {} of {} "
        "requests failed so far\"/>\n  </testcase>\n",
        head, d.totals.failed, d.totals.requests);
  }
  if (d.totals.failed <= max_failures) {
    return head + "/>\n";
  }
  return fmt::format(
      "{}>\n    <failure type=\"requests-failed\" message=\"{} of {} requests failed (allowed: "
      "{})\">{}</failure>\n  </testcase>\n",
      head, d.totals.failed, d.totals.requests, max_failures, escape(d.conclusion));
}

}  // namespace

void write_junit(std::ostream& out, const record::RunRecord& run,
                 const diagnose::Diagnosis& diagnosis, uint64_t max_failures) {
  std::string cases;
  int failures = 0;
  for (const record::HoleInfo& info : record::kHoles) {
    failures += summary_of(diagnosis, info.hole) != nullptr ? 1 : 0;
    cases += hole_case(diagnosis, info);
  }
  std::string run_text = run_case(run, diagnosis, max_failures);
  bool inconclusive = run_text.find("<error") != std::string::npos;
  failures += run_text.find("<failure") != std::string::npos ? 1 : 0;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << fmt::format(
             "<testsuite name=\"zerodrop {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
             "time=\"{:.3f}\">\n",
             escape(run.engine), std::size(record::kHoles) + 1, failures, inconclusive ? 1 : 0,
             std::chrono::duration<double>(run.end).count())
      << cases << run_text << "</testsuite>\n";
}

}  // namespace zerodrop::report
