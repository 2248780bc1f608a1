// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
// kube-proxy's nftables or iptables mode as a lab router: the node's namespace holds the rules,
// the kernel chooses a pod per connection and conntrack keeps it; this router only programs the
// rules at the propagation time and reads the kernel's choices back from conntrack's events.
#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "base/netns.h"
#include "lab/kernel/conntrack_events.h"
#include "lab/kernel/kube_proxy_iptables.h"
#include "lab/kernel/kube_proxy_rules.h"
#include "lab/kernel/node_network.h"
#include "lab/recording/recorder.h"
#include "lab/routers/router_core.h"
#include "lab/routers/socket_trace.h"

namespace zerodrop::lab {

namespace {

namespace asio = boost::asio;

std::string ipv4_text(uint32_t network_order) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &network_order, text, sizeof text);
  return text;
}

// One node's kube-proxy in nftables or iptables mode. Its thread lives in the node's namespace:
// it commits each due endpoint change as one transaction (KubeProxyRules), stamps router_applied
// once the kernel has it, and reads conntrack's NEW events, each the kernel's choice of pod for a
// client connection.
class NftRouter final : public Router {
public:
  NftRouter(const RouterOptions& options, Recorder* recorder)
      : options_(options),
        recorder_(recorder),
        due_(io_, clock_, [this](std::vector<EndpointChange> due) {
          for (const EndpointChange& change : due) {
            apply(change);
          }
        }) {}

