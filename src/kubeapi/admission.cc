#include "kubeapi/admission.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/objects.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

std::mt19937_64& generator() {
  thread_local std::mt19937_64 g{std::random_device{}()};
  return g;
}

bool dns_subdomain(const std::string& name) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > 253 || !alnum(name.front()) || !alnum(name.back())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// Copies `from[a]` to `to[b]` when present.
void copy_field(const json& from, const char* a, json& to, const char* b) {
  if (from.contains(a)) {
    to[b] = from[a];
  }
}

}  // namespace

std::string admitted_name(const json& metadata, const std::string& kind) {
  std::string name = metadata.value("name", "");
  if (name.empty()) {
    std::string prefix = metadata.value("generateName", "");
    if (prefix.empty()) {
      throw Error(fmt::format("{}: metadata.name or metadata.generateName is required", kind));
    }
    static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
    std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
    name = prefix;
    for (int i = 0; i < 5; ++i) {
      name += kAlphabet[pick(generator())];
    }
  }
  if (!dns_subdomain(name)) {
    throw Error(fmt::format(
        "{} \"{}\" is invalid: metadata.name: a lowercase RFC 1123 subdomain must consist of "
        "lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character",
        kind, name));
  }
  return name;
}

std::string random_uid() {
  uint64_t a = generator()();
  uint64_t b = generator()();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xfff, 0x8000 | ((b >> 48) & 0x3fff), b & 0xffffffffffffull);
}

void check_body(const json& body, const ResourceType& type) {
  if (!body.is_object()) {
    throw Error(fmt::format("{}: the body is not a JSON object", type.kind));
  }
  std::string kind = body.contains("kind") && body["kind"].is_string() ? body["kind"] : "";
  std::string api_version =
      body.contains("apiVersion") && body["apiVersion"].is_string() ? body["apiVersion"] : "";
  if ((!kind.empty() && kind != type.kind)
      || (!api_version.empty() && api_version != type.api_version())) {
    throw Error(fmt::format("the object of kind \"{}\" (apiVersion \"{}\") is not a {} of {}",
                            kind, api_version, type.kind, type.api_version()));
  }
  if (!body.contains("metadata") || !body["metadata"].is_object()) {
    throw Error(fmt::format("{}: metadata must be an object", type.kind));
  }
}

json event_to_core(const json& v1) {
  json e = {{"apiVersion", "v1"}, {"kind", "Event"}, {"metadata", v1["metadata"]}};
  copy_field(v1, "regarding", e, "involvedObject");
  copy_field(v1, "related", e, "related");
  copy_field(v1, "reason", e, "reason");
  copy_field(v1, "note", e, "message");
  copy_field(v1, "type", e, "type");
  copy_field(v1, "action", e, "action");
  copy_field(v1, "eventTime", e, "eventTime");
  copy_field(v1, "series", e, "series");
  copy_field(v1, "reportingController", e, "reportingComponent");
  copy_field(v1, "reportingInstance", e, "reportingInstance");
  copy_field(v1, "deprecatedSource", e, "source");
  copy_field(v1, "deprecatedFirstTimestamp", e, "firstTimestamp");
  copy_field(v1, "deprecatedLastTimestamp", e, "lastTimestamp");
  copy_field(v1, "deprecatedCount", e, "count");
  return e;
}

json event_to_v1(const json& core) {
  json e = {{"apiVersion", "events.k8s.io/v1"}, {"kind", "Event"}, {"metadata", core["metadata"]}};
  e["eventTime"] = core.value("eventTime", json());
  copy_field(core, "involvedObject", e, "regarding");
  copy_field(core, "related", e, "related");
  copy_field(core, "reason", e, "reason");
  copy_field(core, "message", e, "note");
  copy_field(core, "type", e, "type");
  copy_field(core, "action", e, "action");
  copy_field(core, "series", e, "series");
  copy_field(core, "reportingComponent", e, "reportingController");
  copy_field(core, "reportingInstance", e, "reportingInstance");
  copy_field(core, "source", e, "deprecatedSource");
  copy_field(core, "firstTimestamp", e, "deprecatedFirstTimestamp");
  copy_field(core, "lastTimestamp", e, "deprecatedLastTimestamp");
  copy_field(core, "count", e, "deprecatedCount");
  return e;
}

json admit_deployment(json d) {
  std::string what = "deployments.apps \"" + d["metadata"].value("name", "") + "\"";
  json& spec = d["spec"];
  if (!spec.is_object() || !spec["template"].is_object() || !spec["selector"].is_object()) {
    throw Error(what + ": spec.selector and spec.template: Required value");
  }
  d["metadata"]["generation"] = 1;
  d["metadata"]["annotations"] = d["metadata"].value("annotations", json::object());
  d["metadata"]["annotations"].erase(kWorkload);  // a client's Deployment is not the lab's
  d["status"] = {{"observedGeneration", 1}};
  return d;
}

bool fresh(const json& written, const json& stored) {
  const json& meta = written.value("metadata", json::object());
  if (!meta.is_object() || !meta.contains("resourceVersion") || meta["resourceVersion"].is_null()
      || meta["resourceVersion"] == "") {
    return true;
  }
  return meta["resourceVersion"] == stored["metadata"].value("resourceVersion", "");
}

std::string conflict_message(const ResourceType& type, const std::string& name) {
  return fmt::format(
      "Operation cannot be fulfilled on {}{} \"{}\": the object has been modified; please apply "
      "your changes to the latest version and try again",
      type.name, type.group.empty() ? "" : "." + type.group, name);
}

}  // namespace zerodrop::kubeapi
