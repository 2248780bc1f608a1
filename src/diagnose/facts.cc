#include "diagnose/facts.h"

#include <algorithm>
#include <csignal>
#include <set>

#include <fmt/format.h>

#include "base/subprocess.h"

namespace zerodrop::diagnose {
namespace {

using record::Event;
using record::EventKind;

void set_first(std::optional<Micros>& slot, Micros t) {
  if (!slot || t < *slot) {
    slot = t;
  }
}

// Signals, exits and preStop moments of the termination: the first at or after the deletion when
// the pod was deleted (earlier ones belong to liveness restarts), else the first ever.
bool belongs_to_termination(const PodLife& life, Micros t) {
  return !life.deletion || t >= *life.deletion;
}

void apply_exit(PodLife& life, const Event& e) {
  if (life.exited || !belongs_to_termination(life, e.t)) {
    return;
  }
  life.exited = e.t;
  life.exit_code = e.exit_code;
  life.exit_signal = e.signal;
}

void apply_signal(PodLife& life, const Event& e) {
  if (!belongs_to_termination(life, e.t)) {
    return;
  }
  if (e.signal && *e.signal == SIGKILL && e.detail == record::kEndOfRunKill) {
    set_first(life.end_of_run_kill, e.t);
  } else if (e.signal && *e.signal == SIGKILL) {
    set_first(life.kill, e.t);
  } else if (!life.signal || e.t < *life.signal) {
    life.signal = e.t;
    life.stop_signal = e.signal;
  }
}

void apply_prestop(PodLife& life, const Event& e) {
  if (!belongs_to_termination(life, e.t)) {
    return;
  }
  if (e.kind == EventKind::prestop_started) {
    set_first(life.prestop_started, e.t);
  } else {
    set_first(life.prestop_finished, e.t);
    if (e.kind == EventKind::prestop_failed && !life.prestop_failed) {
      life.prestop_failed = true;
      life.prestop_error = e.detail;
    }
  }
}

// "pid 12 (python3) killed by SIGTERM" -> its process and its status.
ProcessExit process_exit(const Event& e) {
  std::string status = e.signal ? "killed by " + signal_full_name(*e.signal)
                                : fmt::format("exit code {}", e.exit_code.value_or(0));
  std::string process = e.detail;
  if (size_t at = process.rfind(" " + status); at != std::string::npos) {
    process.erase(at);
  }
  return {e.t, process, status};
}

// Deletion first, so that the other moments can tell termination from liveness restarts.
void apply_event(PodLife& life, const Event& e) {
  switch (e.kind) {
    case EventKind::pod_created:
      set_first(life.created, e.t);
      life.version = e.version;
      break;
    case EventKind::pod_ready:
      set_first(life.ready, e.t);
      break;
    case EventKind::liveness_restart:
      life.liveness_restarts.push_back(e.t);
      break;
    case EventKind::prestop_started:
    case EventKind::prestop_finished:
    case EventKind::prestop_failed:
      apply_prestop(life, e);
      break;
    case EventKind::signal_sent:
      apply_signal(life, e);
      break;
    case EventKind::pod_exited:
      apply_exit(life, e);
      break;
    case EventKind::signal_ignored:
      if (belongs_to_termination(life, e.t) && life.signal_ignored.empty()) {
        life.signal_ignored = e.detail.empty() ? "the process ignored it" : e.detail;
      }
      break;
    case EventKind::process_exited:
      life.process_exits.push_back(process_exit(e));
      break;
    case EventKind::goaway_received:
      set_first(life.first_goaway, e.t);
      // A graceful drain sends two per connection: count each connection once.
      if (e.connection
          && std::find(life.goaway_connections.begin(), life.goaway_connections.end(),
                       e.connection->conn)
                 == life.goaway_connections.end()) {
        life.goaway_connections.push_back(e.connection->conn);
      }
      break;
    case EventKind::connection_closed:
      if (e.connection && !e.connection->goaway
          && e.connection->closed != record::CloseKind::protocol_error) {
        ++life.closed_without_goaway;
        life.streams_cut += e.connection->open_streams;
      }
      break;
    default:
      break;
  }
}

bool marks_termination(const std::optional<record::Conditions>& c) {
  return !c || c->terminating || !c->ready;
}

}  // namespace

std::optional<Window> Facts::disruption() const {
  if (!disruption_started_ || !disruption_ended_ || *disruption_ended_ < *disruption_started_) {
    return std::nullopt;
  }
  return Window{*disruption_started_, *disruption_ended_};
}

Facts::Facts(const record::RunRecord& run) {
  // The events in time order, by address: a copy of each was 60 % of a 5,000-node sim's memory.
  std::vector<const Event*> events;
  events.reserve(run.events.size());
  for (const Event& e : run.events) {
    events.push_back(&e);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event* a, const Event* b) { return a->t < b->t; });
  std::set<std::string> routers;
  for (const Event* event : events) {
    const Event& e = *event;
    if (!e.pod.empty() && !pod_index_.contains(e.pod)) {
      pod_index_.emplace(e.pod, pods_.size());
      pods_.push_back(PodLife{.name = e.pod});
    }
    if (e.kind == EventKind::deletion_started && !e.pod.empty()) {
      set_first(pods_[pod_index_.find(e.pod)->second].deletion, e.t);
    } else if (e.kind == EventKind::router_applied) {
      applies_.push_back({e.t, e.t_min, e.router, e.pod, e.conditions});
      routers.insert(e.router);
    } else if (e.kind == EventKind::router_refused) {
      refusals_.push_back(e);
    } else if (e.kind == EventKind::endpoint_changed) {
      changes_.push_back(e);
    } else if (e.kind == EventKind::note && !e.router.empty()
               && e.detail.starts_with(record::kRuleSync)) {
      syncs_.push_back(e);
    } else if (e.kind == EventKind::note && !e.router.empty()
               && e.detail.starts_with(record::kRouterLog)) {
      router_logs_.push_back(e);
    } else if (e.kind == EventKind::rollout_started) {
      set_first(rollout_started_, e.t);
    } else if (e.kind == EventKind::rollout_finished) {
      rollout_finished_ = e.t;
    } else if (e.kind == EventKind::disruption_started) {
      set_first(disruption_started_, e.t);
    } else if (e.kind == EventKind::disruption_ended) {
      disruption_ended_ = e.t;
    } else if (e.kind == EventKind::migration_started) {
      migrations_.push_back({e.t, std::nullopt, e.detail, ""});
    } else if (e.kind == EventKind::migration_finished && !migrations_.empty()
               && !migrations_.back().finished) {
      migrations_.back().finished = e.t;
      migrations_.back().outcome = e.detail;
    }
  }
  for (const Event* e : events) {
    if (!e->pod.empty()) {
      apply_event(pods_[pod_index_.find(e->pod)->second], *e);
    }
  }
  for (const record::RequestRecord& r : run.requests) {
    auto it = pod_index_.find(r.backend);
    if (!r.failed && it != pod_index_.end()) {
      set_first(pods_[it->second].first_success, r.sent.value_or(r.intended));
    }
    if (!r.failed) {
      successes_.push_back(r.sent.value_or(r.intended));
    }
  }
  std::sort(successes_.begin(), successes_.end());
  routers_.assign(routers.begin(), routers.end());
  // Each router's first termination apply per deleted pod: asked once per failed request, so
  // kept in a map rather than found by a scan of every apply (quadratic on large sim runs).
  for (const Apply& e : applies_) {
    const PodLife* life = pod(e.pod);
    if (life && life->deletion && e.t >= *life->deletion && marks_termination(e.conditions)) {
      bool first = terminations_.try_emplace(termination_key(e.router, e.pod), e.t).second;
      if (first && e.t_min) {
        earliest_.emplace(termination_key(e.router, e.pod), *e.t_min);
      }
    }
  }
}

