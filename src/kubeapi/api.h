#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "kubeapi/discovery.h"
#include "kubeapi/objects.h"
#include "kubeapi/selector.h"
#include "kubeapi/store.h"
#include "kubeapi/table.h"

namespace zerodrop::kubeapi {

// What the API asks of the lab when a client acts. Each is called on the server's connection
// thread and must hand the work to the lab's own thread.
struct LabHooks {
  // The pod template (restart) or spec.replicas (scale) of Deployment `deployment` changed; true
  // when a workload of the lab acts on it (else the Deployment is only stored, and its status
  // says the change was observed at once: it runs no pods).
  std::function<bool(const std::string& deployment)> restart;
  std::function<bool(const std::string& deployment, int replicas)> scale;
  std::function<void(const std::string& pod)> delete_pod;       // DELETE of a pod
  std::function<std::string(const std::string& pod)> log_path;  // the pod's log file
  std::function<void(const std::string& job)> create_job;       // a Job was stored
  // DELETE of a Job: "Background" and "Foreground" delete its pods, "Orphan" leaves them.
  std::function<void(const std::string& job, const std::string& propagation)> delete_job;
};

struct ApiOptions {
  std::string token;           // required as "Authorization: Bearer TOKEN"
  std::set<std::string> deny;  // "verb/resource" refused (403) and denied in access reviews
  std::string server_address;  // "127.0.0.1:PORT" for /api; empty: not advertised
  Duration bookmark_interval = std::chrono::seconds(1);
};

struct HttpRequest {
  std::string method;
  std::string target;  // origin form: "/api/v1/pods?watch=true"
  std::string body;
  std::string authorization;
  std::string content_type;
  std::string accept;  // "…;as=Table;…": kubectl get's server-side printing
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

// A watch to stream: changes of `resource` after `since` (or every current object as ADDED
// first when `since` is absent), filtered by `selector`, until `timeout`.
struct WatchStream {
  const ResourceType* type = nullptr;
  std::string ns;  // empty: all namespaces
  std::optional<uint64_t> since;
  Selector selector;
  bool bookmarks = false;
  bool table = false;  // each event's object is a one-row Table
  Duration timeout = std::chrono::minutes(30);
};

// A pod's log, followed until the pod is gone when `follow`.
struct LogStream {
  std::string pod;
  std::string path;
  bool follow = false;
};

using Reply = std::variant<HttpResponse, WatchStream, LogStream>;

// The Kubernetes API over the Store: routing, authentication, discovery, list/get, the writes
// the lab acts on and the streams' events. Thread-safe (one call per connection thread).
class Api {
public:
  Api(Store& store, ClusterInfo info, ApiOptions options, LabHooks hooks);

  // Answers a request, or says what to stream. Never throws: errors are Status responses.
  Reply handle(const HttpRequest& request);

  // One watch event line for `object` of `type` ("ADDED", …, "BOOKMARK"), as served; `first`
  // says whether a Table carries its column definitions.
  std::string watch_line(const WatchStream& watch, const std::string& event_type,
                         const nlohmann::json& object, bool first = true) const;
  // The ERROR line ending a watch whose resourceVersion is too old (410 Gone).
  std::string expired_line(uint64_t asked, uint64_t oldest) const;
  // Whether a stored object belongs to the watch (namespace and selector).
  bool selected(const WatchStream& watch, const nlohmann::json& object) const;

  Store& store() { return store_; }

  const ApiOptions& options() const { return options_; }

private:
  struct Route {
    const ResourceType* type = nullptr;
    std::string ns;    // the request's namespace; empty for cluster scope or all namespaces
    std::string name;  // empty for a collection
    std::map<std::string, std::string> query;
    std::string verb;  // get, list, watch, create, patch, update, delete
  };

  HttpResponse discovery(const std::string& path) const;
  Reply resource(const Route& route, const HttpRequest& request);
  HttpResponse list(const Route& route, bool table);
  HttpResponse get(const Route& route, bool table);
  HttpResponse patch(const Route& route, const HttpRequest& request);
  HttpResponse remove(const Route& route, const HttpRequest& request);
  HttpResponse remove_job(const Route& route, const HttpRequest& request, nlohmann::json job);
  HttpResponse create(const Route& route, const HttpRequest& request);
  HttpResponse written(const Route& route, bool stale,
                       const std::optional<nlohmann::json>& updated);

  // A paged list's items not served yet, as of its first page (one snapshot per list).
  struct Pages {
    std::vector<nlohmann::json> items;
    uint64_t rv = 0;
  };

  // Keeps the rest of a paged list (limit) and returns its continue token; a token's pages are
  // taken once (nullopt: unknown or already evicted, 410 for the client).
  std::string keep_pages(Pages pages);
  std::optional<Pages> take_pages(const std::string& token);
  HttpResponse replace(const Route& route, const HttpRequest& request);
  HttpResponse review(const HttpRequest& request) const;
  HttpResponse patch_deployment(const Route& route, const HttpRequest& request);
  nlohmann::json scale_of(const nlohmann::json& deployment) const;
  nlohmann::json served_form(const ResourceType& type, nlohmann::json object) const;

  Store& store_;
  ClusterInfo info_;
  ApiOptions options_;
  LabHooks hooks_;
  std::mutex pages_mutex_;
  std::map<uint64_t, Pages> pages_;  // by list id, oldest first; bounded
  uint64_t next_page_id_ = 1;
};

// A Kubernetes Status object (kind Status) with `code`, `reason` and `message`.
HttpResponse status_response(int code, const std::string& reason, const std::string& message);

// "pods \"web-1\" not found", "leases.coordination.k8s.io \"x\" not found": the API's 404 message.
std::string not_found(const ResourceType& type, const std::string& name);

// Applies a PATCH body of `content_type` (strategic-merge, merge or JSON patch) to `object`.
// Throws Error naming what it cannot apply.
nlohmann::json apply_patch(const nlohmann::json& object, const std::string& content_type,
                           const std::string& body);

}  // namespace zerodrop::kubeapi
