#include "kubeapi/projection.h"

#include <algorithm>

#include <fmt/format.h>

namespace zerodrop::kubeapi {

using nlohmann::json;
using record::EventKind;
using record::Micros;

namespace {

// The number in "pod-12" (the lab's pod names), for spreading pods over the nodes.
int pod_index(const std::string& name) {
  size_t dash = name.rfind('-');
  if (dash == std::string::npos) {
    return 1;
  }
  return std::max(1, std::atoi(name.c_str() + dash + 1));
}

// "127.20.0.3:8080" -> {ip, port}.
std::pair<std::string, uint16_t> address_of(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return {text, 0};
  }
  return {text.substr(0, colon), static_cast<uint16_t>(std::atoi(text.c_str() + colon + 1))};
}

// The number after `word` in `text` ("… revision 2 …"), if any.
std::optional<int> number_after(const std::string& text, const std::string& word) {
  size_t at = text.find(word);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  return std::atoi(text.c_str() + at + word.size());
}

}  // namespace

Projection::Projection(Store& store, ClusterInfo info) : store_(store), info_(std::move(info)) {}

void Projection::publish_initial() {
  std::lock_guard lock(mutex_);
  // The cluster's own objects: the first workload of several stores them.
  store_.create("namespaces", namespace_object(info_, info_.ns));
  for (const Node& n : info_.nodes) {
    store_.create("nodes", node_object(info_, n));
  }
  store_.put("services", service_object(info_));
  store_.put(kDeployments, deployment_object(info_));
  ensure_replica_set(1, Micros(0));
  update_status(Micros(0));
}

void Projection::observe(const record::Event& event) {
  record::Event e = event;
  if (!e.pod.empty()) {
    e.pod = info_.pod_prefix + e.pod;  // the pod's name in the API
  }
  std::lock_guard lock(mutex_);
  switch (e.kind) {
    case EventKind::pod_created:
      on_pod_created(e);
      break;
    case EventKind::rollout_started:
      on_rollout_started(e);
      break;
    case EventKind::endpoint_changed:
      on_endpoint(e);
      break;
    case EventKind::pod_started:
    case EventKind::pod_ready:
    case EventKind::pod_unready:
    case EventKind::probe_failed:
    case EventKind::liveness_restart:
    case EventKind::deletion_started:
    case EventKind::prestop_failed:
    case EventKind::pod_exited:
      pod_event(e);
      break;
    default:
      break;
  }
}

void Projection::refresh(Micros now) {
  std::lock_guard lock(mutex_);
  update_status(now);
}

void Projection::on_pod_created(const record::Event& e) {
  PodState pod;
  pod.name = e.pod;
  std::string address = e.detail.substr(0, e.detail.find(' '));
  std::tie(pod.ip, pod.port) = address_of(address);
  pod.revision = number_after(e.detail, "revision ").value_or(revision_);
  pod.created = e.t;
  pod.ready_changed = e.t;
  if (!info_.nodes.empty()) {
    pod.node = info_.nodes[static_cast<size_t>(pod_index(pod.name) - 1) % info_.nodes.size()].name;
  }
  ensure_replica_set(pod.revision, e.t);
  pods_[pod.name] = pod;
  put_pod(pod);
  emit(pod_ref(pod.name), "Scheduled",
       fmt::format("Successfully assigned {}/{} to {}", info_.ns, pod.name, pod.node), "Normal",
       "default-scheduler", e.t);
  if (auto rs = store_.get(kReplicaSets, replica_sets_[pod.revision])) {
    emit(reference_to(*rs), "SuccessfulCreate", "Created pod: " + pod.name, "Normal",
         "replicaset-controller", e.t);
  }
  update_status(e.t);
}