  ~NftRouter() override {
    io_.stop();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  // Starts the thread in the node's namespace; throws Error when the rules or the conntrack
  // listener cannot be set up there.
  void start() {
    std::promise<std::string> ready;
    std::future<std::string> error = ready.get_future();
    thread_ = std::thread([this, &ready] {
      std::string why = setup();
      bool ok = why.empty();
      ready.set_value(std::move(why));
      if (ok) {
        watch();
        churn();
        io_.run();
      }
    });
    if (std::string why = error.get(); !why.empty()) {
      throw Error(why);
    }
  }

  const std::string& name() const override { return options_.name; }

  uint16_t port() const override { return service_.port; }

  std::string host() const override { return service_.ip; }

  int netns() const override { return options_.netns; }

  bool sees_backend_fates() const override { return false; }

  void schedule(const EndpointChange& change, Duration delay) override { due_.add(change, delay); }

  // Every change scheduled so far is in the kernel (an nft transaction takes a moment).
  bool settled() const override { return due_.settled(); }

  std::optional<std::string> backend_of(uint16_t client_port) const override {
    auto c = connection_of(client_port);
    return c ? std::optional<std::string>(c->pod) : std::nullopt;
  }

  std::optional<ClientConnection> connection_of(uint16_t client_port) const override {
    std::lock_guard lock(mutex_);
    drain();
    return clients_.latest(client_port);
  }

  std::optional<ClientConnection> connection_by(uint16_t client_port,
                                                Clock::time_point t) const override {
    std::lock_guard lock(mutex_);
    drain();
    return clients_.latest_by(client_port, t);
  }

  // The backend fate of a request the pod's end of the connection broke, from the kernel's
  // account of that end's close (the client is the load itself: no proxy saw the pod's side).
  // `c` is the connection the caller joined: the lab's load joins as each request ends, to the
  // port's latest connection, whose conntrack event may have been read (and stamped) after the
  // request ended on a loaded host; looking it up again by that stamp would miss it.
  void join_report(record::RequestRecord& r,
                   const std::optional<ClientConnection>& c) const override {
    if (recorder_ == nullptr || r.local_port == 0) {
      return;
    }
    if (c && c->untranslated && r.failed) {
      r.router_error = record::kUntranslated;
    }
    if (!c || c->pod.empty()) {
      return;
    }
    std::optional<std::pair<record::BackendFate, Clock::time_point>> fate = fate_of(*c, r);
    if (fate) {
      r.backend_fate = fate->first;
      r.backend_fate_at = recorder_->since_start(fate->second);
    } else if (!r.failed) {
      r.backend_fate = record::BackendFate::open;
    }
  }

  // The kernel's refusals (a RST from a closed pod port) reach the client, not this router.
  uint64_t refusals() const override { return 0; }

private:
  // On the thread, in the node's namespace: the base ruleset, then the conntrack listener (the
  // nat chain has made the namespace track connections). "" or what failed.
  std::string setup() {
    if (!enter_namespace(options_.netns)) {
      return fmt::format("{}: cannot enter {}'s network namespace: {}",
                         dataplane_flag(options_.dataplane), options_.name, std::strerror(errno));
    }
    try {
      rules_ = options_.dataplane == Dataplane::iptables ? iptables_rules(options_.dataplane_sync)
                                                         : nft_rules(options_.dataplane_sync);
      if (std::string why = rules_->program_base(service_); !why.empty()) {
        return why;
      }
      conntrack_ = std::make_unique<ConntrackEvents>(options_.dataplane);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }

  // Reads conntrack's events as they come, on the router's thread.
  void watch() {
    events_ = std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(conntrack_->fd()));
    events_->async_wait(asio::posix::stream_descriptor::wait_read,
                        [this](boost::system::error_code ec) {
                          if (ec) {
                            return;
                          }
                          {
                            std::lock_guard lock(mutex_);
                            drain();
                          }
                          watch();
                        });
  }

  // Takes every queued conntrack event. Caller holds mutex_.
  void drain() const {
    bool complete = conntrack_->drain([this](const NewConnection& c) { on_new(c); });
    if (!complete) {
      if (!lost_events_ && recorder_ != nullptr) {
        lost_events_ = true;
        recorder_->pod_event(record::EventKind::note, "",
                             fmt::format("{}: conntrack events were lost (ENOBUFS): some "
                                         "connections have no pod in the record",
                                         options_.name));
      }
    }
  }

  // A new connection to the Service: the pod the kernel chose is the reply's source. It was
  // chosen no later than now, and no later than the commit that took that pod out of the
  // rules (its event may be read after that commit). Caller holds mutex_.
  void on_new(const NewConnection& ct) const {
    if (ipv4_text(ct.dialled) != service_.ip || ct.dialled_port != service_.port) {
      return;
    }
    uint16_t client_port = ct.client_port;
    std::string to = fmt::format("{}:{}", ipv4_text(ct.answered_by), ct.answered_by_port);
    auto pod = pods_.find(to);
    ClientConnection c{pod == pods_.end() ? "" : pod->second, clock_.now()};
    c.untranslated = ct.answered_by == ct.dialled && ct.answered_by_port == ct.dialled_port;
    if (pod == pods_.end()) {
      note_no_pod(client_port, to, c.untranslated);
    }
    if (c.untranslated && options_.dataplane_churn > 0) {
      untranslated_at_.push_back(c.bound_at);
    }
    if (auto left = left_at_.find(c.pod); left != left_at_.end()) {
      c.bound_at = std::min(c.bound_at, left->second - std::chrono::microseconds(1));
    }
    c.pod_ends = {SocketAddress{ct.answered_by, ct.answered_by_port},
                  SocketAddress{ct.replied_to, ct.replied_to_port}};
    clients_.add(client_port, std::move(c));
  }

  // A connection to the Service that the kernel sent to no pod's address: every rule of the
  // Service's chain DNATs to a pod, so this is what the lab cannot account for (docs/lab.md, "A
  // connect the kernel left untranslated"). Its request keeps no pod (join_report gives a failed
  // one router_error kUntranslated); the note is the run's evidence. The first few only. Caller
  // holds mutex_.
  void note_no_pod(uint16_t client_port, const std::string& to, bool untranslated) const {
    if (recorder_ == nullptr || untranslated_ >= kUntranslatedNotes) {
      return;
    }
    ++untranslated_;
    recorder_->pod_event(
        record::EventKind::note, "",
        fmt::format("{}: the connection from client port {} to the Service {}:{} went to {}, no "
                    "pod's address{}",
                    options_.name, client_port, service_.ip, service_.port, to,
                    untranslated ? " (the kernel did not translate it)" : ""));
  }

  // What became of the pod's end of `c` under `r`, and when: nothing for a request that did not
  // break (or failed otherwise: no account of it); refused for a failed connect; else the
  // kernel's account of the pod's close, a FIN of the pod's own taken for the idle-close race
  // (the l4 router asks its socket whether the pod acknowledged the request; the load's socket
  // cannot be asked, and a send time does not tell on a busy machine: a request stamped before
  // the close still arrived after it); without that account, by timing as the l4 router judges.
  std::optional<std::pair<record::BackendFate, Clock::time_point>> fate_of(
      const ClientConnection& c, const record::RequestRecord& r) const {
    using record::BackendFate;
    using record::Outcome;
    Clock::time_point done = recorder_->start() + r.done;
    if (r.outcome == Outcome::connect_refused || r.outcome == Outcome::connect_timeout) {
      return std::pair{BackendFate::refused, done};
    }
    bool reset =
        r.outcome == Outcome::reset_before_response || r.outcome == Outcome::reset_during_response;
    if (!reset && r.outcome != Outcome::closed_before_response
        && r.outcome != Outcome::truncated_response) {
      return std::nullopt;
    }
    BackendFate seen = reset ? BackendFate::reset : BackendFate::closed;
    if (!r.sent) {
      return std::pair{BackendFate::idle_closed, done};
    }
    Clock::time_point sent = recorder_->start() + *r.sent;
    std::optional<SocketClose> close =
        options_.socket_trace != nullptr && c.pod_ends
            ? options_.socket_trace->close_of(c.pod_ends->first, c.pod_ends->second)
            : std::nullopt;
    if (!close) {
      return std::pair{done - sent < kIdleCloseRace ? BackendFate::idle_closed : seen, done};
    }
    Clock::time_point closed_at(std::chrono::nanoseconds(close->t_ns));  // both CLOCK_MONOTONIC
    return std::pair{fate_of_close(*close, seen, false), closed_at};
  }

  // One endpoint change, one transaction. Events queued before it are read first; events read
  // during and after it for a pod it removed are of connections the old rules chose, whose bind
  // time on_new() keeps before this commit's stamp.
  void apply(const EndpointChange& change) {
    std::vector<Endpoint> before;
    std::vector<Endpoint> after;
    {
      std::lock_guard lock(mutex_);
      drain();
      before = usable();
      table_.apply(change);
      after = usable();
      pods_[fmt::format("{}:{}", change.endpoint.ip, change.endpoint.port)] = change.endpoint.pod;
    }
    std::string error = rules_->program_update(service_, before, after);
    Clock::time_point at;
    {
      std::lock_guard lock(mutex_);
      at = std::max(clock_.now(), last_stamp_ + std::chrono::microseconds(1));
      last_stamp_ = at;
      for (const Endpoint& e : before) {
        left_at_.emplace(e.pod, at);
      }
      for (const Endpoint& e : after) {
        left_at_.erase(e.pod);
      }
    }
    if (recorder_ == nullptr) {
      return;
    }
    if (!error.empty()) {
      recorder_->pod_event(record::EventKind::note, change.endpoint.pod,
                           fmt::format("{}: the kernel refused the {} transaction: {}",
                                       options_.name, to_string(options_.dataplane), error));
      return;
    }
    recorder_->event_at(at, applied_event(change, options_.name));
  }

  // --dataplane-churn: one more sync every 1/N s on the router's thread (so never during a
  // change's), the usable endpoints written again in the rules' shape.
  void churn() {
    if (options_.dataplane_churn <= 0) {
      return;
    }
    churn_timer_.expires_after(std::chrono::microseconds(1'000'000 / options_.dataplane_churn));
    churn_timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) {
        resync();
        churn();
      }
    });
  }

  // One churn sync; every 1000th a note counts them (the run's record of its exposure), and the
  // first refused one says why.
  void resync() {
    std::vector<Endpoint> now;
    {
      std::lock_guard lock(mutex_);
      now = usable();
    }
    std::string error = rules_->program_update(service_, now, now);
    ++churned_;
    if (recorder_ == nullptr) {
      return;
    }
    {
      std::lock_guard lock(mutex_);
      churn_commits_.push_back(clock_.now());
      note_rule_syncs();
    }
    if (!error.empty() && !churn_refused_) {
      churn_refused_ = true;
      recorder_->pod_event(
          record::EventKind::note, "",
          fmt::format("{}: the kernel refused a --dataplane-churn sync: {}", options_.name, error));
    }
    if (churned_ % 1000 == 0) {
      recorder_->pod_event(
          record::EventKind::note, "",
          fmt::format("{}: {} syncs of --dataplane-churn", options_.name, churned_));
    }
  }

  // For each untranslated connection whose second on either side has passed, the churn sync
  // nearest it within that second, written as this router's rule-sync note (record::kRuleSync):
  // the diagnosis' commit for a connect that a sync, not a change, lost. Churn syncs older than
  // any connection still waiting are dropped. Caller holds mutex_.
  void note_rule_syncs() const {
    constexpr auto kAround = std::chrono::seconds(1);
    Clock::time_point now = clock_.now();
    while (!untranslated_at_.empty() && untranslated_at_.front() + kAround < now) {
      Clock::time_point u = untranslated_at_.front();
      untranslated_at_.pop_front();
      auto nearest = std::min_element(churn_commits_.begin(), churn_commits_.end(),
                                      [u](Clock::time_point a, Clock::time_point b) {
                                        return distance(a, u) < distance(b, u);
                                      });
      if (nearest != churn_commits_.end() && distance(*nearest, u) <= kAround
          && noted_syncs_.insert(*nearest).second) {
        record::Event e;
        e.kind = record::EventKind::note;
        e.router = options_.name;
        e.detail = fmt::format("{} (--dataplane-churn): {} rewrote its rules", record::kRuleSync,
                               options_.name);
        recorder_->event_at(*nearest, e);
      }
    }
    Clock::time_point keep = untranslated_at_.empty() ? now : untranslated_at_.front();
    while (!churn_commits_.empty() && churn_commits_.front() + kAround < keep) {
      churn_commits_.pop_front();
    }
  }

  static Duration distance(Clock::time_point a, Clock::time_point b) {
    return a > b ? a - b : b - a;
  }

  std::vector<Endpoint> usable() const {
    std::vector<Endpoint> out;
    for (const Endpoint* e : table_.usable()) {
      out.push_back(*e);
    }
    return out;
  }

  asio::io_context io_;
  RouterOptions options_;
  Recorder* recorder_;
  ClusterService service_;
  SteadyClock clock_;
  DueChanges due_;
  std::thread thread_;
  std::unique_ptr<asio::posix::stream_descriptor> events_;
  std::unique_ptr<KubeProxyRules> rules_;  // router thread only
  asio::steady_timer churn_timer_{io_};    // --dataplane-churn
  uint64_t churned_ = 0;                   // churn syncs made (router thread)
  bool churn_refused_ = false;
  // Under mutex_: the churn syncs' commit stamps, the untranslated connections' stamps not yet
  // matched to one, and the syncs noted (note_rule_syncs).
  mutable std::deque<Clock::time_point> churn_commits_;
  mutable std::deque<Clock::time_point> untranslated_at_;
  mutable std::set<Clock::time_point> noted_syncs_;
  std::unique_ptr<ConntrackEvents> conntrack_;
  // Guards what follows: the router's thread and the record's joins (other threads) both read
  // conntrack's events.
  mutable std::mutex mutex_;
  EndpointTable table_;
  Clock::time_point last_stamp_{};
  // When each pod left the rules (the commit's stamp); gone while it is in them.
  std::map<std::string, Clock::time_point> left_at_;
  std::map<std::string, std::string> pods_;  // "ip:port" → pod
  mutable ClientConnections clients_;
  mutable bool lost_events_ = false;
  mutable int untranslated_ = 0;
  static constexpr int kUntranslatedNotes = 5;
};

}  // namespace