std::string Facts::termination_key(std::string_view router, std::string_view pod) {
  std::string key;
  key.reserve(router.size() + pod.size() + 1);
  key.append(router).push_back('\0');
  key.append(pod);
  return key;
}

const PodLife* Facts::pod(std::string_view name) const {
  auto it = pod_index_.find(name);
  return it == pod_index_.end() ? nullptr : &pods_[it->second];
}

std::optional<Micros> Facts::termination_applied(std::string_view router,
                                                 std::string_view pod_name) const {
  auto it = terminations_.find(termination_key(router, pod_name));
  if (it == terminations_.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<Micros> Facts::termination_earliest(std::string_view router,
                                                  std::string_view pod_name) const {
  auto it = earliest_.find(termination_key(router, pod_name));
  return it == earliest_.end() ? std::nullopt : std::optional<Micros>(it->second);
}

std::optional<Micros> Facts::applied_for(std::string_view router, std::string_view pod_name) const {
  if (!router.empty()) {
    return termination_applied(router, pod_name);
  }
  std::optional<Micros> last;
  for (const std::string& r : routers_) {
    auto t = termination_applied(r, pod_name);
    if (!t) {
      return std::nullopt;
    }
    last = std::max(last.value_or(*t), *t);
  }
  return last;
}

namespace {

Micros abs_micros(Micros d) {
  return d < Micros{0} ? -d : d;
}

}  // namespace

bool Facts::refused_between(std::string_view router, std::string_view pod_name, Micros from,
                            Micros to) const {
  return std::any_of(refusals_.begin(), refusals_.end(), [&](const Event& e) {
    return e.pod == pod_name && (router.empty() || e.router == router) && e.t >= from && e.t <= to;
  });
}

std::vector<const record::Event*> Facts::router_log(std::string_view router) const {
  std::vector<const record::Event*> out;
  for (const record::Event& e : router_logs_) {
    if (e.router == router) {
      out.push_back(&e);
    }
  }
  return out;
}

std::optional<Facts::RuleCommit> Facts::nearest_commit(std::string_view router, Micros t) const {
  std::optional<RuleCommit> best;
  auto consider = [&](Micros at, const std::string& pod, const std::string& detail) {
    if (!best || abs_micros(at - t) < abs_micros(best->t - t)) {
      best = RuleCommit{at, pod, detail};
    }
  };
  for (const Apply& a : applies_) {
    if (a.router == router) {
      consider(a.t, a.pod, "");
    }
  }
  for (const Event& e : syncs_) {
    if (e.router == router) {
      consider(e.t, "", e.detail);
    }
  }
  return best;
}

const Event* Facts::change_before(Micros t, Micros window) const {
  auto after = std::upper_bound(changes_.begin(), changes_.end(), t,
                                [](Micros at, const Event& e) { return at < e.t; });
  if (after == changes_.begin() || std::prev(after)->t < t - window) {
    return nullptr;
  }
  return &*std::prev(after);
}

size_t Facts::successes_between(Micros from, Micros to) const {
  if (to < from) {
    return 0;
  }
  return static_cast<size_t>(std::upper_bound(successes_.begin(), successes_.end(), to)
                             - std::lower_bound(successes_.begin(), successes_.end(), from));
}

bool Facts::pod_terminating_at(Micros t) const {
  return std::any_of(pods_.begin(), pods_.end(), [t](const PodLife& p) {
    return p.deletion && *p.deletion <= t && !(p.exited && *p.exited < t);
  });
}

int Facts::ready_pods_at(Micros t) const {
  return static_cast<int>(std::count_if(pods_.begin(), pods_.end(), [t](const PodLife& p) {
    return p.ready && *p.ready <= t && !(p.deletion && *p.deletion <= t)
           && !(p.exited && *p.exited <= t);
  }));
}

std::optional<int> Facts::ready_endpoints_on(std::string_view router, Micros t) const {
  std::map<std::string, bool, std::less<>> ready;
  bool seen = false;
  for (const Apply& e : applies_) {
    if (e.t > t) {
      break;
    }
    if (e.router == router) {
      seen = true;
      ready[e.pod] = e.conditions && e.conditions->ready;
    }
  }
  if (!seen) {
    return std::nullopt;
  }
  return static_cast<int>(
      std::count_if(ready.begin(), ready.end(), [](const auto& kv) { return kv.second; }));
}

Propagation Facts::propagation() const {
  Propagation p;
  for (const PodLife& life : pods_) {
    for (const std::string& router : routers_) {
      if (auto applied = termination_applied(router, life.name)) {
        p.samples.push_back(
            {life.name, router, *life.deletion, *applied, termination_earliest(router, life.name)});
      }
    }
  }
  std::vector<Micros> delays;
  for (const PropagationSample& s : p.samples) {
    delays.push_back(s.delay());
  }
  std::sort(delays.begin(), delays.end());
  if (!delays.empty()) {
    p.max = delays.back();
    p.p50 = delays[(delays.size() - 1) / 2];
  }
  return p;
}

std::string seconds_text(Micros t) {
  return fmt::format("{:.2f} s", std::chrono::duration<double>(t).count());
}

std::string duration_text(Micros d) {
  double s = std::chrono::duration<double>(d).count();
  return s < 0.1 ? fmt::format("{:.1f} ms", s * 1000) : fmt::format("{:.2f} s", s);
}

bool killed_by_sigkill(const PodLife& life) {
  return life.exit_signal && *life.exit_signal == SIGKILL && !(life.end_of_run_kill && !life.kill);
}

const ProcessExit* exit_that_broke(const PodLife& life, Micros sent, Micros done) {
  constexpr Micros kSlack{5'000};
  const ProcessExit* found = nullptr;
  for (const ProcessExit& p : life.process_exits) {
    if (p.t >= sent && p.t <= done + kSlack) {
      found = &p;
    }
  }
  if (found && life.exited && *life.exited < found->t) {
    return nullptr;  // the main process went first: its exit took the rest down
  }
  return found;
}

BackendState state_at(const PodLife& life, Micros t) {
  if (life.kill && t >= *life.kill) {
    return BackendState::killed;
  }
  if (life.exited && t >= *life.exited) {
    return killed_by_sigkill(life) ? BackendState::killed : BackendState::exited;
  }
  if (life.signal && t >= *life.signal && life.signal_ignored.empty()) {
    return BackendState::after_signal;  // a signal that did nothing leaves it terminating
  }
  if (life.deletion && t >= *life.deletion) {
    return BackendState::prestop;
  }
  if (!life.ready || t < *life.ready) {
    return BackendState::starting;
  }
  if (!life.first_success || t < *life.first_success) {
    return BackendState::warming;
  }
  return BackendState::serving;
}

Micros send_time(const record::RequestRecord& r) {
  return r.sent.value_or(r.intended);
}

}  // namespace zerodrop::diagnose
