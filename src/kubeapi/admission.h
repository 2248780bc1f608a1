#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kubeapi/discovery.h"

namespace zerodrop::kubeapi {

// What the API server does to an object a client writes, before it is stored: pure functions
// over JSON, shared by create, replace and patch.

// metadata.name, or generateName followed by five random characters of Kubernetes' alphabet
// (as the API server names an object that has only generateName). Throws Error naming the
// field when there is neither, or the name is not a DNS subdomain (lower-case alphanumerics,
// '-' and '.', at most 253 characters, starting and ending alphanumeric).
std::string admitted_name(const nlohmann::json& metadata, const std::string& kind);

// A random RFC 4122 version 4 uid: every created object has its own, so an object deleted and
// created again under its name is another owner to the garbage collector.
std::string random_uid();

// Checks the body a client sent for `type` (an object whose apiVersion and kind, when given,
// are the resource's and whose metadata is an object). Throws Error saying what is wrong.
void check_body(const nlohmann::json& body, const ResourceType& type);

// The two versions of an Event: core/v1 (what the store keeps) from events.k8s.io/v1 and back,
// field for field as the API server converts them (note <-> message, regarding <->
// involvedObject, reportingController <-> reportingComponent, deprecated* <-> source,
// firstTimestamp, lastTimestamp, count).
nlohmann::json event_to_core(const nlohmann::json& v1);
nlohmann::json event_to_v1(const nlohmann::json& core);

// A Deployment a client creates, which the lab stores but does not run (it runs only its own
// workloads): checked for a spec with a template and a selector, generation 1, status observed.
// Throws Error naming the missing field.
nlohmann::json admit_deployment(nlohmann::json deployment);

// Whether `written` (a PUT body or a patched object) may replace `stored`: true when it names
// no metadata.resourceVersion or the stored one (optimistic concurrency, as the API server).
bool fresh(const nlohmann::json& written, const nlohmann::json& stored);

// The 409 Conflict message for a stale write of `resource` (its plural and group) `name`.
std::string conflict_message(const ResourceType& type, const std::string& name);

}  // namespace zerodrop::kubeapi
