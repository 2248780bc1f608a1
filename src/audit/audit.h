#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
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

// What the summary line and the exit code need: counts, no findings kept.
struct Summary {
  int64_t files = 0;
  int64_t objects = 0;
  int64_t workloads = 0;
  int64_t skipped = 0;                   // Helm test hooks
  int64_t by_severity[3] = {0, 0, 0};    // indexed by Severity
  std::map<std::string, int64_t> holes;  // per hole: findings above info

  void count(const Finding& f);
};

// Receives an audit as it happens, so that nothing but one file's objects is held at a time.
// Calls: any number of problem() and workload() in input order, then finish() once.
class Sink {
public:
  virtual ~Sink() = default;
  // A finding about a file rather than a workload: input that could not be read, or a statement
  // of a SQL migration.
  virtual void problem(const Finding& finding) = 0;
  virtual void workload(const AuditedWorkload& workload) = 0;  // findings may be empty
  virtual void finish(const Summary& summary) = 0;
};

// Everything one audit found, in memory (for tests and small inputs; `run` streams instead).
struct Report {
  std::vector<Finding> problems;  // input that could not be read (invalid-manifest)
  std::vector<AuditedWorkload> workloads;
  int64_t files = 0;
  int64_t objects = 0;
  int64_t skipped = 0;                // Helm test hooks
  std::vector<kube::Object> storage;  // the workloads the views point into
  std::unique_ptr<Cluster> cluster;   // the routing objects they point into

  std::vector<Finding> all_findings() const;  // a copy, for tests and small reports
  Summary summary() const;
  // Feeds the whole report to `sink`: problems, workloads, finish.
  void replay(Sink& sink) const;

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

// Loads options.paths (files, folders, "-") and audits them in memory. Throws Error for a missing
// path.
Report audit_paths(const Options& options);

// Audits options.paths in two passes with memory bounded by the largest file (plus a compact
// copy of every Service, PDB, HPA and Ingress): the first reads only the documents that may hold
// routing objects, the second reads one file at a time and hands each workload to `sink`. Stdin
// ("-") is read once and kept. Returns what sink.finish() was given. Throws Error for a missing
// path.
Summary audit_stream(const Options& options, Sink& sink);

// True when a finding is at or above options.fail_on.
bool failed(const Summary& summary, const Options& options);

// The process exit code for a report: 1 if a finding is at or above options.fail_on, else 0.
int exit_code(const Report& report, const Options& options);

// `zerodrop audit`: audit, print findings (or --fix patches) to `out`, the summary of --fix to
// `err`; returns the exit code.
int run(const Options& options, std::ostream& out, std::ostream& err);

}  // namespace zerodrop::audit
