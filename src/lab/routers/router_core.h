#pragma once

// Internal to the lab's routers (includes Asio): the state both dataplanes share.

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include <boost/asio.hpp>

#include "base/clock.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {

// Endpoint changes waiting for their propagation time on a router's io_context. Each timer
// takes every change due by then, oldest first (Asio may run timers for one instant in any
// order), and hands them to `apply` on the io_context's thread.
class DueChanges {
public:
  using Apply = std::function<void(std::vector<EndpointChange>)>;

  DueChanges(boost::asio::io_context& io, const Clock& clock, Apply apply)
      : io_(io), clock_(clock), apply_(std::move(apply)) {}

  // Safe from any thread.
  void add(const EndpointChange& change, Duration delay);

  // Every change added so far has been through `apply` (which a busy machine can run late, after
  // the change's due time). Safe from any thread.
  bool settled() const { return unapplied_ == 0; }

private:
  void apply_due();

  boost::asio::io_context& io_;
  const Clock& clock_;
  Apply apply_;
  std::mutex mutex_;
  PropagationSchedule schedule_;
  std::atomic<size_t> unapplied_{0};  // added, not yet through apply_
};

// Without the kernel's account of the close (SocketTrace): a backend close that comes this soon
// after a request was forwarded (or sent) had already left the pod when the request arrived (the
// idle-close race). On loopback a FIN or RST takes microseconds; a busy machine can delay the
// pod's close past it, which is why the kernel's account is preferred.
constexpr std::chrono::milliseconds kIdleCloseRace{1};

// The client connections a router bound, by client port: the latest few per port, oldest first,
// so that a port reused within a run still joins its earlier connections. Not thread-safe.
class ClientConnections {
public:
  // Keeps `c` as the latest connection from `client_port`.
  void add(uint16_t client_port, ClientConnection c);
  // The latest connection from `client_port` to update in place, null if none.
  ClientConnection* latest_to_update(uint16_t client_port);
  // The latest connection from `client_port`.
  std::optional<ClientConnection> latest(uint16_t client_port) const;
  // The latest connection from `client_port` bound by `t`.
  std::optional<ClientConnection> latest_by(uint16_t client_port, Clock::time_point t) const;

private:
  std::unordered_map<uint16_t, std::deque<ClientConnection>> by_port_;
};

// The router_applied event of `change` at `router` (its time is the caller's).
record::Event applied_event(const EndpointChange& change, const std::string& router);

// How a proxy picks among the usable endpoints: at random, as kube-proxy's iptables statistic
// match does (l4), or in turn, as nginx's round robin does (l7).
enum class Balance { random, round_robin };

// What the l4 and l7 proxies share: the io_context and its thread, the listener, the endpoint
// table (touched only on the router's thread) and the records of choices and refusals.
class RouterCore : public Router {
public:
  RouterCore(const RouterOptions& options, Balance balance, Recorder* recorder);
  ~RouterCore() override;

  const std::string& name() const override { return options_.name; }

  uint16_t port() const override { return port_; }

  void schedule(const EndpointChange& change, Duration delay) override;
  std::optional<std::string> backend_of(uint16_t client_port) const override;
  std::optional<ClientConnection> connection_of(uint16_t client_port) const override;
  std::optional<ClientConnection> connection_by(uint16_t client_port,
                                                Clock::time_point t) const override;

  uint64_t refusals() const override { return refusals_; }

  // Every change scheduled so far is in the endpoint table (the lab waits for this, not only for
  // the changes' due time, before it sends the first request).
  bool settled() const override { return due_.settled(); }

  // Starts accepting; called once the derived proxy is constructed.
  void run();
  // Stops and joins the thread: a derived proxy calls it first in its destructor, so that no
  // handler runs while its members are destroyed.
  void stop();
  virtual void accept() = 0;

  // A usable endpoint, picked as the proxy's Balance says; `skip` excludes pods already tried.
  // Null when none is usable.
  const Endpoint* choose(const std::vector<std::string>& skip = {});
  // Records that the client connection from `client_port` is bound to `pod`, stamped now.
  void remember_client(uint16_t client_port, const std::string& pod);
  // Records what became of the backend connection of the client connection from `client_port`,
  // stamped now; only the first fate of a connection is kept.
  void connection_fate(uint16_t client_port, record::BackendFate fate);
  // Records a failed backend connection (router_refused) for `pod` ("" when none was usable).
  void refused(const std::string& pod, const std::string& why);

  boost::asio::io_context& io() { return io_; }

  Clock::time_point now() const { return clock_.now(); }

  boost::asio::ip::tcp::acceptor& acceptor() { return acceptor_; }

  const RouterOptions& options() const { return options_; }

private:
  void apply(const EndpointChange& change);
  // Now, but at least 1 µs after the previous stamp: the router's updates and binds, stamped on
  // its one thread, keep in the record the order it did them in, even within a microsecond.
  Clock::time_point stamp();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  RouterOptions options_;
  Balance balance_;
  Recorder* recorder_;
  uint16_t port_ = 0;
  EndpointTable table_;
  std::mt19937_64 rng_;
  size_t next_ = 0;
  SteadyClock clock_;
  Clock::time_point last_stamp_{};  // router thread only
  DueChanges due_;
  mutable std::mutex clients_mutex_;
  ClientConnections clients_;
  std::atomic<uint64_t> refusals_{0};
  std::thread thread_;
};

// Factories for the dataplanes (l4_proxy.cc, l7_proxy.cc, nft_router.cc).
std::unique_ptr<Router> start_l4(const RouterOptions& options, Recorder* recorder);
std::unique_ptr<Router> start_l7(const RouterOptions& options, Recorder* recorder);
// kube-proxy's rules in the node's namespace, nftables or iptables by options.dataplane. Throws
// Error naming what is missing (nft, iptables-restore, nf_tables, conntrack events).
std::unique_ptr<Router> start_kube_proxy(const RouterOptions& options, Recorder* recorder);

}  // namespace zerodrop::lab