namespace {

// Whether `dataplane`'s rules and conntrack's events work in a new network namespace. Throws
// Error naming the one that is missing.
void check_kernel_dataplane(Dataplane dataplane) {
  std::string flag = dataplane_flag(dataplane);
  if (::geteuid() != 0) {
    throw Error(flag
                + " needs root: each node is a network namespace with kube-proxy's rules and "
                  "conntrack");
  }
  std::string why;
  std::thread([&why, &flag, dataplane] {
    if (::unshare(CLONE_NEWNET) != 0) {
      why = fmt::format("{}: cannot create a network namespace: {}", flag, std::strerror(errno));
      return;
    }
    try {
      std::unique_ptr<KubeProxyRules> rules = dataplane == Dataplane::iptables
                                                  ? iptables_rules(DataplaneSync::kube_proxy)
                                                  : nft_rules(DataplaneSync::kube_proxy);
      why = rules->program_base(ClusterService{});
      if (why.empty()) {
        ConntrackEvents events(dataplane);
      }
    } catch (const Error& e) {
      why = e.what();
    }
  }).join();  // the thread's namespace goes with it
  if (!why.empty()) {
    throw Error(why);
  }
}

}  // namespace

void check_nftables() {
  check_kernel_dataplane(Dataplane::nftables);
}

void check_iptables() {
  check_kernel_dataplane(Dataplane::iptables);
}

std::unique_ptr<Router> start_kube_proxy(const RouterOptions& options, Recorder* recorder) {
  auto router = std::make_unique<NftRouter>(options, recorder);
  router->start();
  return router;
}

}  // namespace zerodrop::lab
