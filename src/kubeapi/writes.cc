// The writes the lab's API accepts: PATCH of the Deployment (and its scale) that the lab acts on,
// DELETE of a pod, access reviews, and plain storage for ConfigMaps and RBAC objects.
#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/admission.h"
#include "kubeapi/api.h"
#include "kubeapi/daemons.h"
#include "kubeapi/jobs.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse ok(const json& j, int status = 200) {
  return {status, dump(j) + "\n", "application/json"};
}

json parse_body(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    throw Error("the request body is not JSON");
  }
  return j;
}

// Strategic merge as the API server applies it to the fields kubectl patches: maps merge, null
// deletes, lists of objects with a "name" merge by name (containers, ports), other lists replace.
void strategic_merge(json& target, const json& patch) {
  if (!patch.is_object() || !target.is_object()) {
    target = patch;
    return;
  }
  for (const auto& [key, value] : patch.items()) {
    if (key.rfind("$", 0) == 0) {
      continue;  // directives ($setElementOrder, $patch) change no field the lab serves
    }
    if (value.is_null()) {
      target.erase(key);
    } else if (value.is_array() && target.contains(key) && target[key].is_array() && !value.empty()
               && value[0].is_object() && value[0].contains("name")) {
      for (const json& item : value) {
        auto same = std::find_if(target[key].begin(), target[key].end(), [&](const json& t) {
          return t.is_object() && t.value("name", "") == item.value("name", "");
        });
        if (same == target[key].end()) {
          target[key].push_back(item);
        } else {
          strategic_merge(*same, item);
        }
      }
    } else if (value.is_object() && target.contains(key)) {
      strategic_merge(target[key], value);
    } else {
      target[key] = value;
    }
  }
}

// What no client write changes: the object's name, namespace, uid and creation time.
void keep_identity(json& object, const json& metadata) {
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp"}) {
    if (metadata.contains(key)) {
      object["metadata"][key] = metadata[key];
    } else {
      object["metadata"].erase(key);
    }
  }
}

// What the API server keeps of an update of a DaemonSet: the spec checked as at its creation,
// metadata.generation counted up when the spec changed, the status the controller wrote.
void admit_update(const ResourceType& type, json& object, const json& before) {
  if (type.name != "daemonsets") {
    return;
  }
  object = admit_daemon_set(object);
  int64_t generation = before["metadata"].value("generation", int64_t{1});
  object["metadata"]["generation"] =
      generation + (object["spec"] != before.value("spec", json()) ? 1 : 0);
  object["status"] = before.value("status", json::object());
}

}  // namespace

std::string not_found(const ResourceType& type, const std::string& name) {
  return fmt::format("{}{} \"{}\" not found", type.name.substr(0, type.name.find('/')),
                     type.group.empty() ? "" : "." + type.group, name);
}

json apply_patch(const json& object, const std::string& content_type, const std::string& body) {
  std::string type = content_type.substr(0, content_type.find(';'));
  json patch = parse_body(body);
  json out = object;
  if (type == "application/strategic-merge-patch+json") {
    strategic_merge(out, patch);
  } else if (type == "application/merge-patch+json") {
    out.merge_patch(patch);
  } else if (type == "application/json-patch+json") {
    try {
      out = object.patch(patch);
    } catch (const json::exception& e) {
      throw Error(fmt::format("cannot apply the JSON patch: {}", e.what()));
    }
  } else {
    throw Error(fmt::format("unsupported patch type '{}'", content_type));
  }
  return out;
}

json Api::scale_of(const json& d) const {
  json meta = {{"name", d["metadata"]["name"]},
               {"namespace", d["metadata"]["namespace"]},
               {"uid", d["metadata"]["uid"]},
               {"resourceVersion", d["metadata"]["resourceVersion"]},
               {"creationTimestamp", d["metadata"]["creationTimestamp"]}};
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", meta},
          {"spec", {{"replicas", d["spec"]["replicas"]}}},
          {"status",
           {{"replicas", d["status"].value("replicas", 0)},
            {"selector", selector_text(d["spec"].value("selector", json::object()))}}}};
}

HttpResponse Api::patch(const Route& route, const HttpRequest& request) {
  const ResourceType& t = *route.type;
  if (t.store_key == "apps/deployments") {
    return patch_deployment(route, request);
  }
  bool stale = false;
  std::optional<json> updated = store_.update(t.store_key, route.name, [&](json& object) {
    json metadata = object["metadata"];
    json patched = apply_patch(served_form(t, object), request.content_type, request.body);
    check_body(patched, t);
    if (!fresh(patched, object)) {
      stale = true;
      return false;
    }
    json before = object;
    object = t.group == "events.k8s.io" ? event_to_core(patched) : patched;
    keep_identity(object, metadata);
    admit_update(t, object, before);
    return true;
  });
  return written(route, stale, updated);
}

