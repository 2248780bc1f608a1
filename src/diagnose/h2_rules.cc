#include "diagnose/h2_rules.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using record::Outcome;
using record::RequestRecord;

constexpr Micros kTolerance{50'000};  // as the general rules: an exit and a close coincide
constexpr uint32_t kNoError = 0;

RequestDiagnosis make(Hole hole, BackendState state, bool applied, std::string reason) {
  return {0, hole, state, applied, std::move(reason)};
}

bool cut(Outcome o) {
  return o == Outcome::reset_before_response || o == Outcome::closed_before_response
         || o == Outcome::reset_during_response || o == Outcome::truncated_response;
}

std::string goaway_text(const record::GoawayRecord& g) {
  std::string debug = g.debug.empty() ? "" : fmt::format(" \"{}\"", g.debug);
  return fmt::format("GOAWAY({}, {}{}) at {}", g.last_stream_id, record::h2_error_name(g.error),
                     debug, seconds_text(g.t));
}

std::string answered(const RequestRecord& r) {
  const record::Http2Facts& h = *r.h2;
  return h.grpc_message.empty()
             ? std::string(record::to_string(r.outcome))
             : fmt::format("{} \"{}\"", record::to_string(r.outcome), h.grpc_message);
}

// The server ended its drain before this RPC: a GOAWAY with an error, or gRPC's
// "Cancelling all calls" (Python's stop(None), a Shutdown deadline that passed).
std::optional<std::string> drain_cut(const RequestRecord& r, const PodLife& life) {
  const record::Http2Facts& h = *r.h2;
  bool error_goaway = h.goaway && h.goaway->error != kNoError;
  bool cancelling = r.outcome == Outcome::grpc_unavailable
                    && h.grpc_message.find("Cancelling all calls") != std::string::npos;
  if (!error_goaway && !cancelling) {
    return std::nullopt;
  }
  std::string frame = h.goaway ? goaway_text(*h.goaway) + ", " : "";
  return fmt::format("pod {} cut its drain short: {}this RPC answered {}", life.name, frame,
                     answered(r));
}

// Through an HTTP/2 router (the lab's l7): the pod's connection to the router broke under an RPC
// sent before the pod's stop began, and the router answered UNAVAILABLE (or 502) for it.
std::optional<RequestDiagnosis> upstream_cut(const RequestRecord& r, const PodLife& life,
                                             BackendState state, bool applied, Micros t) {
  bool broke = r.router_error == "upstream_closed" || r.router_error == "upstream_reset";
  std::optional<Micros> stop = life.signal ? life.signal : life.exited;
  if (!broke || !stop || t >= *stop) {
    return std::nullopt;  // sent after the stop: the state rules name the race
  }
  return make(Hole::no_drain, state, applied,
              fmt::format("in flight at pod {} when its HTTP/2 connection to {} ended without "
                          "the RPC's answer ({}): the pod did not drain it",
                          life.name, r.router.empty() ? "the router" : "router " + r.router,
                          r.router_error));
}

std::optional<RequestDiagnosis> unresent(const RequestRecord& r, BackendState state, bool applied) {
  if ((r.outcome != Outcome::refused_stream && r.outcome != Outcome::goaway_unprocessed)
      || r.h2->attempts > 1) {
    return std::nullopt;
  }
  return make(Hole::unexplained, state, applied,
              fmt::format("{} and not resent: refused unprocessed (RFC 9113 §8.7), which gRPC "
                          "clients retry (gRFC A6); not a server hole",
                          record::to_string(r.outcome)));
}

// When the connection of `r` ended: the router's record of its backend connection, else the
// pod's exit.
std::optional<Micros> closed_at(const RequestRecord& r, const PodLife& life) {
  return r.backend_fate_at ? r.backend_fate_at : life.exited;
}

std::optional<RequestDiagnosis> no_goaway(const RequestRecord& r, const PodLife& life,
                                          BackendState state, bool applied) {
  if (r.h2->goaway || !cut(r.outcome)) {
    return std::nullopt;
  }
  std::optional<Micros> at = closed_at(r, life);
  std::string when = at ? fmt::format(" at {}", seconds_text(*at)) : "";
  if (r.connection == record::Connection::reused && at && r.sent && *r.sent + kTolerance >= *at) {
    return make(Hole::keepalive_stale, state, applied,
                fmt::format("sent on a reused HTTP/2 connection that pod {} closed without "
                            "GOAWAY{}: the client learnt of the close only by the failure",
                            life.name, when));
  }
  return make(Hole::no_drain, state, applied,
              fmt::format("in flight on an HTTP/2 connection that pod {} closed without "
                          "GOAWAY{} ({})",
                          life.name, when, record::to_string(r.outcome)));
}

}  // namespace

