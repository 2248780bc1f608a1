#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "load/load.h"
#include "record/run_folder.h"
#include "record/run_record.h"
#include "verify/agents.h"
#include "verify/kubectl_proxy.h"
#include "verify/rbac.h"

namespace zerodrop::verify {

// `zerodrop verify deploy/NAME`: a rollout on a real cluster, watched through the API server
// while load runs from agents inside the cluster (an Indexed Job, one pod per node, loading the
// Service through each node's routing) and from this machine through --url (an Ingress, a load
// balancer, a port-forward).
struct Options {
  KubectlOptions kubectl;
  std::string namespace_name;  // "" = the context's namespace, else "default"
  std::string deployment;
  std::string service;  // "" = the one Service selecting the pods
  Action action = Action::restart;
  SetImage set_image;  // Action::set_image
  std::vector<std::string> urls;
  load::Options load;  // rate, keep-alive, headers, timeouts; targets and duration are set here
  AgentMode agents = AgentMode::none;
  int agent_count = 0;           // AgentMode::count
  int max_nodes = 25;            // AgentMode::per_node: at most this many agents
  std::string agent_image;       // the image holding /zerodrop
  std::string agent_path = "/";  // the path the agents request
  AgentRecords agent_records = AgentRecords::failed;  // what the agents' streams carry
  Duration agent_ready_timeout = std::chrono::seconds(60);
  bool keep = false;     // leave the anchor and the agents' Job (its pods run on to their deadline)
  bool dry_run = false;  // print the plan and the objects after the preflight; create nothing
  Duration warmup = std::chrono::seconds(5);
  Duration tail = std::chrono::seconds(5);
  Duration rollout_timeout = std::chrono::minutes(10);
  std::string out;  // the run folder; "" = a new temporary one
  const std::atomic<bool>* interrupted = nullptr;
};

// How the run ends, handed in by the cli so the engine links neither diagnose nor report: it
// diagnoses and renders the record and returns the exit code.
using Finish = std::function<int(const record::RunFolder&, const record::RunRecord&)>;

// Preflight, then the run; returns the exit code (Finish's, 2 for a rollout that did not complete
// in time, 130 when interrupted; the record is written in every case). Throws Error for a failed
// preflight: nothing has been changed then.
int run(const Options& options, const Finish& finish);

// `zerodrop verify --cleanup`: removes the objects of crashed runs in the namespace (see
// cleanup()) and says each on stdout, or that there was none. Returns 0; throws Error.
int run_cleanup(const KubectlOptions& kubectl, const std::string& namespace_name);

// The namespace of the kubeconfig's current (or given) context, "default" when it names none.
std::string context_namespace(const KubectlOptions& options);

// Parses "deploy/NAME", "deployment/NAME", "deployments.apps/NAME" or "NAME". Throws Error.
std::string deployment_name(const std::string& text);

}  // namespace zerodrop::verify
