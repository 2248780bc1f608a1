#include "audit/audit.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "audit/output.h"
#include "audit/rule.h"
#include "audit/rules.h"
#include "base/error.h"
#include "base/exit_code.h"

namespace zerodrop::audit {
namespace {

bool is_helm_test_hook(const kube::Workload& w) {
  auto it = w.meta.annotations.find("helm.sh/hook");
  return it != w.meta.annotations.end() && it->second.find("test") != std::string::npos;
}

Finding problem_finding(const kube::LoadProblem& p) {
  Finding f;
  f.rule = rule_id::kInvalidManifest;
  f.severity = Severity::error;
  f.file = p.file;
  f.mark = p.mark;
  f.message = p.message;
  f.fix = "fix the document, or keep files that are not Kubernetes manifests out of the paths";
  return f;
}

Findings run_rules(const WorkloadView& view, const Options& options) {
  const kube::Workload& w = *view.workload;
  if (w.runs_to_completion()) {
    return {};  // Jobs and CronJobs take no Service traffic and are not rolled
  }
  Findings out = check_termination(view, options);
  Findings probes = check_probes(view, options);
  out.insert(out.end(), probes.begin(), probes.end());
  if (!view.takes_traffic()) {
    out.push_back(make_finding(
        rule_id::kNoTraffic, w, nullptr, w.meta.marks.self,
        fmt::format("no Service selects its pods: preStop, readiness and capacity rules "
                    "skipped"),
        "nothing to do if it takes no traffic; otherwise check the Service's selector"));
    return out;
  }
  Findings capacity = check_capacity(view, options);
  out.insert(out.end(), capacity.begin(), capacity.end());
  return out;
}

// One workload's findings, with a value it cannot hold (e.g. maxUnavailable 150%) reported.
Findings audit_workload(const WorkloadView& view, const Options& options) {
  const kube::Workload& w = *view.workload;
  Findings all;
  try {
    all = run_rules(view, options);
  } catch (const Error& e) {
    all.push_back(make_finding(rule_id::kInvalidManifest, w, nullptr, w.meta.marks.self, e.what(),
                               "fix the value"));
  }
  std::erase_if(all, [&](const Finding& f) {
    return is_ignored(f, options.ignores, w.meta.annotations, w.pod_annotations);
  });
  return all;
}

}  // namespace

std::vector<Finding> Report::all_findings() const {
  std::vector<Finding> out = problems;
  for (const AuditedWorkload& w : workloads) {
    out.insert(out.end(), w.findings.begin(), w.findings.end());
  }
  return out;
}

Report audit_objects(std::vector<kube::Object> objects,
                     const std::vector<kube::LoadProblem>& problems, const Options& options) {
  Report report;
  report.objects = static_cast<int64_t>(objects.size());
  report.storage = std::move(objects);
  for (const kube::LoadProblem& p : problems) {
    report.problems.push_back(problem_finding(p));
  }
  Cluster cluster(report.storage);
  for (WorkloadView& view : cluster.views()) {
    if (is_helm_test_hook(*view.workload)) {
      ++report.skipped;
      continue;
    }
    Findings findings = audit_workload(view, options);
    report.workloads.push_back(AuditedWorkload{std::move(view), std::move(findings)});
  }
  return report;
}

Report audit_paths(const Options& options) {
  std::vector<std::string> files = kube::expand_paths(options.paths);
  std::vector<kube::Object> objects;
  std::vector<kube::LoadProblem> problems;
  for (const std::string& file : files) {
    kube::Loaded loaded = kube::load_file(file, options.limits);
    std::move(loaded.objects.begin(), loaded.objects.end(), std::back_inserter(objects));
    problems.insert(problems.end(), loaded.problems.begin(), loaded.problems.end());
  }
  Report report = audit_objects(std::move(objects), problems, options);
  report.files = static_cast<int64_t>(files.size());
  return report;
}

int exit_code(const Report& report, const Options& options) {
  bool failed = false;
  report.each_finding([&](const Finding& f) { failed = failed || f.severity >= options.fail_on; });
  return to_int(failed ? ExitCode::failed : ExitCode::ok);
}

int run(const Options& options, std::ostream& out, std::ostream& err) {
  Report report = audit_paths(options);
  if (options.fix == FixPatches::on) {
    write_patches(report, options, out);
    err << summary_line(report) << '\n';
    return exit_code(report, options);
  }
  switch (options.format) {
    case Format::text:
      write_text(report, out);
      break;
    case Format::json:
      write_json(report, out);
      break;
    case Format::sarif:
      write_sarif(report, out);
      break;
    case Format::github:
      write_github(report, out);
      break;
  }
  return exit_code(report, options);
}

}  // namespace zerodrop::audit
