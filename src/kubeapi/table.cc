#include "kubeapi/table.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "base/text.h"
#include "kubeapi/admission.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

// kubectl's short age: "45s", "3m12s", "12m", "5h".
std::string age(const std::string& created) {
  std::tm tm{};
  // Seconds or finer ("…:05Z", "…:05.123456Z"): the fraction changes no printed age.
  if (::strptime(created.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) {
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
  if (kind == "DaemonSet") {
    return {column("Name", "string"),          column("Desired", "integer"),
            column("Current", "integer"),      column("Ready", "integer"),
            column("Up-to-date", "integer"),   column("Available", "integer"),
            column("Node Selector", "string"), column("Age", "string")};
  }
  if (kind == "Lease") {
    return {column("Name", "string"), column("Holder", "string"), column("Age", "string")};
  }
  if (kind == "Event") {  // the API server's own columns, Name last and only with -o wide
    return {column("Last Seen", "string"), column("Type", "string"),
            column("Reason", "string"),    column("Object", "string"),
            column("Source", "string", 1), column("Message", "string"),
            column("Count", "string", 1),  column("Name", "string", 1)};
  }
  return {column("Name", "string"), column("Age", "string")};
}

// o[key] when it is a string, else `fallback` (clients write nulls and numbers too).
std::string text(const json& o, const char* key, const std::string& fallback = "") {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>()
                                                                 : fallback;
}

// When an Event was last seen: lastTimestamp, else its series' or eventTime (events.k8s.io
// writers), else its creation.
std::string last_seen(const json& e, const json& series) {
  for (const json& t : {e.value("lastTimestamp", json()), series.value("lastObservedTime", json()),
                        e.value("eventTime", json())}) {
    if (t.is_string() && !t.get<std::string>().empty()) {
      return t.get<std::string>();
    }
  }
  return e["metadata"].value("creationTimestamp", "");
}

json event_cells(const json& served) {
  json e = served.value("apiVersion", "") == "v1" ? served : event_to_core(served);
  const json& involved = e.value("involvedObject", json::object());
  std::string object = ascii_lower(text(involved, "kind")) + "/" + text(involved, "name");
  const json& source = e.value("source", json::object());
  std::string from = text(source, "component", text(e, "reportingComponent"));
  if (!text(source, "host").empty()) {
    from += ", " + text(source, "host");
  }
  json series = e.contains("series") && e["series"].is_object() ? e["series"] : json::object();
  json count = e.value("count", series.value("count", json(1)));
  return {age(last_seen(e, series)), text(e, "type"),
          text(e, "reason"), object,
          from,              text(e, "message"),
          count.is_number_integer() ? std::to_string(count.get<int64_t>()) : "1",
          text(e["metadata"], "name")};
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
  if (kind == "DaemonSet") {
    json s = o.value("status", json::object());
    std::string selector;
    json wanted = o["spec"]["template"]["spec"].value("nodeSelector", json::object());
    for (const auto& [key, value] : wanted.items()) {
      selector += (selector.empty() ? "" : ",") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    }
    return {name,
            s.value("desiredNumberScheduled", 0),
            s.value("currentNumberScheduled", 0),
            s.value("numberReady", 0),
            s.value("updatedNumberScheduled", 0),
            s.value("numberAvailable", 0),
            selector.empty() ? "<none>" : selector,
            created};
  }
  if (kind == "Lease") {
    return {name, text(o.value("spec", json::object()), "holderIdentity", "<none>"), created};
  }
  if (kind == "Event") {
    return event_cells(o);
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
