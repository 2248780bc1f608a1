#include "audit/report.h"

#include "record/hole.h"

namespace zerodrop::audit {

void Summary::count(const Finding& f) {
  ++by_severity[static_cast<int>(f.severity)];
  if (f.hole && f.severity != Severity::info) {
    ++holes[std::string(record::to_string(*f.hole))];
  }
}

std::vector<Finding> Report::all_findings() const {
  std::vector<Finding> out = problems;
  for (const AuditedWorkload& w : workloads) {
    out.insert(out.end(), w.findings.begin(), w.findings.end());
  }
  return out;
}

Summary Report::summary() const {
  Summary s;
  s.files = files;
  s.objects = objects;
  s.workloads = static_cast<int64_t>(workloads.size());
  s.skipped = skipped;
  each_finding([&](const Finding& f) { s.count(f); });
  return s;
}

void Report::replay(Sink& sink) const {
  for (const Finding& f : problems) {
    sink.problem(f);
  }
  for (const AuditedWorkload& w : workloads) {
    sink.workload(w);
  }
  sink.finish(summary());
}

}  // namespace zerodrop::audit