// The answer to a PATCH or PUT: the object as served, 409 when it was stale, else 404.
HttpResponse Api::written(const Route& route, bool stale, const std::optional<json>& updated) {
  const ResourceType& t = *route.type;
  if (stale) {
    return status_response(409, "Conflict", conflict_message(t, route.name));
  }
  if (!updated) {
    return status_response(404, "NotFound", not_found(t, route.name));
  }
  return ok(served_form(t, *updated));
}

HttpResponse Api::patch_deployment(const Route& route, const HttpRequest& request) {
  bool scale = route.type->name == "deployments/scale";
  bool restart = false;
  std::optional<int> replicas;
  std::optional<json> updated = store_.update(route.type->store_key, route.name, [&](json& object) {
    json before = object;
    json patched = scale ? scale_of(object) : object;
    patched = apply_patch(patched, request.content_type, request.body);
    if (scale) {
      object["spec"]["replicas"] = patched["spec"]["replicas"];
    } else {
      // Clients may change the spec and the labels and annotations; the rest is the lab's.
      object["spec"] = patched["spec"];
      object["metadata"]["labels"] = patched["metadata"]["labels"];
      object["metadata"]["annotations"] = patched["metadata"]["annotations"];
      if (before["metadata"].value("annotations", json::object()).contains(kWorkload)) {
        object["metadata"]["annotations"][kWorkload] = "lab";  // still the lab's to run
      }
    }
    if (!object["spec"]["replicas"].is_number_integer() || object["spec"]["replicas"] < 0) {
      throw Error("spec.replicas must be a whole number of at least 0");
    }
    restart = object["spec"]["template"] != before["spec"]["template"];
    if (object["spec"]["replicas"] != before["spec"]["replicas"]) {
      replicas = object["spec"]["replicas"].get<int>();
    }
    if (restart || replicas) {
      object["metadata"]["generation"] = before["metadata"]["generation"].get<int64_t>() + 1;
    }
    return true;
  });
  if (!updated) {
    return status_response(404, "NotFound",
                           fmt::format("deployments.apps \"{}\" not found", route.name));
  }
  // The lab acts on the change as its own controllers would: a new revision or a new size.
  bool acted = false;
  if (restart && hooks_.restart) {
    acted = hooks_.restart(route.name);
  }
  if (replicas && hooks_.scale) {
    acted = hooks_.scale(route.name, *replicas) || acted;
  }
  if ((restart || replicas) && !acted) {
    // A Deployment no workload runs (seeded, or a client's): observed at once, no pods.
    updated = store_.update(route.type->store_key, route.name, [](json& d) {
      d["status"]["observedGeneration"] = d["metadata"]["generation"];
      return true;
    });
  }
  if (!updated) {
    return status_response(404, "NotFound", not_found(*route.type, route.name));
  }
  return ok(scale ? scale_of(*updated) : *updated);
}

HttpResponse Api::remove(const Route& route, const HttpRequest& request) {
  const ResourceType& t = *route.type;
  std::optional<json> object = store_.get(t.store_key, route.name);
  if (!object) {
    return status_response(404, "NotFound", not_found(t, route.name));
  }
  if (t.name == "jobs") {
    return remove_job(route, request, std::move(*object));
  }
  if (t.name == "deployments") {
    if ((*object)["metadata"].value("annotations", json::object()).contains(kWorkload)) {
      return status_response(
          405, "MethodNotAllowed",
          fmt::format("deployment {} is the lab's workload: the lab ends it", route.name));
    }
    store_.erase(t.store_key, route.name);  // its ReplicaSets go with the garbage collector
    return ok(*object);
  }
  if (t.served == Served::stored) {
    store_.erase(t.store_key, route.name);
    return ok(*object);
  }
  // A pod: the lab deletes it as kubelet would; the answer shows the deletion as the API server
  // records it (deletionTimestamp = now + grace).
  if (!(*object)["metadata"].contains("deletionTimestamp")) {
    if (hooks_.delete_pod) {
      hooks_.delete_pod(route.name);
    }
    mark_deleting((*object)["metadata"], std::chrono::system_clock::now(), info_.grace);
  }
  return ok(*object);
}

