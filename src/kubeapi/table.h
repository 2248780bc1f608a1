#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zerodrop::kubeapi {

// Whether the client asked for server-side printing (kubectl get: `Accept: …;as=Table;…`).
bool wants_table(const std::string& accept);

enum class Headers { include, omit };

// A meta.k8s.io/v1 Table of `objects` of `kind` with kubectl's columns for Pods (Ready, Status
// with "Terminating", Restarts, Age, and IP/Node for -o wide), Deployments and EndpointSlices;
// Name and Age for other kinds. Watch events after the first omit the column definitions.
nlohmann::json table_of(const std::string& kind, const std::vector<nlohmann::json>& objects,
                        uint64_t rv, Headers headers = Headers::include);

}  // namespace zerodrop::kubeapi
