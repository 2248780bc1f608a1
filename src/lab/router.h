#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/duration.h"
#include "lab/endpoint_table.h"
#include "record/run_record.h"

namespace zerodrop::lab {

class Recorder;

// How a router forwards traffic.
enum class Dataplane {
  l4,  // kube-proxy with conntrack: a backend per new TCP connection, kept for its life
  l7,  // an ingress: a backend per HTTP request, upstream keep-alive pool, 502 on failure
};

// Which program routes an l7 node: zerodrop's own proxy, or a real ingress reconfigured at each
// propagation time as its controller does it (ingress.cc).
enum class Ingress {
  none,     // the l7 router (l7_proxy.cc)
  nginx,    // Debian's nginx: the upstream block rewritten, then a graceful reload (SIGHUP)
  haproxy,  // Debian's HAProxy: servers added, set to maint and deleted through its runtime API
};

struct RouterOptions {
  std::string name = "node-1";
  Dataplane dataplane = Dataplane::l4;
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;  // 0 = any free port
  int retries = 0;           // l7: more attempts after a connect failure (idempotent methods)
  Duration connect_timeout = std::chrono::seconds(1);    // to a backend
  Duration upstream_timeout = std::chrono::seconds(30);  // l7: a backend's whole response
  uint64_t seed = 1;                                     // l4 picks backends at random
  Ingress ingress = Ingress::none;                       // l7 only
  std::string ingress_dir;  // a real ingress's config, logs and sockets; created if missing
};

// What an l4 router knows of one client connection: the pod it chose and what became of its
// backend connection. The first fate sticks: a reset that follows the pod's close changes nothing.
struct ClientConnection {
  std::string pod;  // "" when no endpoint was usable
  // When the router chose `pod`, at the accept: a client may write its request later (a busy
  // machine), so this, not the send time, is what the router's updates compare with.
  Clock::time_point bound_at{};
  record::BackendFate fate = record::BackendFate::open;
  Clock::time_point fate_at{};  // when the router saw the fate (unset while open)
};

// One node's router: a proxy on its own thread, with its own view of the endpoints that changes
// only when it applies a change (after its propagation delay). Records router_applied for every
// applied change and router_refused for every backend connection that failed. Thread-safe.
class Router {
public:
  // Listens and starts the router's thread. `recorder` may be null (benchmarks). Throws Error
  // when it cannot listen.
  static std::unique_ptr<Router> start(const RouterOptions& options, Recorder* recorder);
  virtual ~Router() = default;  // stops the thread and closes every connection

  virtual const std::string& name() const = 0;
  virtual uint16_t port() const = 0;
  // Applies `change` `delay` from now, but never before a change scheduled earlier (a watch
  // stream is ordered).
  virtual void schedule(const EndpointChange& change, Duration delay) = 0;
  // l4: the pod chosen for the latest client connection from `client_port`, if any.
  virtual std::optional<std::string> backend_of(uint16_t client_port) const = 0;
  // l4: the latest client connection from `client_port`, with its backend connection's fate.
  virtual std::optional<ClientConnection> connection_of(uint16_t client_port) const = 0;

  // l4: the latest client connection from `client_port` accepted by `t` (a later one may have
  // reused the port since; the router keeps a few per port).
  virtual std::optional<ClientConnection> connection_by(uint16_t client_port,
                                                        Clock::time_point t) const {
    std::optional<ClientConnection> c = connection_of(client_port);
    return c && c->bound_at <= t ? c : std::nullopt;
  }
  // The number of connections whose backend connection failed (refused, timed out, none left).
  virtual uint64_t refusals() const = 0;

  // Whether every change scheduled so far has been applied, or is simply not due yet: a real
  // ingress that is still reloading is not settled. Zerodrop's routers apply when due.
  virtual bool settled() const { return true; }

  // Adds to `request` what the router itself reported about it (a real ingress: a failed
  // connect to the pod it names is a refused backend connection). Nothing by default.
  virtual void join_report(record::RequestRecord& request) const { (void)request; }
};

}  // namespace zerodrop::lab
