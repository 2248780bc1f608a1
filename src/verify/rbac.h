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

enum class Action { restart, watch };

// What verify needs in the target namespace for `action` (patch only to restart).
std::vector<Permission> needed_permissions(Action action);

// The Role (and a RoleBinding to fill in) a user needs, as YAML for kubectl apply.
std::string role_yaml(const std::string& namespace_name, Action action);

// Asks one SelfSubjectAccessReview per permission and returns those not allowed. Throws Error
// when a review itself fails.
std::vector<Permission> missing_permissions(const ApiClient& client,
                                            const std::string& namespace_name,
                                            const std::vector<Permission>& needed);

}  // namespace zerodrop::verify
