// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/routers/router.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/listen.h"
#include "lab/recording/recorder.h"
#include "lab/routers/ingress.h"
#include "lab/routers/router_core.h"

namespace zerodrop::lab {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::string to_string(Dataplane dataplane) {
  switch (dataplane) {
    case Dataplane::l4:
      return "l4";
    case Dataplane::l7:
      return "l7";
    case Dataplane::nftables:
      return "nftables";
    case Dataplane::iptables:
      return "iptables";
  }
  return "l4";
}

std::string dataplane_flag(Dataplane dataplane) {
  return "--dataplane " + to_string(dataplane);
}

bool in_kernel(Dataplane dataplane) {
  return dataplane == Dataplane::nftables || dataplane == Dataplane::iptables;
}

std::string to_string(DataplaneSync sync) {
  return sync == DataplaneSync::atomic ? "atomic" : "kube-proxy";
}

std::optional<DataplaneSync> dataplane_sync_from_string(std::string_view text) {
  if (text == "kube-proxy") {
    return DataplaneSync::kube_proxy;
  }
  if (text == "atomic") {
    return DataplaneSync::atomic;
  }
  return std::nullopt;
}

std::unique_ptr<Router> Router::start(const RouterOptions& options, Recorder* recorder) {
  if (options.ingress != Ingress::none) {
    return start_ingress(options, recorder);
  }
  if (in_kernel(options.dataplane)) {
    return start_kube_proxy(options, recorder);
  }
  return options.dataplane == Dataplane::l4 ? start_l4(options, recorder)
                                            : start_l7(options, recorder);
}

RouterCore::RouterCore(const RouterOptions& options, Balance balance, Recorder* recorder)
    : acceptor_(open_listener(io_, options.listen_host, options.listen_port,
                              fmt::format("router {}", options.name))),
      options_(options),
      balance_(balance),
      recorder_(recorder),
      port_(acceptor_.local_endpoint().port()),
      rng_(options.seed),
      due_(io_, clock_, [this](std::vector<EndpointChange> due) {
        for (const EndpointChange& change : due) {
          apply(change);
        }
      }) {}

RouterCore::~RouterCore() {
  stop();
}

void RouterCore::stop() {
  io_.stop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void RouterCore::run() {
  accept();
  thread_ = std::thread([this] { io_.run(); });
}

void RouterCore::schedule(const EndpointChange& change, Duration delay) {
  due_.add(change, delay);
}

void DueChanges::add(const EndpointChange& change, Duration delay) {
  Clock::time_point at;
  {
    std::lock_guard lock(mutex_);
    at = schedule_.add(change, clock_.now(), delay);
  }
  ++unapplied_;
  boost::asio::post(io_, [this, at] {
    auto timer = std::make_shared<boost::asio::steady_timer>(io_, at);
    timer->async_wait([this, timer](boost::system::error_code ec) {
      if (!ec) {
        apply_due();
      }
    });
  });
}

void DueChanges::apply_due() {
  std::vector<EndpointChange> due;
  {
    std::lock_guard lock(mutex_);
    due = schedule_.take_due(clock_.now());
  }
  size_t n = due.size();
  apply_(std::move(due));
  unapplied_ -= n;
}

record::Event applied_event(const EndpointChange& change, const std::string& router) {
  record::Event e;
  e.kind = record::EventKind::router_applied;
  e.pod = change.endpoint.pod;
  e.router = router;
  if (change.removed) {
    e.detail = "removed";
  } else {
    e.conditions = change.endpoint.conditions;
  }
  return e;
}

Clock::time_point RouterCore::stamp() {
  last_stamp_ = std::max(clock_.now(), last_stamp_ + std::chrono::microseconds(1));
  return last_stamp_;
}

void RouterCore::apply(const EndpointChange& change) {
  Clock::time_point at = stamp();
  table_.apply(change);
  if (recorder_ != nullptr) {
    recorder_->event_at(at, applied_event(change, options_.name));
  }
}

const Endpoint* RouterCore::choose(const std::vector<std::string>& skip) {
  std::vector<const Endpoint*> usable = table_.usable();
  std::erase_if(usable, [&](const Endpoint* e) {
    return std::find(skip.begin(), skip.end(), e->pod) != skip.end();
  });
  if (usable.empty()) {
    return nullptr;
  }
  if (balance_ == Balance::random) {
    std::uniform_int_distribution<size_t> pick(0, usable.size() - 1);
    return usable[pick(rng_)];
  }
  return usable[next_++ % usable.size()];
}

void RouterCore::remember_client(uint16_t client_port, const std::string& pod) {
  Clock::time_point at = stamp();
  std::lock_guard lock(clients_mutex_);
  clients_.add(client_port, ClientConnection{pod, at});
}

void RouterCore::connection_fate(uint16_t client_port, record::BackendFate fate) {
  Clock::time_point now = clock_.now();
  std::lock_guard lock(clients_mutex_);
  ClientConnection* c = clients_.latest_to_update(client_port);
  if (c == nullptr) {
    clients_.add(client_port, ClientConnection{});
    c = clients_.latest_to_update(client_port);
  }
  if (c->fate == record::BackendFate::open) {
    c->fate = fate;
    c->fate_at = now;
  }
}

std::optional<ClientConnection> RouterCore::connection_of(uint16_t client_port) const {
  std::lock_guard lock(clients_mutex_);
  return clients_.latest(client_port);
}

std::optional<ClientConnection> RouterCore::connection_by(uint16_t client_port,
                                                          Clock::time_point t) const {
  std::lock_guard lock(clients_mutex_);
  return clients_.latest_by(client_port, t);
}

void ClientConnections::add(uint16_t client_port, ClientConnection c) {
  constexpr size_t kKept = 8;  // a port reused within a run: its earlier connections still join
  std::deque<ClientConnection>& kept = by_port_[client_port];
  kept.push_back(std::move(c));
  if (kept.size() > kKept) {
    kept.pop_front();
  }
}

ClientConnection* ClientConnections::latest_to_update(uint16_t client_port) {
  auto it = by_port_.find(client_port);
  return it == by_port_.end() || it->second.empty() ? nullptr : &it->second.back();
}

std::optional<ClientConnection> ClientConnections::latest(uint16_t client_port) const {
  auto it = by_port_.find(client_port);
  return it == by_port_.end() || it->second.empty()
             ? std::nullopt
             : std::optional<ClientConnection>(it->second.back());
}

std::optional<ClientConnection> ClientConnections::latest_by(uint16_t client_port,
                                                             Clock::time_point t) const {
  auto it = by_port_.find(client_port);
  if (it == by_port_.end()) {
    return std::nullopt;
  }
  for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) {
    if (c->bound_at <= t) {
      return *c;
    }
  }
  return std::nullopt;
}

record::BackendFate fate_of_close(const SocketClose& close, record::BackendFate seen,
                                  bool request_read) {
  if (close.by_exit) {
    return seen;
  }
  if (close.reset) {
    return record::BackendFate::idle_closed;
  }
  return request_read ? record::BackendFate::closed : record::BackendFate::idle_closed;
}

std::optional<std::string> RouterCore::backend_of(uint16_t client_port) const {
  auto c = connection_of(client_port);
  return c ? std::optional<std::string>(c->pod) : std::nullopt;
}

void RouterCore::refused(const std::string& pod, const std::string& why) {
  ++refusals_;
  if (recorder_ == nullptr) {
    return;
  }
  record::Event e;
  e.kind = record::EventKind::router_refused;
  e.pod = pod;
  e.router = options_.name;
  e.detail = why;
  recorder_->event(std::move(e));
}

}  // namespace zerodrop::lab
