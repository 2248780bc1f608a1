#include "watch/watch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/exit_code.h"
#include "verify/api_client.h"
#include "verify/watch.h"
#include "watch/agent_hub.h"
#include "watch/controller.h"
#include "watch/ingress.h"
#include "watch/kinds.h"
#include "watch/lease.h"
#include "watch/metrics.h"
#include "watch/runs.h"
#include "watch/server.h"

namespace zerodrop::watch {

using Json = nlohmann::json;
using Steady = std::chrono::steady_clock;

namespace {

// The API server's version; Error when it cannot be reached.
std::string server_version(const verify::ApiClient& client) {
  verify::ApiResponse r = client.get("/version");
  if (!r.ok()) {
    throw Error(fmt::format("the API server answered /version with {}: {}", r.status,
                            verify::error_text(r)));
  }
  Json j = Json::parse(r.body, nullptr, false);
  return j.is_object() ? j.value("gitVersion", "") : "";
}

// Every --namespace exists and every permission is there; one Error naming all that is missing.
void preflight(const verify::ApiClient& client, const Options& o,
               const std::vector<WorkloadResource>& kinds) {
  for (const std::string& ns : o.namespaces) {
    verify::ApiResponse r = client.get("/api/v1/namespaces/" + ns);
    if (r.status == 404) {
      throw Error(fmt::format("namespace {} does not exist (--namespace)", ns));
    }
  }
  std::vector<std::string> scopes =
      o.namespaces.empty() ? std::vector<std::string>{""} : o.namespaces;
  std::vector<verify::Permission> needed = needed_permissions(kinds, false);
  if (!o.ingress_service.empty()) {
    needed.push_back({"networking.k8s.io", "ingresses", "list"});
    needed.push_back({"networking.k8s.io", "ingresses", "watch"});
  }
  std::string missing;
  for (const std::string& ns : scopes) {
    for (const verify::Permission& p : verify::missing_permissions(client, ns, needed)) {
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", p.text());
    }
    if (!missing.empty()) {
      throw Error(fmt::format("missing permissions {}: {} (deploy/k8s/watch has the ClusterRole)",
                              ns.empty() ? "cluster-wide" : "in namespace " + ns, missing));
    }
  }
}

// The ingress controller's address (http://IP:PORT) from --ingress-service; "" when not given.
// Error naming the flag when the Service cannot be read or reached.
std::string ingress_controller(const verify::ApiClient& client, const Options& o) {
  if (o.ingress_service.empty()) {
    return "";
  }
  IngressController c = parse_ingress_service(o.ingress_service);
  verify::ApiResponse r =
      client.get(fmt::format("/api/v1/namespaces/{}/services/{}", c.namespace_name, c.name));
  if (!r.ok()) {
    throw Error(fmt::format("--ingress-service {}: {}", o.ingress_service,
                            r.status == 404 ? "no such Service" : verify::error_text(r)));
  }
  return controller_base(c, Json::parse(r.body, nullptr, false));
}

// The namespaces the selector admits now.
std::set<std::string> admitted(const verify::ApiClient& client, const std::string& selector) {
  verify::ApiResponse r =
      client.get("/api/v1/namespaces?labelSelector=" + verify::query_escape(selector));
  if (!r.ok()) {
    throw Error(fmt::format("cannot list namespaces with --namespace-selector '{}': {}", selector,
                            verify::error_text(r)));
  }
  std::set<std::string> out;
  for (const Json& ns : Json::parse(r.body).value("items", Json::array())) {
    out.insert(ns["metadata"].value("name", ""));
  }
  return out;
}

// The informers of the workloads (each kind served) and Services: listed at once (Error when
// refused), then watched on threads of their own until destruction.
class Informers {
public:
  Informers(const verify::ApiClient& client, const Options& o,
            const std::vector<WorkloadResource>& kinds, Controller& controller) {
    std::vector<std::string> prefixes;
    for (const std::string& ns : o.namespaces) {
      prefixes.push_back("/namespaces/" + ns);
    }
    if (prefixes.empty()) {
      prefixes.emplace_back("");
    }
    auto note = [](const std::string& text) {
      std::cerr << "zerodrop: watch: " << text << "\n";
    };
    // A malformed object is said and skipped: it must not end the informer's thread.
    auto guarded = [note](auto handle) {
      return [note, handle](const verify::WatchEvent& e) {
        try {
          handle(e);
        } catch (const std::exception& ex) {
          note(std::string("skipped an object: ") + ex.what());
        }
      };
    };
    for (const std::string& p : prefixes) {
      watchers_.push_back(std::make_unique<verify::Watcher>(
          client, verify::WatchTarget{"services", "/api/v1" + p + "/services", ""},
          guarded([&controller](const verify::WatchEvent& e) { controller.on_service(e); }), note));
      if (!o.ingress_service.empty()) {
        watchers_.push_back(std::make_unique<verify::Watcher>(
            client,
            verify::WatchTarget{"ingresses", "/apis/networking.k8s.io/v1" + p + "/ingresses", ""},
            guarded([&controller](const verify::WatchEvent& e) { controller.on_ingress(e); }),
            note));
      }
      for (const WorkloadResource& k : kinds) {
        watchers_.push_back(std::make_unique<verify::Watcher>(
            client, verify::WatchTarget{k.resource, k.path(p), ""},
            guarded([&controller, kind = k.kind](const verify::WatchEvent& e) {
              controller.on_workload(kind, e);
            }),
            note));
      }
    }
    for (auto& w : watchers_) {
      w->list();
    }
    for (auto& w : watchers_) {
      threads_.emplace_back([&w] { w->watch(); });
    }
  }

