#pragma once
// The audit rules: free functions from one workload's view to its findings.

#include <vector>

#include "audit/cluster.h"
#include "audit/finding.h"
#include "audit/options.h"

namespace zerodrop::audit {

using Findings = std::vector<Finding>;

// deregistration-race and grace-overrun: preStop presence, program, delay; grace arithmetic.
Findings check_termination(const WorkloadView& view, const Options& options);

// readiness-lies and liveness-kills-drain: missing or TCP readiness, shared handlers, liveness.
Findings check_probes(const WorkloadView& view, const Options& options);

// capacity-dip: replicas (HPA-aware), maxUnavailable against headroom, PDBs.
Findings check_capacity(const WorkloadView& view, const Options& options);

// The drain time of a workload: its zerodrop.dev/drain-seconds annotation (workload, then pod
// template), else --drain-seconds. `source` says which. Throws Error for an invalid annotation.
struct Drain {
  double seconds = 0;
  std::string source;
};

Drain drain_of(const kube::Workload& workload, const Options& options);

inline constexpr const char* kDrainAnnotation = "zerodrop.dev/drain-seconds";

// The preStop delay a fix sets: the propagation time, rounded up to whole seconds.
int64_t wanted_pre_stop_seconds(const Options& options);

// The grace period a fix sets: preStop + drain + margin, rounded up to whole seconds.
int64_t wanted_grace_seconds(double pre_stop, double drain, const Options& options);

// The shortest stall (seconds) after which a liveness probe kills: (failureThreshold − 1) ×
// periodSeconds + timeoutSeconds.
int64_t liveness_kill_window(const kube::Probe& probe);
inline constexpr int64_t kLivenessMinWindowSeconds = 10;

// A finding of `rule` about the workload (and container, if given) at `mark`, with the
// catalogue's hole and severity.
Finding make_finding(std::string_view rule, const kube::Workload& w, const kube::Container* c,
                     kube::Mark mark, std::string message, std::string fix);

}  // namespace zerodrop::audit
