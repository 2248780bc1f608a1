#pragma once

#include <iosfwd>
#include <vector>

#include "audit/cluster.h"
#include "audit/finding.h"
#include "audit/options.h"

namespace zerodrop::audit {

// One audited workload with its findings (after ignores), in input order.
struct AuditedWorkload {
  WorkloadView view;
  std::vector<Finding> findings;
};

// Everything one audit found.
struct Report {
  std::vector<Finding> problems;  // input that could not be read (invalid-manifest)
  std::vector<AuditedWorkload> workloads;
  int64_t files = 0;
  int64_t objects = 0;
  int64_t skipped = 0;                // Helm test hooks
  std::vector<kube::Object> storage;  // the objects the views point into

  std::vector<Finding> all_findings() const;  // a copy, for tests and small reports

  // Calls fn(finding) for every finding in output order, without copying.
  template <typename Fn>
  void each_finding(Fn fn) const {
    for (const Finding& f : problems) {
      fn(f);
    }
    for (const AuditedWorkload& w : workloads) {
      for (const Finding& f : w.findings) {
        fn(f);
      }
    }
  }
};

// Runs every rule over loaded objects; `problems` become invalid-manifest findings.
Report audit_objects(std::vector<kube::Object> objects,
                     const std::vector<kube::LoadProblem>& problems, const Options& options);

// Loads options.paths (files, folders, "-") and audits them. Throws Error for a missing path.
Report audit_paths(const Options& options);

// The process exit code for a report: 1 if a finding is at or above options.fail_on, else 0.
int exit_code(const Report& report, const Options& options);

// `zerodrop audit`: audit, print findings (or --fix patches) to `out`, the summary of --fix to
// `err`; returns the exit code.
int run(const Options& options, std::ostream& out, std::ostream& err);

}  // namespace zerodrop::audit
