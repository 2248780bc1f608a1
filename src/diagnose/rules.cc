#include "diagnose/rules.h"

#include <algorithm>
#include <cassert>
#include <csignal>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/subprocess.h"
#include "diagnose/h2_rules.h"
#include "diagnose/ingress_rules.h"
#include "diagnose/router_rules.h"
#include "diagnose/sync_rules.h"

namespace zerodrop::diagnose {
namespace {

using record::BackendFate;
using record::Hole;
using record::Outcome;
using record::RequestRecord;

// The lab records an exit when it reaps the process; the client may see the broken connection a
// little earlier. Events this close to a request's end count as simultaneous.
constexpr Micros kTolerance{50'000};
constexpr Micros kNever{std::numeric_limits<Micros::rep>::max()};

// A connection that broke after the request was written (the server accepted it).
bool broke(Outcome o) {
  return o == Outcome::reset_before_response || o == Outcome::closed_before_response
         || o == Outcome::reset_during_response || o == Outcome::truncated_response
         || o == Outcome::http_502;
}

bool overload_sign(Outcome o) {
  return o == Outcome::timeout || o == Outcome::connect_timeout || o == Outcome::http_503
         || o == Outcome::http_504;
}

// When the router chose this request's backend. An l4 router binds a new connection to its pod
// at the accept, which a client on a busy machine may follow with its request tens of ms later:
// the bind time is the router's decision. On a reused connection the question is whether the
// router still sent new work there when the request went out; an l7 router chooses when the
// request arrives, never before it was sent: both compare the send time.
Micros chosen_time(const RequestRecord& r) {
  if (r.bound && r.connection == record::Connection::fresh) {
    return *r.bound;
  }
  return send_time(r);
}

// Everything one rule looks at, computed once per request.
struct Case {
  const RequestRecord& r;
  const PodLife& life;
  const Facts& facts;
  const RuleContext& context;
  Micros t;
  BackendState state;
  std::optional<Micros> applied;  // when r's router applied the backend's termination
  Micros chosen;                  // when r's router chose the backend (chosen_time)
  bool router_applied;            // `applied` came before `chosen`
};

RequestDiagnosis make(const Case& c, Hole hole, std::string reason) {
  return {0, hole, c.state, c.router_applied, std::move(reason)};
}

std::optional<RequestDiagnosis> liveness_rule(const Case& c) {
  for (Micros restart : c.life.liveness_restarts) {
    bool near = c.r.done + kTolerance >= restart && c.t <= restart + std::chrono::seconds(2);
    if (!near) {
      continue;
    }
    if (c.life.deletion && restart >= *c.life.deletion) {
      return make(c, Hole::liveness_kills_drain,
                  fmt::format("the liveness probe restarted pod {} at {} while it drained "
                              "(deletion at {})",
                              c.life.name, seconds_text(restart), seconds_text(*c.life.deletion)));
    }
    return make(c, Hole::unexplained,
                fmt::format("the liveness probe restarted pod {} at {}, outside any termination",
                            c.life.name, seconds_text(restart)));
  }
  return std::nullopt;
}

// An error the app itself answered (not its router): what a failed query becomes.
bool app_error(const RequestRecord& r) {
  return r.status >= 500 && r.router_error.empty();
}

// A pod of the old version (A) erring after a migration began, or of the new one (B) before it
// ended: each version expects its own schema, and only one of them exists at a time.
std::optional<RequestDiagnosis> schema_rule(const Case& c) {
  if (c.life.version.empty() || !app_error(c.r)) {
    return std::nullopt;
  }
  std::string body = c.r.body.empty() ? "" : fmt::format(": \"{}\"", c.r.body);
  for (const MigrationRun& m : c.facts.migrations()) {
    if (c.life.version == "A" && c.t >= m.started) {
      return make(c, Hole::schema_race,
                  fmt::format("pod {} runs the old version (A) and answered {} after the "
                              "migration began at {}{}",
                              c.r.backend, c.r.status, seconds_text(m.started), body));
    }
    if (c.life.version == "B" && c.t < m.finished.value_or(kNever)) {
      return make(
          c, Hole::schema_race,
          fmt::format("pod {} runs the new version (B) and answered {} before the "
                      "migration {}{}",
                      c.r.backend, c.r.status,
                      m.finished ? "ended at " + seconds_text(*m.finished) : "ended", body));
    }
  }
  return std::nullopt;
}

std::optional<Micros> kill_time(const PodLife& life) {
  if (life.kill) {
    return life.kill;
  }
  if (killed_by_sigkill(life)) {
    return life.exited;
  }
  return std::nullopt;
}

// The engine killed the pod when the run ended: what was in flight then is no hole of the app.
std::optional<RequestDiagnosis> end_of_run_rule(const Case& c) {
  auto kill = c.life.end_of_run_kill;
  if (!kill || c.life.kill || !c.r.sent || *c.r.sent > *kill || c.r.done + kTolerance < *kill) {
    return std::nullopt;
  }
  return make(c, Hole::unexplained,
              fmt::format("in flight at pod {} when the run ended and the lab killed it at {} "
                          "(not a grace kill)",
                          c.life.name, seconds_text(*kill)));
}

std::optional<RequestDiagnosis> kill_rule(const Case& c) {
  auto kill = kill_time(c.life);
  if (!kill || !c.r.sent || *c.r.sent > *kill || c.r.done + kTolerance < *kill) {
    return std::nullopt;
  }
  if (!c.life.deletion || *kill < *c.life.deletion) {
    // Not the kubelet's grace period: the engine stopped the pod (the end of the run).
    return make(c, Hole::unexplained,
                fmt::format("in flight at pod {} when it was killed at {} without a deletion",
                            c.life.name, seconds_text(*kill)));
  }
  return make(
      c, Hole::grace_overrun,
      fmt::format("in flight at pod {} when SIGKILL came at {}, {} after its deletion", c.life.name,
                  seconds_text(*kill), duration_text(*kill - *c.life.deletion)));
}

// A pod that never answered successfully is not shown to be warming up: it may be broken, or
// unreachable, and readiness-lies would be a claim the record does not support.
std::string never_served(const PodLife& life) {
  return fmt::format("pod {} never answered a request successfully in this run", life.name);
}

// When the process stopped serving: its stop signal (unless it did nothing), else its kill, else
// its exit. Only called for a pod whose state is after_signal or later, so one of them is set.
Micros stop_time(const PodLife& life) {
  assert(life.signal || life.kill || life.exited);
  if (life.signal && life.signal_ignored.empty()) {
    return *life.signal;
  }
  return life.kill ? *life.kill : life.exited ? *life.exited : *life.signal;
}

// Whether the router refused this request's connection: its own record when the router joined
// it (RequestRecord::backend_fate), else a refusal by the same router and pod near its time.
bool connection_refused(const Case& c) {
  if (c.r.backend_fate) {
    return *c.r.backend_fate == BackendFate::refused;
  }
  return c.r.connection == record::Connection::fresh
         && c.facts.refused_between(c.r.router, c.life.name, c.t - kTolerance,
                                    c.r.done + kTolerance);
}

std::optional<RequestDiagnosis> refusal_rule(const Case& c) {
  bool refused = c.r.outcome == Outcome::connect_refused || connection_refused(c);
  if (!refused) {
    return std::nullopt;
  }
  if (c.state == BackendState::warming && !c.life.first_success) {
    return make(c, Hole::unexplained, never_served(c.life));
  }
  if (c.state == BackendState::starting || c.state == BackendState::warming) {
    return make(c, Hole::readiness_lies,
                fmt::format("refused by pod {} before it could serve", c.life.name));
  }
  // The connect happens after the client's send: a pod signalled in between refused it. Sent
  // while serving or in the preStop (without a hook, the milliseconds between the deletion's stamp
  // and the signal's), refused once the signal had landed.
  BackendState at_refusal = state_at(c.life, c.r.done + kTolerance);
  bool sent_before_signal = c.state == BackendState::serving || c.state == BackendState::prestop;
  if (sent_before_signal && at_refusal >= BackendState::after_signal) {
    return make(c, c.router_applied ? Hole::unexplained : Hole::deregistration_race,
                fmt::format("refused by pod {} just after it stopped at {}", c.life.name,
                            seconds_text(stop_time(c.life))));
  }
  if (c.state == BackendState::serving) {
    return make(
        c, Hole::unexplained,
        fmt::format("refused by pod {} while it was serving and not terminating", c.life.name));
  }
  return std::nullopt;  // terminating: the state rules below decide
}

std::string stop_signal_text(const PodLife& life) {
  return signal_full_name(life.stop_signal.value_or(SIGTERM));
}

std::string_view fate_verb(BackendFate fate) {
  switch (fate) {
    case BackendFate::reset:
      return "reset";
    case BackendFate::closed:
      return "closed";
    case BackendFate::idle_closed:
      return "closed while idle";
    default:
      break;
  }
  return "ended";
}

// The pod ended this request's own backend connection at `at` (the router's record): at its
// exit, while still running after its stop signal, or while serving. The hole follows from that
// one event, and the reason carries its time.
std::optional<RequestDiagnosis> connection_rule(const Case& c) {
  std::optional<BackendFate> fate = c.r.backend_fate;
  if (!fate || !c.r.backend_fate_at || *fate == BackendFate::open || *fate == BackendFate::refused
      || !broke(c.r.outcome)) {
    return std::nullopt;
  }
  Micros at = *c.r.backend_fate_at;
  std::string_view verb = fate_verb(*fate);
  // A connection ended with a request pending, or an idle one of a process a signal killed (it
  // closed nothing itself), ended at the exit. An idle close by a process that exited on its own
  // was its own doing, however soon it then exited (node's server.close()).
  bool idle = *fate == BackendFate::idle_closed;
  // A process that died of a signal had no handler for it: after that signal it closed nothing
  // itself, whatever the lag before its exit was recorded. Not so the lab's SIGKILL (at grace or
  // at the run's end): until it came the process ran its own shutdown. Exit status 128 + the stop
  // signal is that death as PID 1 reports it (a handler that re-raised the signal, which the
  // kernel drops for PID 1, then exited as a shell reports it).
  std::optional<int> stop = c.life.stop_signal;
  bool died_of_signal = (c.life.exit_signal && (*c.life.exit_signal != SIGKILL || stop == SIGKILL))
                        || (c.life.exit_code && stop && *c.life.exit_code == 128 + *stop);
  bool at_exit = c.life.exited
                 && ((at + kTolerance >= *c.life.exited && !idle)
                     || (died_of_signal && at + kTolerance >= stop_time(c.life)));
  if (at_exit) {
    return make(c, Hole::no_drain,
                fmt::format("in flight at pod {}, its connection {} at {}, at the pod's exit",
                            c.life.name, verb, seconds_text(at)));
  }
  bool crossed = idle && !c.r.first_byte;
  bool reused = c.r.connection == record::Connection::reused;
  if (state_at(c.life, at) < BackendState::after_signal) {
    if (!crossed || !reused) {
      return std::nullopt;
    }
    return make(c, Hole::unexplained,
                fmt::format("pod {} closed this idle keep-alive connection at {} while not "
                            "terminating, as the request crossed it (its idle timeout)",
                            c.life.name, seconds_text(at)));
  }
  std::string after = c.life.signal
                          ? fmt::format("{} after its {}", duration_text(at - *c.life.signal),
                                        stop_signal_text(c.life))
                          : fmt::format("after it stopped at {}", seconds_text(stop_time(c.life)));
  if (!reused && !c.r.first_byte) {
    return make(c, Hole::deregistration_race,
                fmt::format("new connection accepted by pod {}, then {} at {} ({}) before any "
                            "response: it had stopped taking connections",
                            c.life.name, verb, seconds_text(at), after));
  }
  if (crossed) {
    return make(c, Hole::keepalive_stale,
                fmt::format("pod {} closed this idle keep-alive connection at {} ({}) as the "
                            "request crossed it (the idle-close race)",
                            c.life.name, seconds_text(at), after));
  }
  return make(c, Hole::no_drain,
              fmt::format("in flight at pod {}, which {} its connection at {} ({}) while running",
                          c.life.name, verb, seconds_text(at), after));
}

// A reused connection torn down under a request sent after the router had dropped the pod: the
// connection existed only because keep-alive pinned it there (`Connection: close` would not).
std::optional<RequestDiagnosis> stale_rule(const Case& c) {
  bool torn = c.r.outcome == Outcome::closed_before_response
              || c.r.outcome == Outcome::reset_before_response || c.r.outcome == Outcome::http_502;
  if (c.r.connection != record::Connection::reused || !c.router_applied || !torn
      || c.state < BackendState::prestop) {
    return std::nullopt;
  }
  return make(
      c, Hole::keepalive_stale,
      fmt::format("reused keep-alive connection to pod {} ({}), {} had removed it at {}",
                  c.life.name, to_string(c.state), router_name(c.r), seconds_text(*c.applied)));
}

std::optional<RequestDiagnosis> in_flight_rule(const Case& c) {
  Micros end = c.life.exited.value_or(kNever);
  bool signalled = c.life.signal && c.life.signal_ignored.empty();  // a dropped one stops nothing
  std::optional<Micros> stop = signalled ? c.life.signal : c.life.exited;
  if (!stop || !c.r.sent || !broke(c.r.outcome) || *c.r.sent >= end
      || c.r.done + kTolerance < *stop) {
    return std::nullopt;
  }
  if (connection_refused(c)) {
    return std::nullopt;
  }
  // A new connection opened after the stop signal carried no request the pod had taken on: when
  // no router saw what became of it (verify), it failed at a pod that had stopped, whether it
  // was refused or reset; the state rules name that.
  if (!c.r.backend_fate && c.r.connection == record::Connection::fresh && !c.r.first_byte
      && signalled && c.t >= *stop) {
    return std::nullopt;
  }
  std::string how = c.life.exited ? fmt::format("when it exited at {}", seconds_text(end))
                                  : fmt::format("after its stop signal at {}", seconds_text(*stop));
  if (const ProcessExit* p = exit_that_broke(c.life, *c.r.sent, c.r.done)) {
    how = fmt::format("when its process {} exited at {} ({})", p->process, seconds_text(p->t),
                      p->status);
  }
  return make(c, Hole::no_drain, fmt::format("in flight at pod {}, broken {}", c.life.name, how));
}

std::optional<RequestDiagnosis> http2_rule(const Case& c) {
  return h2_rule(c.r, c.life, c.state, c.router_applied, c.t);
}

std::optional<RequestDiagnosis> capacity_rule(const Case& c) {
  if (!overload_sign(c.r.outcome) || !c.context.replicas) {
    return std::nullopt;
  }
  int ready = c.facts.ready_pods_at(c.t);
  if (ready >= *c.context.replicas) {
    return std::nullopt;
  }
  return make(c, Hole::capacity_dip,
              fmt::format("{} while {} of {} replicas were Ready", record::to_string(c.r.outcome),
                          ready, *c.context.replicas));
}

// The pod had stopped serving (after its stop signal, exited or killed).
RequestDiagnosis stopped_rule(const Case& c) {
  std::string at = fmt::format("pod {} ({})", c.life.name, to_string(c.state));
  if (!c.router_applied) {
    std::string what =
        c.r.connection == record::Connection::reused ? "reused connection" : "new connection";
    return make(
        c, Hole::deregistration_race,
        fmt::format("{} to {} before {} applied its termination", what, at, router_name(c.r)));
  }
  if (c.r.connection == record::Connection::reused) {
    return make(c, Hole::keepalive_stale,
                fmt::format("reused keep-alive connection to {}, {} had removed it at {}", at,
                            router_name(c.r), seconds_text(*c.applied)));
  }
  auto endpoints = c.facts.ready_endpoints_on(c.r.router, c.chosen);
  if (endpoints && *endpoints == 0) {
    return make(c, Hole::capacity_dip,
                fmt::format("{} had no ready endpoint and fell back to terminating {}",
                            router_name(c.r), at));
  }
  return make(
      c, Hole::unexplained,
      fmt::format("{} applied {}'s termination at {} yet sent it a new connection at {}",
                  router_name(c.r), c.life.name, seconds_text(*c.applied), seconds_text(c.chosen)));
}

RequestDiagnosis state_rule(const Case& c) {
  switch (c.state) {
    case BackendState::starting:
      return make(c, Hole::readiness_lies,
                  fmt::format("sent to pod {} before its readiness probe passed", c.life.name));
    case BackendState::warming:
      if (!c.life.first_success) {
        return make(c, Hole::unexplained, never_served(c.life));
      }
      return make(c, Hole::readiness_lies,
                  fmt::format("pod {} was Ready at {} but had not served yet", c.life.name,
                              seconds_text(*c.life.ready)));
    case BackendState::after_signal:
    case BackendState::exited:
    case BackendState::killed:
      return stopped_rule(c);
    case BackendState::prestop:
      if (!c.life.signal_ignored.empty()) {
        return make(c, Hole::unexplained,
                    fmt::format("{} at pod {} while it kept serving after its stop signal did "
                                "nothing",
                                record::to_string(c.r.outcome), c.life.name));
      }
      return make(c, Hole::unexplained,
                  fmt::format("{} at pod {} during its preStop, before any signal",
                              record::to_string(c.r.outcome), c.life.name));
    default:
      break;
  }
  return make(c, Hole::unexplained,
              fmt::format("{} at pod {} while it was serving and not terminating",
                          record::to_string(c.r.outcome), c.life.name));
}

// attribute() for a request as its router's log tells it.
RequestDiagnosis attribute_read(const RequestRecord& r, size_t index, const Facts& facts,
                                const RuleContext& context) {
  if (auto lost = sync_loss(r, facts)) {
    lost->index = index;
    return *lost;
  }
  if (r.backend.empty() && !r.backend_candidates.empty()) {
    return one_of(r, index, facts, context);
  }
  if (auto fault = router_fault(r, facts)) {
    fault->index = index;
    return *fault;
  }
  RequestDiagnosis d;
  const PodLife* life = r.backend.empty() ? nullptr : facts.pod(r.backend);
  if (r.backend.empty()) {
    d = without_backend(r, facts, context);
  } else if (!life) {
    d = {0, record::Hole::unexplained, BackendState::unknown, false,
         fmt::format("backend pod {} has no events in the record", r.backend)};
  } else {
    Micros t = send_time(r);
    Micros chosen = chosen_time(r);
    auto applied = facts.applied_for(r.router, r.backend);
    bool router_applied = applied && *applied <= chosen;
    Case c{r, *life, facts, context, t, state_at(*life, t), applied, chosen, router_applied};
    // Most specific first: an app error on the version a migration broke, a liveness kill, a
    // SIGKILL, what HTTP/2 frames say (GOAWAY or its absence), a stale keep-alive connection (a
    // request the router no longer sent there: whatever then broke its connection, Connection:
    // close would have kept it away), what became of the request's own connection, a refusal, a
    // request cut in flight, too few replicas, then what the backend's state says.
    std::optional<RequestDiagnosis> found = schema_rule(c);
    for (auto rule : {liveness_rule, kill_rule, end_of_run_rule, http2_rule, stale_rule,
                      connection_rule, refusal_rule, in_flight_rule, capacity_rule}) {
      if (!found) {
        found = rule(c);
      }
    }
    d = found ? *found : state_rule(c);
  }
  if (!r.router_error.empty()) {
    // The router's own words for what the upstream did, beside the hole they point to.
    d.reason +=
        fmt::format(" ({} answered {}: {})", router_name(r), router_answer(r), r.router_error);
  }
  d.index = index;
  return d;
}

}  // namespace

// An ingress's own log names a fault first (an nginx reload's cut), then tells why it answered
// (HAProxy's termination state); the reason quotes the line.
RequestDiagnosis attribute(const RequestRecord& original, size_t index, const Facts& facts,
                           const RuleContext& context) {
  if (auto cut = reload_reset(original, facts)) {
    cut->index = index;
    return *cut;
  }
  LogRead read = read_router_log(original, facts);
  RequestDiagnosis d = attribute_read(read.request, index, facts, context);
  d.reason += read.quote;
  return d;
}

}  // namespace zerodrop::diagnose
