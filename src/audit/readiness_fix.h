#pragma once
// The readiness probe a fix proposes for a container: only what the container's own manifest
// proves it answers (its startup or liveness handler; a TCP connect for a datastore). Anything
// else is advice with the unknown part marked, never a patch that would apply blindly.

#include <optional>
#include <string>

#include "audit/cluster.h"

namespace zerodrop::audit {

struct ReadinessProposal {
  std::optional<kube::Handler> handler;  // set when proven: the fix patches it
  std::string text;                      // the probe as one line of YAML flow (placeholders <…>)
  std::string reason;                    // why this probe, or what is left to the user
};

// For container `index` of the view's workload. `replacing` is the TCP readiness handler that
// readiness-tcp-on-http replaces (then only an HTTP handler on its port is proposed).
ReadinessProposal propose_readiness(const WorkloadView& view, size_t index,
                                    const kube::Handler* replacing = nullptr);

// A handler as YAML flow: "{httpGet: {path: /healthz, port: http, scheme: HTTPS}}".
std::string handler_flow(const kube::Handler& handler);

}  // namespace zerodrop::audit
