// The Projection's derived objects: a pod's status, the Deployment's and ReplicaSets' status,
// the EndpointSlices and aggregated Events.
#include <fmt/format.h>

#include "kubeapi/projection.h"

namespace zerodrop::kubeapi {

using nlohmann::json;
using record::Micros;

namespace {

json condition(const std::string& type, bool status, const std::string& at) {
  return {{"type", type}, {"status", status ? "True" : "False"}, {"lastTransitionTime", at}};
}

// A Deployment condition keeping its lastTransitionTime while its status stays the same, as the
// controller does.
json deployment_condition(const json& old_conditions, const std::string& type, bool status,
                          const std::string& reason, const std::string& message,
                          const std::string& at) {
  json c = {{"type", type},         {"status", status ? "True" : "False"},
            {"reason", reason},     {"message", message},
            {"lastUpdateTime", at}, {"lastTransitionTime", at}};
  for (const json& old : old_conditions) {
    if (old.value("type", "") != type) {
      continue;
    }
    if (old.value("status", "") == c["status"]) {
      c["lastTransitionTime"] = old["lastTransitionTime"];
    }
    if (old.value("reason", "") == reason && old.value("message", "") == message) {
      c["lastUpdateTime"] = old["lastUpdateTime"];
    }
  }
  return c;
}

json terminated_state(int restarts, const std::string& pod, const std::string& started,
                      const std::string& finished, std::optional<int> code,
                      std::optional<int> signal) {
  int exit_code = code.value_or(signal ? 128 + *signal : 0);
  json t = {{"exitCode", exit_code},
            {"reason", exit_code == 0 ? "Completed" : "Error"},
            {"startedAt", started},
            {"finishedAt", finished},
            {"containerID", fmt::format("zerodrop://{}-{}", pod, restarts)}};
  if (signal) {
    t["signal"] = *signal;
  }
  return t;
}

}  // namespace

json Projection::pod_object(const PodState& pod) const {
  std::string hash = template_hash(pod.revision);
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", metadata(info_, "Pod", pod.name, pod.created)}};
  p["metadata"]["labels"] = {{"app", info_.deployment}, {"pod-template-hash", hash}};
  p["metadata"]["generateName"] = fmt::format("{}-{}-", info_.deployment, hash);
  auto rs = replica_sets_.find(pod.revision);
  if (rs != replica_sets_.end()) {
    p["metadata"]["ownerReferences"] = json::array({controller_reference(
        "apps/v1", "ReplicaSet", rs->second, uid_of("ReplicaSet", rs->second, info_.start_wall))});
  }
  if (pod.deletion) {
    mark_deleting(p["metadata"], wall(info_, *pod.deletion), info_.grace);
  }
  auto tmpl = templates_.find(pod.revision);
  p["spec"] = tmpl != templates_.end() ? tmpl->second["spec"] : pod_template(info_)["spec"];
  p["spec"]["nodeName"] = pod.node;
  p["spec"]["containers"][0]["ports"] =
      json::array({{{"containerPort", pod.port}, {"protocol", "TCP"}}});

  std::string created = rfc3339(wall(info_, pod.created));
  std::string ready_at = rfc3339(wall(info_, pod.ready_changed));
  const char* phase = "Running";
  if (!pod.started && !pod.terminated) {
    phase = "Pending";
  } else if (pod.terminated && pod.deletion) {
    bool clean = pod.terminated->code.value_or(-1) == 0 && !pod.terminated->signal;
    phase = clean ? "Succeeded" : "Failed";
  }
  json container = {{"name", info_.container},
                    {"image", p["spec"]["containers"][0].value("image", "")},
                    {"imageID", ""},
                    {"ready", pod.ready},
                    {"started", pod.started.has_value()},
                    {"restartCount", pod.restarts},
                    {"containerID", fmt::format("zerodrop://{}-{}", pod.name, pod.restarts)},
                    {"lastState", json::object()}};
  auto term = [&](const Exit& x) {
    return terminated_state(pod.restarts, pod.name, rfc3339(wall(info_, x.started)),
                            rfc3339(wall(info_, x.finished)), x.code, x.signal);
  };
  if (pod.terminated) {
    container["state"] = {{"terminated", term(*pod.terminated)}};
  } else if (pod.started) {
    container["state"] = {{"running", {{"startedAt", rfc3339(wall(info_, *pod.started))}}}};
  } else {
    container["state"] = {{"waiting", {{"reason", "ContainerCreating"}}}};
  }
  if (pod.last_state) {
    container["lastState"] = {{"terminated", term(*pod.last_state)}};
  }
  p["status"] = {{"phase", phase},
                 {"hostIP", "127.0.0.1"},
                 {"podIP", pod.ip},
                 {"podIPs", json::array({{{"ip", pod.ip}}})},
                 {"startTime", created},
                 {"qosClass", "BestEffort"},
                 {"conditions", json::array({condition("PodScheduled", true, created),
                                             condition("Initialized", true, created),
                                             condition("ContainersReady", pod.ready, ready_at),
                                             condition("Ready", pod.ready, ready_at)})},
                 {"containerStatuses", json::array({container})}};
  return p;
}

void Projection::update_status(Micros now) {
  struct Counts {
    int replicas = 0, ready = 0, available = 0;
  };

  std::map<int, Counts> by_revision;
  Counts all;
  for (const auto& [name, pod] : pods_) {
    if (pod.deletion) {
      continue;  // the controllers do not count pods being deleted
    }
    bool available = pod.ready && now - pod.ready_changed >= info_.min_ready;
    for (Counts* c : {&all, &by_revision[pod.revision]}) {
      c->replicas += 1;
      c->ready += pod.ready ? 1 : 0;
      c->available += available ? 1 : 0;
    }
  }
  for (const auto& [revision, name] : replica_sets_) {
    Counts c = by_revision[revision];
    store_.update(kReplicaSets, name, [&](json& rs) {
      rs["spec"]["replicas"] = c.replicas;
      rs["status"] = {{"replicas", c.replicas},
                      {"fullyLabeledReplicas", c.replicas},
                      {"readyReplicas", c.ready},
                      {"availableReplicas", c.available},
                      {"observedGeneration", rs["metadata"]["generation"]}};
      return true;
    });
  }
  Counts updated = by_revision[revision_];
  std::string at = rfc3339(wall(info_, now));
  std::string new_rs = replica_sets_[revision_];
  store_.update(kDeployments, info_.deployment, [&](json& d) {
    int wanted = d["spec"]["replicas"].get<int>();
    bool complete = updated.replicas == wanted && updated.available == wanted
                    && all.replicas == updated.replicas;
    json old = d["status"].value("conditions", json::array());
    json available = deployment_condition(
        old, "Available", all.available >= info_.min_available,
        all.available >= info_.min_available ? "MinimumReplicasAvailable"
                                             : "MinimumReplicasUnavailable",
        all.available >= info_.min_available ? "Deployment has minimum availability."
                                             : "Deployment does not have minimum availability.",
        at);
    json progressing = deployment_condition(
        old, "Progressing", true, complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
        fmt::format("ReplicaSet \"{}\" {}.", new_rs,
                    complete ? "has successfully progressed" : "is progressing"),
        at);
    d["status"] = {{"observedGeneration", observed_generation_},
                   {"replicas", all.replicas},
                   {"updatedReplicas", updated.replicas},
                   {"readyReplicas", all.ready},
                   {"availableReplicas", all.available},
                   {"unavailableReplicas", std::max(0, wanted - all.available)},
                   {"conditions", json::array({available, progressing})}};
    return true;
  });
}

void Projection::put_slices(Micros t) {
  // One slice per port, as the EndpointSlice controller groups endpoints by their port set.
  std::map<std::string, json> slices;
  for (const auto& [pod, e] : endpoints_) {
    std::string name = fmt::format("{}-{}", info_.deployment, e.port);
    json& slice = slices[name];
    if (slice.is_null()) {
      slices_.try_emplace(name, t);
      slice = {{"apiVersion", "discovery.k8s.io/v1"},
               {"kind", "EndpointSlice"},
               {"metadata", metadata(info_, "EndpointSlice", name, slices_[name])},
               {"addressType", "IPv4"},
               {"ports", json::array({{{"name", "http"}, {"port", e.port}, {"protocol", "TCP"}}})},
               {"endpoints", json::array()}};
      slice["metadata"]["labels"] = {
          {"kubernetes.io/service-name", info_.deployment},
          {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"}};
      slice["metadata"]["annotations"] = {
          {"endpoints.kubernetes.io/last-change-trigger-time", rfc3339_micros(wall(info_, t))}};
    }
    auto node = pods_.find(pod);
    slice["endpoints"].push_back({{"addresses", {e.ip}},
                                  {"conditions",
                                   {{"ready", e.conditions.ready},
                                    {"serving", e.conditions.serving},
                                    {"terminating", e.conditions.terminating}}},
                                  {"targetRef", pod_ref(pod)},
                                  {"nodeName", node != pods_.end() ? node->second.node : ""}});
  }
  for (auto it = slices_.begin(); it != slices_.end();) {
    if (slices.count(it->first) == 0) {
      store_.erase(kSlices, it->first);
      it = slices_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [name, slice] : slices) {
    // The trigger time changes only with the endpoints: keep the stored one when they are equal.
    if (auto old = store_.get(kSlices, name); old && (*old)["endpoints"] == slice["endpoints"]) {
      continue;
    }
    store_.put(kSlices, slice);
  }
}

void Projection::emit(const json& involved, const std::string& reason, const std::string& message,
                      const std::string& type, const std::string& component, Micros t) {
  // kubelet's recorder aggregates identical events into one with a count.
  std::string key = fmt::format("{}\n{}\n{}", involved.value("uid", ""), reason, message);
  auto it = event_names_.find(key);
  if (it != event_names_.end()) {
    std::string at = rfc3339(wall(info_, t));
    if (store_.update(kEvents, it->second, [&](json& e) {
          e["count"] = e["count"].get<int>() + 1;
          e["lastTimestamp"] = at;
          return true;
        })) {
      return;
    }
  }
  json e = event_object(info_, involved, reason, message, type, component, t, ++event_serial_);
  event_names_[key] = e["metadata"]["name"].get<std::string>();
  store_.put(kEvents, e);
}

}  // namespace zerodrop::kubeapi
