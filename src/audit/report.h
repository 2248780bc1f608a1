#pragma once
// What an audit produces: the audited workloads with their findings, the summary, and the Sink
// that receives them as they happen. The audit (audit.h) fills them; the renderers (output.h)
// read them; neither needs the other's header for them.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "audit/cluster.h"
#include "audit/finding.h"

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

}  // namespace zerodrop::audit
