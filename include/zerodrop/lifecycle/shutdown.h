#pragma once

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zerodrop/lifecycle/gate.h"
#include "zerodrop/lifecycle/state.h"

namespace zerodrop::lifecycle {

using Clock = std::chrono::steady_clock;

// How a server shuts down. Durations are measured from the stop signal.
struct Options {
  // How long the server keeps accepting and serving after failing readiness, so that every
  // router (kube-proxy, ingress, load balancer) drops it first. Longer than their propagation.
  Clock::duration delay = std::chrono::seconds(5);
  // The hard deadline, from the signal: stopped by then whatever is in flight. Keep it below
  // terminationGracePeriodSeconds minus preStop so SIGKILL never cuts the drain.
  Clock::duration drain_timeout = std::chrono::seconds(20);
  // The signals that start the shutdown (used by Driver).
  std::vector<int> signals = {SIGTERM, SIGINT};
};

// A consistent snapshot of the machine, for logs, tests and /metrics.
struct Counters {
  State state = State::serving;
  StopReason stop_reason = StopReason::none;
  std::size_t in_flight = 0;
  std::size_t connections = 0;
  std::uint64_t requests_total = 0;
  std::uint64_t closed_idle_by_drain = 0;
  std::uint64_t closed_after_response = 0;
};

class Shutdown;

// One admitted unit of in-flight work; leaves the gate when destroyed. Move-only.
class Work {
public:
  explicit Work(Shutdown* owner) : owner_(owner) {}

  Work(Work&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}

  Work& operator=(Work&& other) noexcept {
    if (this != &other) {
      release();
      owner_ = std::exchange(other.owner_, nullptr);
    }
    return *this;
  }

  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  ~Work() { release(); }

private:
  void release();

  Shutdown* owner_;
};

// One open connection, registered with track(). Mark it idle while it waits for the next
// request: idle connections are closed when draining starts. Move-only; unregisters when
// destroyed, after the connection is closed.
class Connection {
public:
  Connection(Shutdown* owner, std::uint64_t id) : owner_(owner), id_(id) {}

  Connection(Connection&& other) noexcept
      : owner_(std::exchange(other.owner_, nullptr)), id_(other.id_), reason_(other.reason_) {}

  Connection& operator=(Connection&& other) noexcept {
    if (this != &other) {
      release();
      owner_ = std::exchange(other.owner_, nullptr);
      id_ = other.id_;
      reason_ = other.reason_;
    }
    return *this;
  }

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  ~Connection() { release(); }

  // Idle = waiting for the next request. Marking it idle while draining closes it at once.
  void set_idle(bool idle);

  // Records that the server closes it after a response carrying `Connection: close`.
  void closing_after_response() { reason_ = CloseReason::after_response; }

private:
  void release();

  Shutdown* owner_;
  std::uint64_t id_;
  CloseReason reason_ = CloseReason::client;
};

// The shutdown state machine serving -> unready -> draining -> stopped, with the in-flight gate,
// the connection registry and the hard deadline. Time is passed in (begin/advance take `now`),
// so tests drive it with any clock; Driver (driver.h) drives it with real signals and timers.
// Thread-safe; callbacks run outside the lock on the thread that caused the transition.
class Shutdown {
public:
  using TransitionFn = std::function<void(State)>;
  using StoppedFn = std::function<void(StopReason)>;

  explicit Shutdown(Options options = {}) : options_(std::move(options)) {}

  Shutdown(const Shutdown&) = delete;
  Shutdown& operator=(const Shutdown&) = delete;

  const Options& options() const { return options_; }

  // Called with the new state after every transition. Register before begin().
  void on_transition(TransitionFn fn) {
    std::lock_guard lock(mutex_);
    transition_fns_.push_back(std::move(fn));
  }

  // The completion callback: called once, when the machine stops. Register before begin().
  void on_stopped(StoppedFn fn) {
    std::lock_guard lock(mutex_);
    stopped_fns_.push_back(std::move(fn));
  }

  // A stop signal arrived at `now`: readiness fails from this instant (serving -> unready).
  // Returns false when the shutdown had already begun (later signals change nothing).
  bool begin(Clock::time_point now) {
    Pending pending;
    {
      std::lock_guard lock(mutex_);
      if (state_ != State::serving) {
        return false;
      }
      signal_at_ = now;
      enter(State::unready, pending);
      step(now, pending);
    }
    pending.run();
    return true;
  }

