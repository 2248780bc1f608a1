#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "base/duration.h"
#include "verify/kubectl_proxy.h"
#include "verify/rbac.h"
#include "watch/verdict.h"

namespace zerodrop::watch {

// `zerodrop watch`: every rollout of the watched namespaces measured by the agents already in
// place (a DaemonSet of `zerodrop verify-agent --watcher URL`), each ending in a run folder, a
// Kubernetes Event on the workload and the /metrics counters.
struct Options {
  verify::KubectlOptions kubectl;
  std::vector<std::string> namespaces;      // empty: every namespace (narrowed by the selector)
  std::string namespace_selector;           // a label selector on namespaces ("" = all)
  std::string listen = ":8080";             // /metrics, /runs/, the agents' reports
  std::string out;                          // the run folders' root
  size_t keep_runs = 200;                   // run folders kept (the oldest go first)
  double rate = 5;                          // per agent per Service, requests/s
  double budget = 0;                        // all agents together, requests/s (0 = no limit)
  Duration tail = std::chrono::seconds(5);  // measured after the end (then 8 s to settle)
  Duration drain_limit = std::chrono::minutes(2);
  Duration agent_silence = std::chrono::seconds(5);  // then an agent is lost
  bool events = true;
  // --ingress-service NS/NAME[:PORT]: the ingress controller's Service; each probed Service an
  // Ingress routes to is probed a second time through it, with the route's host ("" = none).
  std::string ingress_service;
  // Leader election on a Lease (two replicas); off: this process leads.
  bool leader_elect = false;
  std::string lease_namespace;  // "" = $POD_NAMESPACE, else the first watched one, else default
  std::string lease_name = "zerodrop-watch";
  std::string identity;  // "" = $POD_NAME, else host-pid
  Duration lease_duration = std::chrono::seconds(15);
  const std::atomic<bool>* interrupted = nullptr;
};

// Checks the API and the rights (one line naming every missing permission or namespace), then
// runs until interrupted (0), the kubectl proxy dies (2) or the Lease is lost (1). Throws Error
// for bad input before anything runs.
int run(const Options& options, const Finish& finish);

}  // namespace zerodrop::watch
