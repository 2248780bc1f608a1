#include "kubeapi/table.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

// kubectl's short age: "45s", "3m12s", "12m", "5h".
std::string age(const std::string& created) {
  std::tm tm{};
  if (::strptime(created.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) {
    return "<unknown>";
  }
  auto then = std::chrono::system_clock::from_time_t(::timegm(&tm));
  auto s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - then)
               .count();
  s = std::max<int64_t>(0, s);
  if (s < 120) {
    return fmt::format("{}s", s);
  }
  if (s < 600) {
    return fmt::format("{}m{}s", s / 60, s % 60);
  }
  return s < 3 * 3600 ? fmt::format("{}m", s / 60) : fmt::format("{}h", s / 3600);
}

json column(const std::string& name, const std::string& type, int priority = 0) {
  return {{"name", name},
          {"type", type},
          {"format", name == "Name" ? "name" : ""},
          {"description", ""},
          {"priority", priority}};
}

// The pod's first container status; empty for a pod not scheduled yet (it has none).
json first_container(const json& pod) {
  json statuses = pod.value("status", json::object()).value("containerStatuses", json::array());
  return statuses.empty() ? json::object() : statuses[0];
}

std::string pod_status(const json& pod) {
  if (pod["metadata"].contains("deletionTimestamp")) {
    return "Terminating";
  }
  json state = first_container(pod).value("state", json::object());
  if (state.contains("waiting")) {
    return state["waiting"].value("reason", "Pending");
  }
  if (state.contains("terminated")) {
    return state["terminated"].value("reason", "Error");
  }
  return pod.value("status", json::object()).value("phase", "Unknown");
}

std::vector<json> columns_of(const std::string& kind) {
  if (kind == "Pod") {
    return {column("Name", "string"),      column("Ready", "string"), column("Status", "string"),
            column("Restarts", "integer"), column("Age", "string"),   column("IP", "string", 1),
            column("Node", "string", 1)};
  }
  if (kind == "Deployment") {
    return {column("Name", "string"), column("Ready", "string"), column("Up-to-date", "integer"),
            column("Available", "integer"), column("Age", "string")};
  }
  if (kind == "EndpointSlice") {
    return {column("Name", "string"), column("AddressType", "string"), column("Ports", "string"),
            column("Endpoints", "string"), column("Age", "string")};
  }
  return {column("Name", "string"), column("Age", "string")};
}

json cells_of(const std::string& kind, const json& o) {
  std::string name = o["metadata"].value("name", "");
  std::string created = age(o["metadata"].value("creationTimestamp", ""));
  if (kind == "Pod") {
    json c = first_container(o);
    return {name,
            fmt::format("{}/1", c.value("ready", false) ? 1 : 0),
            pod_status(o),
            c.value("restartCount", 0),
            created,
            o.value("status", json::object()).value("podIP", ""),
            o.value("spec", json::object()).value("nodeName", "")};
  }
  if (kind == "Deployment") {
    const json& s = o["status"];
    return {name, fmt::format("{}/{}", s.value("readyReplicas", 0), o["spec"].value("replicas", 0)),
            s.value("updatedReplicas", 0), s.value("availableReplicas", 0), created};
  }
  if (kind == "EndpointSlice") {
    std::string ports, addresses;
    for (const json& p : o["ports"]) {
      ports += (ports.empty() ? "" : ",") + std::to_string(p.value("port", 0));
    }
    for (const json& e : o["endpoints"]) {
      addresses += (addresses.empty() ? "" : ",") + e["addresses"][0].get<std::string>();
    }
    return {name, o.value("addressType", ""), ports, addresses.empty() ? "<unset>" : addresses,
            created};
  }
  return {name, created};
}

}  // namespace

bool wants_table(const std::string& accept) {
  return accept.find("as=Table") != std::string::npos;
}

json table_of(const std::string& kind, const std::vector<json>& objects, uint64_t rv,
              Headers headers) {
  json table = {{"kind", "Table"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", {{"resourceVersion", std::to_string(rv)}}},
                {"columnDefinitions", json::array()},
                {"rows", json::array()}};
  if (headers == Headers::include) {
    table["columnDefinitions"] = columns_of(kind);
  }
  for (const json& o : objects) {
    json meta = {{"kind", "PartialObjectMetadata"},
                 {"apiVersion", "meta.k8s.io/v1"},
                 {"metadata", o["metadata"]}};
    table["rows"].push_back({{"cells", cells_of(kind, o)}, {"object", meta}});
  }
  return table;
}

}  // namespace zerodrop::kubeapi
