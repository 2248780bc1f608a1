#include "kubeapi/daemons.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/selector.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

json daemon_pod_condition(const std::string& type, bool status, const std::string& at) {
  return {{"type", type}, {"status", status ? "True" : "False"}, {"lastTransitionTime", at}};
}

uint64_t template_digest(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h = (h ^ c) * 1099511628211ull;
  }
  return h;
}

json object_field(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : json::object();
}

// Whether every label the selector's matchLabels names is the template's (matchExpressions
// are checked by the Selector).
bool selects(const json& selector, const json& labels) {
  std::string text;
  json match_labels = object_field(selector, "matchLabels");
  for (const auto& [key, value] : match_labels.items()) {
    if (!value.is_string()) {
      return false;
    }
    text += (text.empty() ? "" : ",") + key + "=" + value.get<std::string>();
  }
  if (text.empty()) {
    return false;  // an empty selector selects everything: the API server refuses it
  }
  return Selector::parse(text, "").matches({{"metadata", {{"labels", labels}}}});
}

}  // namespace

json admit_daemon_set(json ds) {
  std::string what = "daemonsets.apps \"" + ds["metadata"].value("name", "") + "\"";
  json& spec = ds["spec"];
  if (!spec.is_object() || !spec["template"].is_object() || !spec["template"]["spec"].is_object()) {
    throw Error(what + ": spec.template.spec: Required value");
  }
  json labels = object_field(object_field(spec["template"], "metadata"), "labels");
  if (!spec["selector"].is_object() || !selects(spec["selector"], labels)) {
    throw Error(what + ": spec.template.metadata.labels: Invalid value: `selector` does not match "
                "template `labels`");
  }
  json& pod = spec["template"]["spec"];
  if (!pod["containers"].is_array() || pod["containers"].empty()
      || !pod["containers"][0].is_object()) {
    throw Error(what + ": spec.template.spec.containers: Required value");
  }
  if (!pod["containers"][0].contains("command")) {
    throw Error(what + ": the lab runs a container's command (it has no image entrypoints): "
                "give spec.template.spec.containers[0].command");
  }
  std::string restart = pod.value("restartPolicy", "Always");
  if (restart != "Always") {
    throw Error(what + ": spec.template.spec.restartPolicy: Unsupported value: \"" + restart
                + "\": supported values: \"Always\"");
  }
  pod["restartPolicy"] = "Always";
  if (!pod.contains("terminationGracePeriodSeconds")) {
    pod["terminationGracePeriodSeconds"] = 30;
  } else if (!pod["terminationGracePeriodSeconds"].is_number_integer()
             || pod["terminationGracePeriodSeconds"].get<int64_t>() < 0) {
    throw Error(what + ": spec.template.spec.terminationGracePeriodSeconds: must be a whole "
                "number of at least 0");
  }
  if (!spec.contains("updateStrategy")) {
    spec["updateStrategy"] = {{"type", "RollingUpdate"},
                              {"rollingUpdate", {{"maxUnavailable", 1}, {"maxSurge", 0}}}};
  }
  if (!spec.contains("revisionHistoryLimit")) {
    spec["revisionHistoryLimit"] = 10;
  }
  ds["metadata"]["generation"] = 1;
  ds["status"] = {{"currentNumberScheduled", 0},
                  {"desiredNumberScheduled", 0},
                  {"numberMisscheduled", 0},
                  {"numberReady", 0}};
  return ds;
}

std::string revision_hash(const json& ds) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = template_digest(ds["spec"]["template"].dump());
  std::string out;
  for (int i = 0; i < 10; ++i, h /= kAlphabet.size()) {
    out += kAlphabet[h % kAlphabet.size()];
  }
  return out;
}

std::vector<Node> daemon_nodes(const json& ds, const std::vector<Node>& nodes) {
  std::vector<Node> out;
  const json& spec = ds["spec"]["template"]["spec"];
  for (const Node& node : nodes) {
    json pinned = spec;
    pinned.erase("affinity");  // the controller pins each pod to its node; no pod is there yet
    if (pinned.value("nodeName", node.name) != node.name) {
      continue;
    }
    pinned["nodeName"] = node.name;
    if (schedule(pinned, json::object(), nodes, {}).node) {
      out.push_back(node);
    }
  }
  return out;
}