  ~Informers() {
    for (auto& w : watchers_) {
      w->stop();
    }
    for (auto& t : threads_) {
      t.join();
    }
  }

private:
  std::vector<std::unique_ptr<verify::Watcher>> watchers_;
  std::vector<std::thread> threads_;
};

std::string identity(const Options& o) {
  if (!o.identity.empty()) {
    return o.identity;
  }
  const char* pod = std::getenv("POD_NAME");
  if (pod != nullptr && *pod != '\0') {
    return pod;
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return fmt::format("{}-{}", host, ::getpid());
}

// The routes of watch's server.
HttpServer::Handler routes(const Options& o, Metrics& metrics, AgentHub& hub,
                           const std::atomic<bool>& leading) {
  return [&o, &metrics, &hub, &leading](const HttpRequest& req) -> HttpAnswer {
    std::string path = req.target.substr(0, req.target.find('?'));
    std::string query = req.target.find('?') == std::string::npos
                            ? ""
                            : req.target.substr(req.target.find('?') + 1);
    auto param = [&query](const std::string& name) {
      for (size_t at = 0; at < query.size();) {
        size_t end = query.find('&', at);
        std::string pair = query.substr(at, end - at);
        if (pair.starts_with(name + "=")) {
          return pair.substr(name.size() + 1);
        }
        at = end == std::string::npos ? query.size() : end + 1;
      }
      return std::string();
    };
    if (path == "/metrics") {
      return {200, "application/openmetrics-text; version=1.0.0; charset=utf-8", metrics.text()};
    }
    if (path == "/healthz") {
      return {200, "text/plain; charset=utf-8", "ok\n"};
    }
    if (path == "/readyz") {
      return leading.load() ? HttpAnswer{200, "text/plain; charset=utf-8", "leading\n"}
                            : HttpAnswer{503, "text/plain; charset=utf-8", "not the leader\n"};
    }
    if (path == "/agent/v1/report" && req.method == "POST") {
      if (!leading.load()) {
        return {503, "text/plain; charset=utf-8", "not the leader\n"};
      }
      return {200, "application/json",
              hub.report(param("pod"), param("node"), req.body, Steady::now())};
    }
    if (path == "/runs" || path == "/runs/") {
      return {200, "text/html; charset=utf-8", index_html(o.out)};
    }
    if (path.starts_with("/runs/") && req.method == "GET") {
      if (std::optional<std::string> file = run_file(o.out, path.substr(6))) {
        std::ifstream in(*file);
        std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::string type = file->ends_with(".html")   ? "text/html; charset=utf-8"
                           : file->ends_with(".json") ? "application/json"
                           : file->ends_with(".xml")  ? "application/xml"
                                                      : "text/plain; charset=utf-8";
        return {200, type, std::move(body)};
      }
    }
    return {404, "text/plain; charset=utf-8", "not found\n"};
  };
}

// The leader's work and the loop around it: the Lease every 2 s (when elected), the informers
// once leading, the controller's ticks, the proxy's health.
class Loop {
public:
  Loop(const Options& o, const verify::ApiClient& client, std::vector<WorkloadResource> kinds,
       Controller& controller, Metrics& metrics, std::atomic<bool>& leading)
      : o_(o),
        client_(client),
        kinds_(std::move(kinds)),
        controller_(controller),
        metrics_(metrics),
        leading_(leading) {
    if (o.leader_elect) {
      const char* own = std::getenv("POD_NAMESPACE");
      std::string ns = !o.lease_namespace.empty()       ? o.lease_namespace
                       : own != nullptr && *own != '\0' ? std::string(own)
                       : !o.namespaces.empty()          ? o.namespaces.front()
                                                        : "default";
      elector_.emplace(client, Elector::Options{ns, o.lease_name, identity(o), o.lease_duration,
                                                o.lease_duration * 2 / 3, own_pod(ns)});
    }
  }

  // One round; an exit code when the run must end.
  std::optional<int> step(Steady::time_point now) {
    elect(now);
    if (!leading_.load()) {
      if (was_leading_) {
        std::cerr << "zerodrop: watch: lost the lease; stopping (a restart follows)\n";
        stop();
        return to_int(ExitCode::failed);
      }
      return std::nullopt;
    }
    if (!was_leading_) {
      std::cerr << fmt::format("zerodrop: watch: leading{}\n",
                               elector_ ? " (lease " + o_.lease_name + ")" : "");
      try {
        for (const std::string& name : mark_abandoned(o_.out, std::chrono::system_clock::now())) {
          std::cerr << fmt::format(
              "zerodrop: watch: {}: abandoned by a watcher killed while measuring it\n", name);
        }
      } catch (const Error& e) {
        std::cerr << "zerodrop: watch: " << e.what() << "\n";
      }
      metrics_.leader(true);
      was_leading_ = true;
    }
    if (!o_.namespace_selector.empty() && now >= next_namespaces_) {
      next_namespaces_ = now + std::chrono::seconds(30);
      controller_.set_namespaces(admitted(client_, o_.namespace_selector));
    }
    if (!informers_) {
      informers_ = std::make_unique<Informers>(client_, o_, kinds_, controller_);
      std::cerr << fmt::format("zerodrop: watch: watching {} workloads ({})\n",
                               controller_.workloads(), kinds_text(kinds_));
    }
    controller_.tick(now);
    return std::nullopt;
  }

  // Ends the informers, then every measurement (written as partial).
  void stop() {
    informers_.reset();
    controller_.stop_all();
  }

private:
  void elect(Steady::time_point now) {
    if (!elector_ || now < next_election_) {
      return;
    }
    next_election_ = now + std::chrono::seconds(2);
    try {
      leading_.store(elector_->tick(std::chrono::system_clock::now()));
    } catch (const Error& e) {
      std::cerr << "zerodrop: watch: leader election: " << e.what() << "\n";
      leading_.store(false);
    }
    metrics_.leader(leading_.load());
  }

  const Options& o_;
  const verify::ApiClient& client_;
  std::vector<WorkloadResource> kinds_;
  Controller& controller_;
  Metrics& metrics_;
  std::atomic<bool>& leading_;
  std::optional<Elector> elector_;
  std::unique_ptr<Informers> informers_;
  Steady::time_point next_election_{};
  Steady::time_point next_namespaces_{};
  bool was_leading_ = false;
};

}  // namespace

int run(const Options& o, const Finish& finish) {
  auto [host, port] = parse_listen(o.listen);
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec || ::access(o.out.c_str(), W_OK) != 0) {
    throw Error(fmt::format("--out {}: cannot write there", o.out));
  }
  verify::KubectlProxy proxy(o.kubectl);
  verify::ApiClient client(proxy.socket_path());
  std::string version = server_version(client);
  std::vector<WorkloadResource> kinds = discover_kinds(client);
  preflight(client, o, kinds);
  std::string ingress = ingress_controller(client, o);
  Metrics metrics;
  AgentHub hub(metrics);
  std::atomic<bool> leading{!o.leader_elect};
  HttpServer server(host, port, routes(o, metrics, hub, leading));
  std::cerr << fmt::format(
      "zerodrop: watch: serving /metrics, /runs/ and the agents' reports on {}:{} (API {}); run "
      "folders in {}\n",
      host, server.port(), version, o.out);
  Controller controller(o, {client, finish, metrics, hub, version, ingress});
  Loop loop(o, client, kinds, controller, metrics, leading);
  while (!o.interrupted || !o.interrupted->load()) {
    if (std::optional<int> code = loop.step(Steady::now())) {
      return *code;
    }
    if (!proxy.running()) {
      std::cerr << fmt::format("zerodrop: error: watch: kubectl proxy exited ({})\n",
                               proxy.last_error());
      loop.stop();
      return to_int(ExitCode::usage);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  loop.stop();
  return to_int(ExitCode::ok);
}

}  // namespace zerodrop::watch
