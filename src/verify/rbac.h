#pragma once

#include <string>
#include <vector>

#include "verify/api_client.h"

namespace zerodrop::verify {

// One thing verify asks the API server to do: a verb on a resource of an API group.
struct Permission {
  std::string group;  // "" = core
  std::string resource;
  std::string verb;

  std::string text() const;  // "deployments.apps patch", "pods watch"
};

enum class Action { restart, set_image, watch };

// --action set-image CONTAINER=IMAGE.
struct SetImage {
  std::string container;
  std::string image;
};

// Where verify's load runs: from this machine only (--url), or also from agents in the
// cluster: one per node (per-node) or a fixed number.
enum class AgentMode { none, per_node, count };

// What verify needs in the target namespace for `action` (patch unless it watches) and its agents
// (their Job, and pods/log to follow them). Listing nodes (per-node) is asked, not required.
std::vector<Permission> needed_permissions(Action action, AgentMode agents = AgentMode::none);

// The Role (and a RoleBinding to fill in) a user needs, as YAML for kubectl apply; with agents
// also what --cleanup lists (configmaps and jobs).
std::string role_yaml(const std::string& namespace_name, Action action,
                      AgentMode agents = AgentMode::none);

// Asks one SelfSubjectAccessReview per permission and returns those not allowed. Throws Error
// when a review itself fails.
std::vector<Permission> missing_permissions(const ApiClient& client,
                                            const std::string& namespace_name,
                                            const std::vector<Permission>& needed);

}  // namespace zerodrop::verify
