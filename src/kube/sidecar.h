#pragma once

#include "base/duration.h"
#include "kube/kubelet.h"

namespace zerodrop::kube {

// A mesh's sidecar proxy (Envoy under Istio's pilot-agent) beside the app, and the order in which
// the kubelet stops them (docs/sim.md, "Sidecar meshes"). Shared arithmetic, in times from the
// moment the kubelet starts terminating the pod.

// How the proxy runs: none; `plain`, a regular container (the kubelet sends every container its
// stop at once, so the proxy's drain starts with the app's preStop); `native`, an init container
// with restartPolicy: Always (Kubernetes >= 1.29 by default): the kubelet stops it only after
// every regular container exited (KEP-753).
enum class SidecarOrder { none, plain, native };

struct SidecarProxy {
  SidecarOrder order = SidecarOrder::none;
  // pilot-agent at its stop signal: drains Envoy's inbound listeners (still accepting, closing
  // connections gracefully) for terminationDrainDuration (Istio's default 5 s), then ends Envoy;
  // with EXIT_ON_ZERO_ACTIVE_CONNECTIONS, it waits MINIMUM_DRAIN_DURATION (5 s) and then until
  // Envoy has no active connection, which cannot come before the app behind it is gone.
  Duration termination_drain = std::chrono::seconds(5);
  bool exit_on_zero_active_connections = false;
  Duration minimum_drain = std::chrono::seconds(5);
};

// When the proxy stops forwarding, for an app that exits at `app_exit` and a pod whose grace
// period is `grace` (no preStop hook on the proxy). plain: its stop signal at 0, its end at the
// drain's end, at the earliest at the app's exit with EXIT_ON_ZERO_ACTIVE_CONNECTIONS, killed at
// kill_delay(grace, 0). native: its stop signal at the app's exit, then the same drain, killed
// when the pod's grace period runs out. Duration::max() for none.
constexpr Duration sidecar_exit(const SidecarProxy& proxy, Duration app_exit, Duration grace) {
  if (proxy.order == SidecarOrder::none) {
    return Duration::max();
  }
  Duration term = proxy.order == SidecarOrder::plain ? Duration(0) : app_exit;
  Duration drained = term + proxy.termination_drain;
  if (proxy.exit_on_zero_active_connections) {
    Duration minimum = term + proxy.minimum_drain;
    drained = minimum > app_exit ? minimum : app_exit;
  }
  Duration kill = proxy.order == SidecarOrder::plain ? kill_delay(grace, Duration(0))
                  : grace > app_exit                 ? grace
                                                     : app_exit;
  return drained < kill ? drained : kill;
}

}  // namespace zerodrop::kube
