#include "verify/anchor.h"

#include <iostream>
#include <map>

#include <fmt/format.h>

#include "base/error.h"
#include "base/version.h"

namespace zerodrop::verify {

using Json = nlohmann::json;  // not `json`: other files of the unity build name variables so

namespace {

constexpr const char* kAnchorName = "zerodrop-verify";
constexpr const char* kAgentName = "zerodrop-verify-agent";

std::string managed_selector(const char* name) {
  return query_escape(
      fmt::format("app.kubernetes.io/managed-by=zerodrop,app.kubernetes.io/name={}", name));
}

Json list_managed(const ApiClient& client, const std::string& path, const char* name) {
  ApiResponse r = client.get(fmt::format("{}?labelSelector={}", path, managed_selector(name)));
  if (!r.ok()) {
    throw Error(fmt::format("cannot list {}: {}", path.substr(path.rfind('/') + 1), error_text(r)));
  }
  Json doc = Json::parse(r.body, nullptr, false);
  return doc.is_object() ? doc.value("items", Json::array()) : Json::array();
}

// DELETE `dir`/`name` (what: "configmap") in the background: what it owns goes after it.
void delete_in_background(const ApiClient& client, const std::string& dir, const char* what,
                          const std::string& name) {
  ApiResponse r =
      client.request(Method::remove, dir + "/" + name + "?propagationPolicy=Background");
  if (!r.ok() && r.status != 404) {  // 404: gone meanwhile (the garbage collector was first)
    throw Error(fmt::format("cannot delete {}/{}: {}", what, name, error_text(r)));
  }
}

}  // namespace

Json run_labels(const std::string& run_id, const std::string& name) {
  return {{"app.kubernetes.io/managed-by", "zerodrop"},
          {"app.kubernetes.io/name", name},
          {"zerodrop.dev/run", run_id}};
}

Json anchor_manifest(const std::string& namespace_name, const std::string& run_id,
                     const std::string& deployment) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", std::string(kAnchorName) + "-" + run_id},
            {"namespace", namespace_name},
            {"labels", run_labels(run_id, kAnchorName)}}},
          {"data",
           {{"deployment", deployment},
            {"started", rfc3339_now()},
            {"zerodrop", std::string(base::version())},
            {"purpose",
             "zerodrop verify's run: owns every object it created; delete it to remove them"}}}};
}

Json anchor_reference(const std::string& name, const std::string& uid) {
  // No blockOwnerDeletion: setting it needs update on the owner's finalizers, which verify's
  // Role does not grant.
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", name}, {"uid", uid}};
}

Anchor::Anchor(const ApiClient& client, std::string namespace_name, std::string run_id,
               const std::string& deployment)
    : client_(client), namespace_name_(std::move(namespace_name)) {
  Json manifest = anchor_manifest(namespace_name_, run_id, deployment);
  name_ = manifest["metadata"]["name"].get<std::string>();
  ApiResponse r = client_.request(
      Method::post,
      fmt::format("/api/v1/namespaces/{}/configmaps?fieldManager=zerodrop-verify", namespace_name_),
      manifest.dump());
  Json created = r.ok() ? Json::parse(r.body, nullptr, false) : Json();
  if (!r.ok() || !created.is_object() || !created["metadata"].is_object()
      || created["metadata"].value("uid", "").empty()) {
    throw Error(fmt::format("cannot create the run's anchor configmap/{}: {}", name_,
                            r.ok() ? "the answer carries no uid" : error_text(r)));
  }
  uid_ = created["metadata"]["uid"].get<std::string>();
}

Anchor::~Anchor() {
  if (kept_) {
    return;
  }
  try {
    delete_in_background(client_, fmt::format("/api/v1/namespaces/{}/configmaps", namespace_name_),
                         "configmap", name_);
  } catch (const Error& e) {
    std::cerr << fmt::format(
        "zerodrop: warning: {}; 'zerodrop verify --cleanup -n {}' removes it later\n", e.what(),
        namespace_name_);
  }
}

Json Anchor::owner_reference() const {
  return anchor_reference(name_, uid_);
}

std::vector<std::string> cleanup(const ApiClient& client, const std::string& ns) {
  std::string configmaps = fmt::format("/api/v1/namespaces/{}/configmaps", ns);
  std::string jobs = fmt::format("/apis/batch/v1/namespaces/{}/jobs", ns);
  Json anchors = list_managed(client, configmaps, kAnchorName);
  Json agent_jobs = list_managed(client, jobs, kAgentName);
  std::map<std::string, std::vector<std::string>> owned;  // by the owner's uid
  std::vector<std::string> removed;
  for (const Json& job : agent_jobs) {
    const Json& meta = job["metadata"];
    Json owners = meta.value("ownerReferences", Json::array());
    std::string name = meta.value("name", "");
    if (owners.empty()) {  // no anchor would take it with it
      delete_in_background(client, jobs, "job", name);
      removed.push_back(fmt::format("job/{} (no owner)", name));
    }
    for (const Json& o : owners) {
      owned[o.value("uid", "")].push_back("job/" + name);
    }
  }
  for (const Json& anchor : anchors) {
    const Json& meta = anchor["metadata"];
    std::string name = meta.value("name", "");
    Json data = anchor.value("data", Json::object());
    std::string what = fmt::format("configmap/{} (run of deploy/{}, started {}", name,
                                   data.value("deployment", "?"), data.value("started", "?"));
    for (const std::string& o : owned[meta.value("uid", "")]) {
      what += "; owns " + o;
    }
    delete_in_background(client, configmaps, "configmap", name);
    removed.push_back(what + ")");
  }
  return removed;
}

}  // namespace zerodrop::verify