// A Job's deletion with its propagationPolicy (the query's, else the DeleteOptions body's; the
// API's default for Jobs is Orphan): Background removes the Job now and its pods after;
// Foreground keeps the Job, marked, until the lab has removed its pods; Orphan leaves the pods.
HttpResponse Api::remove_job(const Route& route, const HttpRequest& request, json job) {
  std::string policy =
      route.query.count("propagationPolicy") > 0 ? route.query.at("propagationPolicy") : "";
  if (policy.empty() && !request.body.empty()) {
    json options = parse_body(request.body);
    policy = options.is_object() ? options.value("propagationPolicy", "") : "";
  }
  policy = policy.empty() ? "Orphan" : policy;
  if (policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    throw Error(fmt::format("propagationPolicy: Unsupported value: \"{}\"", policy));
  }
  if (policy == "Foreground") {
    std::optional<json> marked = store_.update("batch/jobs", route.name, [](json& j) {
      j["metadata"]["deletionTimestamp"] = rfc3339(std::chrono::system_clock::now());
      j["metadata"]["finalizers"] = json::array({"foregroundDeletion"});
      return true;
    });
    job = marked.value_or(job);
  } else {
    store_.erase("batch/jobs", route.name);
  }
  if (hooks_.delete_job) {
    hooks_.delete_job(route.name, policy);
  }
  return ok(job);
}

HttpResponse Api::create(const Route& route, const HttpRequest& request) {
  const ResourceType& t = *route.type;
  json object = parse_body(request.body);
  check_body(object, t);
  if (t.group == "events.k8s.io") {
    object = event_to_core(object);
  }
  json& meta = object["metadata"];
  std::string ns = route.ns.empty() ? meta.value("namespace", info_.ns) : route.ns;
  if (t.namespaced && meta.contains("namespace") && meta["namespace"] != ns) {
    throw Error(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  std::string name = admitted_name(meta, t.kind);
  meta["name"] = name;
  meta["uid"] = random_uid();
  meta["creationTimestamp"] = rfc3339(std::chrono::system_clock::now());
  if (t.namespaced) {
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  meta.erase("resourceVersion");
  object["apiVersion"] = t.group == "events.k8s.io" ? "v1" : t.api_version();
  object["kind"] = t.kind;
  if (t.name == "jobs") {
    // The lab's job runner makes the pods, as the job controller would.
    object = admit_job(object, info_, std::chrono::system_clock::now());
  } else if (t.name == "deployments") {
    object = admit_deployment(object);  // stored, not run: the lab runs only its workloads
  } else if (t.name == "daemonsets") {
    object = admit_daemon_set(object);  // the lab's daemon runner makes the pods
  } else if (t.name == "namespaces") {
    object["spec"] = {{"finalizers", {"kubernetes"}}};
    object["status"] = {{"phase", "Active"}};
  }
  std::optional<json> stored = store_.create(t.store_key, object);
  if (!stored) {
    return status_response(409, "AlreadyExists",
                           fmt::format("{}{} \"{}\" already exists", t.name,
                                       t.group.empty() ? "" : "." + t.group, name));
  }
  if (t.name == "jobs" && hooks_.create_job) {
    hooks_.create_job(name);
  }
  return ok(served_form(t, *stored), 201);
}

HttpResponse Api::replace(const Route& route, const HttpRequest& request) {
  const ResourceType& t = *route.type;
  if (t.served != Served::stored) {
    return status_response(405, "MethodNotAllowed",
                           fmt::format("the lab does not update {}; patch it", t.name));
  }
  json body = parse_body(request.body);
  check_body(body, t);
  if (body["metadata"].value("name", route.name) != route.name) {
    throw Error(fmt::format("the name of the object ({}) does not match the name on the URL ({})",
                            body["metadata"].value("name", ""), route.name));
  }
  bool stale = false;
  std::optional<json> updated = store_.update(t.store_key, route.name, [&](json& object) {
    if (!fresh(body, object)) {
      stale = true;
      return false;
    }
    json before = object;
    object = t.group == "events.k8s.io" ? event_to_core(body) : body;
    object["apiVersion"] = t.group == "events.k8s.io" ? "v1" : t.api_version();
    object["kind"] = t.kind;
    keep_identity(object, before["metadata"]);
    admit_update(t, object, before);
    return true;
  });
  return written(route, stale, updated);
}

HttpResponse Api::review(const HttpRequest& request) const {
  json review = parse_body(request.body);
  const json& attributes = review["spec"].value("resourceAttributes", json::object());
  std::string resource = attributes.value("resource", "");
  std::string sub = attributes.value("subresource", "");
  std::string verb = attributes.value("verb", "");
  std::string key = verb + "/" + resource + (sub.empty() ? "" : "/" + sub);
  bool denied = options_.deny.count(key) > 0 || options_.deny.count("*/" + resource) > 0;
  review["apiVersion"] = "authorization.k8s.io/v1";
  review["kind"] = "SelfSubjectAccessReview";
  review["metadata"] = {{"creationTimestamp", nullptr}};
  review["status"] = {{"allowed", !denied}};
  if (denied) {
    review["status"]["reason"] = "denied by the lab's --kube-api-deny";
  }
  return ok(review, 201);
}

}  // namespace zerodrop::kubeapi