  // Applies the timed transitions due at `now` (end of the delay, the deadline).
  State advance(Clock::time_point now) {
    Pending pending;
    State after;
    {
      std::lock_guard lock(mutex_);
      step(now, pending);
      after = state_;
    }
    pending.run();
    return after;
  }

  // When advance() next has something to do; nullopt while serving or once stopped.
  std::optional<Clock::time_point> next_timer() const {
    std::lock_guard lock(mutex_);
    if (state_ == State::unready) {
      return signal_at_ + effective_delay();
    }
    if (state_ == State::draining) {
      return signal_at_ + options_.drain_timeout;
    }
    return std::nullopt;
  }

  State state() const {
    std::lock_guard lock(mutex_);
    return state_;
  }

  // Readiness: true only while serving and the app has declared itself ready.
  bool ready() const {
    std::lock_guard lock(mutex_);
    return state_ == State::serving && app_ready_;
  }

  // Liveness stays true through the whole shutdown: a liveness probe failing during the drain
  // gets the pod killed mid-drain (hole liveness-kills-drain).
  bool live() const { return true; }

  // Startup readiness of the app itself (dependencies up); true unless the app says otherwise.
  void set_app_ready(bool ready) {
    std::lock_guard lock(mutex_);
    app_ready_ = ready;
  }

  // "May I keep this connection?": false from the signal on, so every response after it carries
  // `Connection: close` and clients reconnect through routers that are dropping this server.
  bool keep_connection() const {
    std::lock_guard lock(mutex_);
    return state_ == State::serving;
  }

  // Whether the listener should still accept: until the delay is over.
  bool accepting() const {
    std::lock_guard lock(mutex_);
    return state_ == State::serving || state_ == State::unready;
  }

  // Admits one in-flight request; nullopt once stopped. Keep the Work until the response is sent.
  std::optional<Work> enter() {
    std::lock_guard lock(mutex_);
    if (!gate_.try_enter()) {
      return std::nullopt;
    }
    ++requests_total_;
    return std::optional<Work>(std::in_place, this);
  }

  // Registers an open connection; `close_idle` closes it (called outside the lock, on the thread
  // that starts draining) if it is idle when draining starts. It must stay safe to call until the
  // returned Connection is destroyed: capture a weak_ptr to the session.
  Connection track(std::function<void()> close_idle) {
    std::lock_guard lock(mutex_);
    std::uint64_t id = next_id_++;
    connections_.emplace(id, Entry{std::move(close_idle)});
    return Connection(this, id);
  }

  Counters counters() const {
    std::lock_guard lock(mutex_);
    return Counters{
        state_,          stop_reason_,          gate_.size(),          connections_.size(),
        requests_total_, closed_idle_by_drain_, closed_after_response_};
  }

  // The state and counters in Prometheus text exposition format (version 0.0.4).
  std::string metrics() const;

private:
  friend class Work;
  friend class Connection;

  struct Entry {
    std::function<void()> close_idle;
    bool idle = false;
    bool closed_by_drain = false;
  };

  // Callbacks gathered under the lock and run after it is released.
  struct Pending {
    std::vector<std::function<void()>> calls;

    void run() {
      for (auto& call : calls) {
        call();
      }
    }
  };

  Clock::duration effective_delay() const {
    return std::min(options_.delay, options_.drain_timeout);
  }

  bool drained() const { return gate_.size() == 0 && connections_.empty(); }

  void step(Clock::time_point now, Pending& pending) {
    if (state_ == State::unready && now >= signal_at_ + effective_delay()) {
      enter(State::draining, pending);
    }
    if (state_ == State::draining) {
      if (drained()) {
        stop(StopReason::drained, pending);
      } else if (now >= signal_at_ + options_.drain_timeout) {
        stop(StopReason::deadline, pending);
      }
    }
  }

  void enter(State next, Pending& pending) {
    state_ = next;
    // Listeners first (they close the acceptor: stop accepting), then the idle connections.
    for (const TransitionFn& fn : transition_fns_) {
      pending.calls.push_back([fn, next] { fn(next); });
    }
    if (next == State::draining) {
      for (auto& [id, entry] : connections_) {
        if (entry.idle) {
          close_by_drain(entry, pending);
        }
      }
    }
  }

  void stop(StopReason reason, Pending& pending) {
    gate_.close();
    stop_reason_ = reason;
    enter(State::stopped, pending);
    for (const StoppedFn& fn : stopped_fns_) {
      pending.calls.push_back([fn, reason] { fn(reason); });
    }
  }

