#include "verify/propagation.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/error.h"

namespace zerodrop::verify {

using record::Micros;
using record::RequestRecord;

namespace {

constexpr Micros kBackendWindow = std::chrono::seconds(2);  // around lo: the backends in rotation

// The misses in a row after which a pod still in a rotation of `backends` would have been chosen
// with probability at least 1 - error.
int misses_needed(int backends, double error) {
  double p_miss = 1.0 - 1.0 / backends;
  return static_cast<int>(std::ceil(std::log(error) / std::log(p_miss)));
}

// When the router chose the backend at the latest: the request's send, else its end.
Micros routed_by(const RequestRecord& r) {
  return r.sent.value_or(r.done);
}

// How many of sample `s` surely came after `t`: all when its span starts after `t`, else the one
// known to be at its end.
uint64_t surely_after(const FreshSample& s, Micros t) {
  if (s.intended <= t) {
    return 0;
  }
  return s.from && *s.from < t ? 1 : s.count;
}

bool overlaps(const FreshSample& s, Micros lo, Micros hi) {
  return s.intended >= lo && s.from.value_or(s.intended) <= hi;
}

std::optional<NodeUpdate> estimate(const std::string& node, const std::string& pod, Micros deleted,
                                   const std::vector<FreshSample>& fresh, double error) {
  const FreshSample* last_hit = nullptr;
  NodeUpdate u{node, pod, deleted};
  for (const FreshSample& s : fresh) {
    if (s.backend == pod) {
      last_hit = &s;
      u.hits += static_cast<int>(surely_after(s, deleted - Micros(1)));
    }
  }
  if (last_hit == nullptr) {
    return std::nullopt;  // the node never sent this pod a fresh connection: nothing to bound
  }
  u.lo = last_hit->intended;  // the router chose the pod after this instant
  std::set<std::string> seen;
  for (const FreshSample& s : fresh) {
    if (overlaps(s, u.lo - kBackendWindow, u.lo + kBackendWindow)) {
      seen.insert(s.backend);
    }
  }
  if (seen.size() < 2) {
    u.backends = static_cast<int>(seen.size());
    return u;  // no other pod to miss to: no upper bound
  }
  // One more than seen: a pod in the rotation may have answered nothing by name in the window
  // (its requests failed unnamed), and a larger rotation needs more misses.
  u.backends = static_cast<int>(seen.size()) + 1;
  int needed = misses_needed(u.backends, error);
  for (const FreshSample& s : fresh) {
    u.misses += static_cast<int>(std::min<uint64_t>(surely_after(s, u.lo), needed - u.misses));
    if (u.misses == needed) {
      u.hi = s.routed;
      break;
    }
  }
  return u;
}

}  // namespace

std::vector<NodeUpdate> estimate_updates(const std::vector<record::Event>& events,
                                         const std::vector<RequestRecord>& requests, double error) {
  return estimate_updates(events, requests, {}, error);
}

std::vector<NodeUpdate> estimate_updates(
    const std::vector<record::Event>& events, const std::vector<RequestRecord>& requests,
    const std::map<std::string, std::vector<BackendBucket>>& buckets, double error) {
  std::map<std::string, std::vector<FreshSample>> fresh;  // by node, in intended order
  for (const RequestRecord& r : requests) {
    if (r.router.rfind("node/", 0) == 0 && r.connection == record::Connection::fresh
        && !r.backend.empty()) {
      fresh[r.router].push_back({r.intended, routed_by(r), r.backend});
    }
  }
  for (const auto& [node, list] : buckets) {
    for (const BackendBucket& b : list) {
      for (FreshSample& s : fresh_samples(b)) {
        fresh[node].push_back(std::move(s));
      }
    }
  }
  for (auto& [node, list] : fresh) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.intended < b.intended; });
  }
  std::vector<NodeUpdate> out;
  for (const record::Event& e : events) {
    if (e.kind != record::EventKind::deletion_started) {
      continue;
    }
    for (const auto& [node, list] : fresh) {
      if (auto u = estimate(node, e.pod, e.t, list, error)) {
        out.push_back(*u);
      }
    }
  }
  return out;
}

size_t apply_updates(const std::vector<NodeUpdate>& updates, std::vector<record::Event>& events,
                     std::vector<RequestRecord>& requests) {
  std::map<std::pair<std::string, std::string>, const NodeUpdate*> by_key;
  for (const NodeUpdate& u : updates) {
    by_key[{u.node, u.pod}] = &u;
    if (u.hi) {
      record::Event e;
      e.t = *u.hi;
      e.t_min = u.lo;
      e.kind = record::EventKind::router_applied;
      e.router = u.node;
      e.pod = u.pod;
      e.conditions = record::Conditions{false, false, true};
      e.detail = fmt::format("inferred: {} stopped sending new connections to {} between {} and {}",
                             u.node, u.pod, format_duration(u.lo), format_duration(*u.hi));
      events.push_back(std::move(e));
    }
  }
  auto update_of = [&](const RequestRecord& r, const std::string& pod) -> const NodeUpdate* {
    auto it = by_key.find({r.router, pod});
    return it == by_key.end() ? nullptr : it->second;
  };
  size_t unknown = 0;
  for (RequestRecord& r : requests) {
    Micros t = r.sent.value_or(r.intended);
    if (r.failed && !r.backend_candidates.empty()) {
      std::erase_if(r.backend_candidates, [&](const std::string& pod) {
        const NodeUpdate* u = update_of(r, pod);
        return u != nullptr && u->hi && t > *u->hi;
      });
      if (r.backend_candidates.size() == 1) {
        r.backend = r.backend_candidates.front();
        r.backend_candidates.clear();
      }
    } else if (r.failed && r.connection == record::Connection::reused && !r.backend.empty()) {
      const NodeUpdate* u = update_of(r, r.backend);
      if (u != nullptr && t > u->lo && (!u->hi || t <= *u->hi)) {
        r.backend.clear();
        ++unknown;
      }
    }
  }
  return unknown;
}

void write_propagation(const record::RunFolder& folder, const std::vector<NodeUpdate>& updates,
                       int64_t wall_start_us) {
  if (updates.empty()) {
    return;
  }
  std::string path = folder.dir() + "/propagation.ndjson";
  std::ofstream out(path);
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
  for (const NodeUpdate& u : updates) {
    nlohmann::json j = {{"node", u.node},
                        {"pod", u.pod},
                        {"deleted_us", u.deleted.count()},
                        {"lo_us", u.lo.count()},
                        {"lo_wall_us", wall_start_us + u.lo.count()},
                        {"hits", u.hits},
                        {"misses", u.misses},
                        {"backends", u.backends}};
    j["hi_us"] = u.hi ? nlohmann::json(u.hi->count()) : nlohmann::json();
    j["hi_wall_us"] = u.hi ? nlohmann::json(wall_start_us + u.hi->count()) : nlohmann::json();
    out << j.dump() << '\n';
    std::cerr << fmt::format(
        "zerodrop: verify: {} stopped sending new connections to {} "
        "between {} and {}\n",
        u.node, u.pod, format_duration(u.lo),
        u.hi ? format_duration(*u.hi) : std::string("(unbounded)"));
  }
}

}  // namespace zerodrop::verify
