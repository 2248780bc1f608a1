#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/duration.h"
#include "lab/routers/endpoint_table.h"
#include "lab/routers/socket_trace.h"
#include "record/run_record.h"

namespace zerodrop::lab {

class Recorder;

// How a router forwards traffic.
enum class Dataplane {
  l4,  // kube-proxy with conntrack: a backend per new TCP connection, kept for its life
  l7,  // an ingress: a backend per HTTP request, upstream keep-alive pool, 502 on failure
  // kube-proxy's nftables mode in the kernel: each node a network namespace whose rules DNAT
  // the Service address to a pod chosen per connection, kept by conntrack (nft_router.cc; root)
  nftables,
  // kube-proxy's iptables mode, the same nodes and conntrack: KUBE-SVC / KUBE-SEP chains
  // programmed by one iptables-restore per change (kube_proxy_iptables.cc; root)
  iptables,
};

// "l4", "l7", "nftables" or "iptables", as --dataplane takes it.
std::string to_string(Dataplane dataplane);

// "--dataplane iptables": what every error of a dataplane's setup begins with, so that it names
// the dataplane the user chose.
std::string dataplane_flag(Dataplane dataplane);

// Whether kube-proxy's rules run in the kernel, each node a network namespace.
bool in_kernel(Dataplane dataplane);

// How a kernel node writes an endpoint change (--dataplane-sync; docs/dataplane-sync.md).
enum class DataplaneSync : uint8_t {
  // As kube-proxy's partial sync: the Service's chains flushed and refilled in one transaction
  // (a new connect crossing it can get no NAT: proxy-sync-loss).
  kube_proxy,
  // New chains built whole, then one plain rule pointed at them (nftables: the Service chain's
  // goto; iptables: KUBE-SERVICES' jump), the old chains deleted later.
  atomic,
};

// "kube-proxy" or "atomic", as --dataplane-sync takes it.
std::string to_string(DataplaneSync sync);
std::optional<DataplaneSync> dataplane_sync_from_string(std::string_view text);

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
  // l4: the kernel's account of who closed each backend connection (the pod's own close or its
  // exit, FIN or reset), shared by the routers; null to judge by timing alone.
  SocketTrace* socket_trace = nullptr;
  int netns = -1;  // nftables: the node's network namespace (NodeNetwork)
  DataplaneSync dataplane_sync = DataplaneSync::kube_proxy;  // kernel: how a change is written
  int dataplane_churn = 0;  // kernel: more syncs a second, the same endpoints written again
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
  // nftables: the connection's ends as the pod sees them (its own, then the client's after the
  // kernel's NAT), for the kernel's account of its close; unset for a proxy's connections.
  std::optional<std::pair<SocketAddress, SocketAddress>> pod_ends;
  // nftables: the kernel gave the connection no NAT (it went to the Service's own address).
  bool untranslated = false;
};

// What became of a backend connection that ended under a pending request, by the kernel's
// account `close` of it: its exit ended it (`seen`, the reset or FIN the client got), or the pod's
// own close did: a reset means the request sat unread (the pod took the connection for idle); a
// FIN, that the pod had read it (`request_read`) or that it arrived after the close.
record::BackendFate fate_of_close(const SocketClose& close, record::BackendFate seen,
                                  bool request_read);

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

  // Where clients connect: the router's listener, or (nftables) the Service's ClusterIP.
  virtual std::string host() const { return "127.0.0.1"; }

  // The network namespace clients connect from (a descriptor), -1 for the lab's own.
  virtual int netns() const { return -1; }

  // Whether the router sees what becomes of each connection to its pod (a proxy does; the
  // kernel's DNAT does not): without it a request's backend fate is join_report()'s.
  virtual bool sees_backend_fates() const { return true; }

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
  // connect to the pod it names is a refused backend connection; the kernel's datapath: what
  // became of the pod's end of `connection`, the client connection the caller joined `request`
  // to). Nothing by default.
  virtual void join_report(record::RequestRecord& request,
                           const std::optional<ClientConnection>& connection) const {
    (void)request;
    (void)connection;
  }

  // Once the load has stopped, before the record is taken: records what the router's own logs
  // say of the run's failed requests (a real ingress: router-log notes, record::kRouterLog).
  // Nothing by default.
  virtual void finish() {}
};

}  // namespace zerodrop::lab