  void close_by_drain(Entry& entry, Pending& pending) {
    if (entry.closed_by_drain) {
      return;
    }
    entry.closed_by_drain = true;
    pending.calls.push_back(entry.close_idle);
  }

  void leave() {
    Pending pending;
    {
      std::lock_guard lock(mutex_);
      if (gate_.leave() && state_ == State::draining && drained()) {
        stop(StopReason::drained, pending);
      }
    }
    pending.run();
  }

  void set_idle(std::uint64_t id, bool idle) {
    Pending pending;
    {
      std::lock_guard lock(mutex_);
      auto it = connections_.find(id);
      if (it == connections_.end()) {
        return;
      }
      it->second.idle = idle;
      if (idle && (state_ == State::draining || state_ == State::stopped)) {
        close_by_drain(it->second, pending);
      }
    }
    pending.run();
  }

  void release(std::uint64_t id, CloseReason reason) {
    Pending pending;
    {
      std::lock_guard lock(mutex_);
      auto it = connections_.find(id);
      if (it == connections_.end()) {
        return;
      }
      if (it->second.closed_by_drain) {
        ++closed_idle_by_drain_;
      } else if (reason == CloseReason::after_response && state_ != State::serving) {
        ++closed_after_response_;
      }
      connections_.erase(it);
      if (state_ == State::draining && drained()) {
        stop(StopReason::drained, pending);
      }
    }
    pending.run();
  }

  const Options options_;
  mutable std::mutex mutex_;
  State state_ = State::serving;
  StopReason stop_reason_ = StopReason::none;
  bool app_ready_ = true;
  Clock::time_point signal_at_{};
  Gate gate_;
  std::map<std::uint64_t, Entry> connections_;
  std::uint64_t next_id_ = 1;
  std::uint64_t requests_total_ = 0;
  std::uint64_t closed_idle_by_drain_ = 0;
  std::uint64_t closed_after_response_ = 0;
  std::vector<TransitionFn> transition_fns_;
  std::vector<StoppedFn> stopped_fns_;
};

inline void Work::release() {
  if (owner_ != nullptr) {
    std::exchange(owner_, nullptr)->leave();
  }
}

inline void Connection::release() {
  if (owner_ != nullptr) {
    std::exchange(owner_, nullptr)->release(id_, reason_);
  }
}

inline void Connection::set_idle(bool idle) {
  if (owner_ != nullptr) {
    owner_->set_idle(id_, idle);
  }
}

inline std::string Shutdown::metrics() const {
  Counters c = counters();
  std::string out =
      "# HELP zerodrop_lifecycle_state The shutdown state (1 for the current one).\n"
      "# TYPE zerodrop_lifecycle_state gauge\n";
  for (State s : {State::serving, State::unready, State::draining, State::stopped}) {
    out += "zerodrop_lifecycle_state{state=\"" + std::string(to_string(s)) + "\"} "
           + (s == c.state ? "1\n" : "0\n");
  }
  out +=
      "# HELP zerodrop_lifecycle_in_flight_requests Requests admitted and not yet answered.\n"
      "# TYPE zerodrop_lifecycle_in_flight_requests gauge\n"
      "zerodrop_lifecycle_in_flight_requests " + std::to_string(c.in_flight) + "\n" +
      "# HELP zerodrop_lifecycle_open_connections Connections currently open.\n"
      "# TYPE zerodrop_lifecycle_open_connections gauge\n"
      "zerodrop_lifecycle_open_connections " + std::to_string(c.connections) + "\n" +
      "# HELP zerodrop_lifecycle_requests_total Requests admitted since start.\n"
      "# TYPE zerodrop_lifecycle_requests_total counter\n"
      "zerodrop_lifecycle_requests_total " + std::to_string(c.requests_total) + "\n" +
      "# HELP zerodrop_lifecycle_connections_closed_by_drain_total Connections the shutdown "
      "closed: idle ones when draining started, others after a Connection: close response.\n"
      "# TYPE zerodrop_lifecycle_connections_closed_by_drain_total counter\n"
      "zerodrop_lifecycle_connections_closed_by_drain_total{how=\"idle\"} " +
      std::to_string(c.closed_idle_by_drain) + "\n" +
      "zerodrop_lifecycle_connections_closed_by_drain_total{how=\"after_response\"} " +
      std::to_string(c.closed_after_response) + "\n";
  return out;
}

}  // namespace zerodrop::lifecycle