json daemon_pod_object(const json& ds, const DaemonPod& pod) {
  const json& tmpl = ds["spec"]["template"];
  std::string name = ds["metadata"]["name"].get<std::string>();
  json meta = {{"name", pod.name},
               {"namespace", ds["metadata"].value("namespace", "default")},
               {"uid", uid_of("Pod", pod.name, pod.created)},
               {"creationTimestamp", rfc3339(pod.created)},
               {"generateName", name + "-"},
               {"labels", object_field(object_field(tmpl, "metadata"), "labels")},
               {"annotations", object_field(object_field(tmpl, "metadata"), "annotations")}};
  meta["labels"]["controller-revision-hash"] = pod.hash;
  meta["labels"]["pod-template-generation"] = std::to_string(ds["metadata"].value("generation", 1));
  meta["ownerReferences"] =
      json::array({controller_reference("apps/v1", "DaemonSet", name, ds["metadata"]["uid"])});
  if (pod.deletion) {
    mark_deleting(meta, *pod.deletion, pod.grace);
  }
  json p = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", tmpl["spec"]}};
  p["spec"]["nodeName"] = pod.node;
  std::string created = rfc3339(pod.created);
  bool running = pod.started.has_value();
  json state = {{"waiting", {{"reason", pod.waiting.empty() ? "ContainerCreating" : pod.waiting}}}};
  if (!pod.waiting_message.empty()) {
    state["waiting"]["message"] = pod.waiting_message;
  }
  if (running) {
    state = {{"running", {{"startedAt", rfc3339(*pod.started)}}}};
  }
  json last = json::object();
  if (pod.exited) {
    int code = pod.exit_code.value_or(pod.signal ? 128 + *pod.signal : 0);
    last = {{"terminated",
             {{"exitCode", code},
              {"reason", code == 0 ? "Completed" : "Error"},
              {"startedAt", rfc3339(pod.exited_started.value_or(pod.created))},
              {"finishedAt", rfc3339(*pod.exited)}}}};
    if (pod.signal) {
      last["terminated"]["signal"] = *pod.signal;
    }
  }
  const json& c = tmpl["spec"]["containers"][0];
  std::string since = rfc3339(pod.started.value_or(pod.exited.value_or(pod.created)));
  p["status"] = {
      {"phase", running || pod.exited ? "Running" : "Pending"},
      {"hostIP", "127.0.0.1"},
      {"podIP", "127.0.0.1"},
      {"podIPs", json::array({{{"ip", "127.0.0.1"}}})},
      {"startTime", created},
      {"qosClass", "BestEffort"},
      {"conditions", json::array({daemon_pod_condition("PodScheduled", true, created),
                                  daemon_pod_condition("Initialized", true, created),
                                  daemon_pod_condition("ContainersReady", running, since),
                                  daemon_pod_condition("Ready", running, since)})},
      {"containerStatuses", json::array({{{"name", c.value("name", "")},
                                          {"image", c.value("image", "")},
                                          {"imageID", ""},
                                          {"ready", running},
                                          {"started", running},
                                          {"restartCount", pod.restarts},
                                          {"state", state},
                                          {"lastState", last}}})}};
  return p;
}

json daemon_set_status(const json& ds, const std::vector<DaemonPod>& pods, int eligible) {
  std::string hash = revision_hash(ds);
  std::vector<std::string> scheduled, updated;
  int ready = 0;
  for (const DaemonPod& p : pods) {
    if (p.deletion) {
      continue;
    }
    scheduled.push_back(p.node);
    if (p.hash == hash) {
      updated.push_back(p.node);
    }
    ready += p.started ? 1 : 0;
  }
  auto distinct = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
  };
  return {{"currentNumberScheduled", distinct(scheduled)},
          {"desiredNumberScheduled", eligible},
          {"numberMisscheduled", 0},
          {"numberReady", ready},
          {"updatedNumberScheduled", distinct(updated)},
          {"numberAvailable", ready},
          {"numberUnavailable", std::max(0, eligible - ready)},
          {"observedGeneration", ds["metadata"].value("generation", 1)}};
}

}  // namespace zerodrop::kubeapi