std::optional<RequestDiagnosis> h2_rule(const RequestRecord& r, const PodLife& life,
                                        BackendState state, bool applied, Micros t) {
  if (!r.h2) {
    return std::nullopt;
  }
  if (auto d = unresent(r, state, applied)) {
    return d;
  }
  if (state_at(life, r.done + kTolerance) < BackendState::after_signal) {
    return std::nullopt;  // the pod was not stopping: nothing HTTP/2 adds
  }
  if (std::optional<std::string> why = drain_cut(r, life)) {
    return make(Hole::no_drain, state, applied, *why);
  }
  if (auto d = upstream_cut(r, life, state, applied, t)) {
    return d;
  }
  const record::Http2Facts& h = *r.h2;
  bool cancelled = r.outcome == Outcome::grpc_cancelled || r.outcome == Outcome::stream_reset;
  if (cancelled && h.goaway && h.stream != 0 && h.stream <= h.goaway->last_stream_id) {
    return make(Hole::no_drain, state, applied,
                fmt::format("pod {} accepted this RPC (stream {}, within its GOAWAY's last "
                            "stream id {}) and then cancelled it ({}): gRPC's C core cancels RPCs "
                            "that race its first GOAWAY; no server setting avoids it",
                            life.name, h.stream, h.goaway->last_stream_id, answered(r)));
  }
  bool refused = r.outcome == Outcome::connect_refused
                 || r.outcome == Outcome::reset_before_response
                 || r.outcome == Outcome::closed_before_response;
  if (refused && r.connection == record::Connection::fresh && !applied && life.first_goaway
      && *life.first_goaway <= t) {
    return make(Hole::deregistration_race, state, applied,
                fmt::format("new connection after pod {}'s GOAWAY at {} (its clients reconnect "
                            "at once), routed back to it before {} applied its termination: "
                            "its listener had already closed",
                            life.name, seconds_text(*life.first_goaway),
                            r.router.empty() ? "its router" : "router " + r.router));
  }
  return no_goaway(r, life, state, applied);
}

std::vector<std::string> h2_notes(const record::RunRecord& run, const std::vector<PodLife>& pods) {
  std::vector<std::string> notes;
  for (const PodLife& p : pods) {
    if (p.closed_without_goaway > 0) {
      notes.push_back(fmt::format(
          "pod {} closed {} HTTP/2 connection(s) without GOAWAY ({} stream(s) open on them): "
          "at a higher load, RPCs in flight or sent into the close fail (no-drain, "
          "keepalive-stale)",
          p.name, p.closed_without_goaway, p.streams_cut));
    }
  }
  // The tail: requests sent after the last deletion of the run, by backend pod.
  Micros last_deletion{0};
  for (const PodLife& p : pods) {
    last_deletion = std::max(last_deletion, p.deletion.value_or(Micros{0}));
  }
  // Only the pods the rollout left: the deleted ones drain their last connections meanwhile.
  std::set<std::string> deleted;
  for (const PodLife& p : pods) {
    if (p.deletion) {
      deleted.insert(p.name);
    }
  }
  std::map<std::string, uint64_t> tail;
  uint64_t total = 0;
  for (const RequestRecord& r : run.requests) {
    if (r.h2 && !r.backend.empty() && !deleted.contains(r.backend)
        && r.sent.value_or(r.intended) > last_deletion) {
      ++tail[r.backend];
      ++total;
    }
  }
  if (last_deletion == Micros{0} || tail.size() < 2 || total < 20) {
    return notes;
  }
  auto top = std::max_element(tail.begin(), tail.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  double share = static_cast<double>(top->second) / static_cast<double>(total);
  if (share >= 1.5 / static_cast<double>(tail.size())) {
    notes.push_back(fmt::format(
        "post-rollout skew: pod {} took {:.0f} % of the RPCs after the last deletion ({} pods "
        "left): HTTP/2 connections stay where they reconnected; a MAX_CONNECTION_AGE (grpc-go "
        "keepalive.ServerParameters, C++ grpc.max_connection_age_ms, Java maxConnectionAge) with "
        "a grace ≥ the longest RPC spreads them again",
        top->first, share * 100, tail.size()));
  }
  return notes;
}

std::vector<std::string> h2_fix_steps(Hole hole, const record::Scenario* scenario) {
  if (scenario == nullptr || !scenario->extra.contains("protocol")) {
    return {};
  }
  const std::string stop =
      "Go: GracefulStop() in a goroutine with a timer that calls Stop(), and "
      "health.Server.Shutdown(); C++: server->Shutdown(now + drain) and "
      "GetHealthCheckService()->Shutdown(); Python: server.stop(grace).wait(); Java: shutdown(), "
      "awaitTermination(drain), then shutdownNow()";
  switch (hole) {
    case Hole::no_drain:
      return {
          "HTTP/2: on SIGTERM, after the preStop delay, stop gracefully (GOAWAY, then let "
          "the RPCs in flight finish) with a drain deadline ≥ the longest RPC and below "
          "terminationGracePeriodSeconds minus the preStop delay. "
          + stop + "."};
    case Hole::deregistration_race:
      return {
          "HTTP/2: a graceful stop closes the listener first and its GOAWAY sends every "
          "client to reconnect at once: run it only after the preStop delay. "
          + stop + "."};
    case Hole::keepalive_stale:
      return {"HTTP/2: never close a connection without GOAWAY; a graceful stop sends it. " + stop
              + "."};
    default:
      break;
  }
  return {};
}

}  // namespace zerodrop::diagnose
