#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "record/scenario.h"
#include "verify/api_client.h"
#include "verify/observer.h"
#include "verify/rbac.h"

namespace zerodrop::verify {

// What verify checks before it changes anything.
struct PreflightOptions {
  std::string namespace_name;
  std::string deployment;
  std::string service;  // "" = the one Service selecting the Deployment's pods
  Action action = Action::restart;
  AgentMode agents = AgentMode::none;
};

// What the preflight learned: the live objects and what the run needs of them.
struct Target {
  std::string server_version;  // "v1.30.2"
  std::string k8s_version;     // "1.30": what the fixes target
  nlohmann::json deployment;
  std::string service;
  std::string pod_selector;  // the Deployment's selector in labelSelector query syntax
  PodTemplate pod_template;
  record::Scenario scenario;
  std::vector<std::string> warnings;  // the audit's findings on the live objects, one a line
};

// The API server answers; discovery has discovery.k8s.io/v1; every permission is there (one
// Error listing all that are missing); the Deployment exists; one Service selects its pods (or
// the named one does). Throws Error naming what is wrong.
Target preflight(const ApiClient& client, const PreflightOptions& options);

// The serving container's termination settings (preStop delay, grace, strategy) into
// target.pod_template and target.scenario, read with the audit's own model; a Deployment that
// model refuses is read for its first container's preStop only. Throws Error without containers.
void read_template(const nlohmann::json& deployment, Target& target);

// A LabelSelector object (matchLabels, matchExpressions) in labelSelector query syntax:
// "app=web,tier in (a,b),!canary". Throws Error for an operator it does not know.
std::string selector_query(const nlohmann::json& selector);

// The audit's findings on a live Deployment and its Service (JSON is YAML), as warning lines.
std::vector<std::string> audit_live(const nlohmann::json& deployment,
                                    const nlohmann::json& service);

}  // namespace zerodrop::verify