void Projection::pod_event(const record::Event& e) {
  auto it = pods_.find(e.pod);
  if (it == pods_.end()) {
    return;
  }
  PodState& pod = it->second;
  json ref = pod_ref(pod.name);
  switch (e.kind) {
    case EventKind::pod_started:
      if (pod.terminated) {
        pod.last_state = pod.terminated;
        pod.terminated.reset();
        ++pod.restarts;
      }
      pod.started = e.t;
      emit(ref, "Started", "Started container " + info_.container, "Normal", "kubelet", e.t);
      break;
    case EventKind::pod_ready:
    case EventKind::pod_unready:
      pod.ready = e.kind == EventKind::pod_ready;
      pod.ready_changed = e.t;
      break;
    case EventKind::probe_failed: {
      bool liveness = e.detail.rfind("liveness", 0) == 0;
      std::string why = e.detail.substr(std::min(e.detail.size(), e.detail.find(": ") + 2));
      emit(ref, "Unhealthy",
           fmt::format("{} probe failed: {}", liveness ? "Liveness" : "Readiness", why), "Warning",
           "kubelet", e.t);
      return;
    }
    case EventKind::liveness_restart:
      emit(ref, "Killing",
           fmt::format("Container {} failed liveness probe, will be restarted", info_.container),
           "Normal", "kubelet", e.t);
      return;
    case EventKind::deletion_started:
      pod.deletion = e.t;
      // kubelet records Killing before it runs the preStop hook.
      emit(ref, "Killing", "Stopping container " + info_.container, "Normal", "kubelet", e.t);
      if (auto rs = store_.get(kReplicaSets, replica_sets_[pod.revision])) {
        emit(reference_to(*rs), "SuccessfulDelete", "Deleted pod: " + pod.name, "Normal",
             "replicaset-controller", e.t);
      }
      break;
    case EventKind::prestop_failed:
      emit(ref, "FailedPreStopHook", e.detail, "Warning", "kubelet", e.t);
      return;
    case EventKind::pod_exited:
      pod.terminated = Exit{pod.started.value_or(pod.created), e.t, e.exit_code, e.signal};
      pod.started.reset();
      pod.ready = false;
      break;
    default:
      return;
  }
  put_pod(pod);
  update_status(e.t);
}

void Projection::on_rollout_started(const record::Event& e) {
  std::optional<int> revision = number_after(e.detail, "to revision ");
  std::optional<int> scale_to = number_after(e.detail, " to ");
  bool restart = e.detail.rfind("rollout restart", 0) == 0 && revision;
  bool scale = e.detail.rfind("scale from", 0) == 0 && scale_to;
  if (!restart && !scale) {
    return;  // deleting a pod changes no spec
  }
  std::optional<json> d = store_.update(kDeployments, info_.deployment, [&](json& object) {
    int64_t generation = object["metadata"]["generation"].get<int64_t>();
    // The API's PATCH already counted its own change; the lab's own action is counted here.
    bool by_lab = generation <= observed_generation_;
    if (restart && by_lab) {
      object["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
          rfc3339(wall(info_, e.t));
    }
    if (scale) {
      by_lab = by_lab && object["spec"]["replicas"] != *scale_to;
      object["spec"]["replicas"] = *scale_to;
    }
    if (by_lab) {
      object["metadata"]["generation"] = generation + 1;
    }
    if (restart) {
      object["metadata"]["annotations"]["deployment.kubernetes.io/revision"] =
          std::to_string(*revision);
    }
    return true;
  });
  if (d) {
    observed_generation_ = (*d)["metadata"]["generation"].get<int>();
  }
  if (restart) {
    revision_ = *revision;
    ensure_replica_set(revision_, e.t);
  }
  update_status(e.t);
}

void Projection::on_endpoint(const record::Event& e) {
  if (e.detail == "removed") {
    endpoints_.erase(e.pod);
    if (pods_.erase(e.pod) > 0) {
      store_.erase(kPods, e.pod);  // the pod object is gone: it leaves the slice too
    }
  } else if (e.conditions) {
    auto [ip, port] = address_of(e.detail);
    endpoints_[e.pod] = {ip, port, *e.conditions};
  }
  put_slices(e.t);
  update_status(e.t);
}

void Projection::put_pod(const PodState& pod) {
  store_.put(kPods, pod_object(pod));
}

json Projection::pod_ref(const std::string& pod) const {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"namespace", info_.ns},
          {"name", pod},
          {"uid", uid_of("Pod", pod, info_.start_wall)}};
}

void Projection::ensure_replica_set(int revision, Micros t) {
  if (replica_sets_.count(revision) > 0) {
    return;
  }
  std::optional<json> d = store_.get(kDeployments, info_.deployment);
  if (!d) {
    return;
  }
  json rs = replica_set_object(info_, *d, revision, t);
  replica_sets_[revision] = rs["metadata"]["name"].get<std::string>();
  templates_[revision] = rs["spec"]["template"];
  store_.put(kReplicaSets, rs);
}

}  // namespace zerodrop::kubeapi
