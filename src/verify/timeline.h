#pragma once

// The run's one clock and its record so far: verify's watches, its --url load and its agents add
// to it from their threads.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "record/run_folder.h"
#include "record/run_record.h"
#include "verify/agents.h"
#include "verify/observer.h"
#include "verify/propagation.h"

namespace zerodrop::verify {

using Clock = std::chrono::steady_clock;
using record::Event;
using record::EventKind;

inline Event api_event(Micros t, EventKind kind, std::string detail) {
  Event e;
  e.t = t;
  e.kind = kind;
  e.detail = std::move(detail);
  return e;
}

// The run's one clock and its record so far. Watch threads and the load's threads add to it.
class Timeline {
public:
  Timeline(const record::RunFolder& folder, PodTemplate pod_template)
      : folder_(folder),
        start_(Clock::now()),
        wall_start_(std::chrono::system_clock::now()),
        writer_(folder, record::Traffic::requests),
        observer_(pod_template) {}

  Micros now() const { return std::chrono::duration_cast<Micros>(Clock::now() - start_); }

  // The wall-clock time of t = 0, in microseconds since the epoch: agents' clocks join here.
  int64_t wall_start_us() const {
    return std::chrono::duration_cast<Micros>(wall_start_.time_since_epoch()).count();
  }

  Clock::time_point start() const { return start_; }

  // Runs fn(observer, t) under the lock and records the events it returns.
  template <typename Fn>
  void observe(Fn fn) {
    std::lock_guard lock(mutex_);
    for (Event& e : fn(observer_, now())) {
      add_locked(std::move(e));
    }
  }

  void add(Event e) {
    std::lock_guard lock(mutex_);
    add_locked(std::move(e));
  }

  void note(const std::string& text) { add(api_event(now(), EventKind::note, text)); }

  template <typename Fn>
  auto with_observer(Fn fn) {
    std::lock_guard lock(mutex_);
    return fn(observer_);
  }

  void add_request(record::RequestRecord r) {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(r));
  }

  // An agent started: its clock joins this one through the wall clock (the same host's in the
  // lab; NTP-synchronised nodes in a cluster).
  void agent_hello(const AgentHello& h) {
    Micros offset(h.wall_us - wall_start_us());
    {
      std::lock_guard lock(mutex_);
      agents_[h.pod] = {h.node, offset};
    }
    note(fmt::format("agent {} (index {}) on node {} is loading; its t = 0 is verify's {}", h.pod,
                     h.index, h.node, format_duration(offset)));
  }

  // An agent's request, moved onto this clock; its router is the agent's node.
  void agent_request(const AgentHello& h, record::RequestRecord r) {
    std::lock_guard lock(mutex_);
    Micros offset = agents_[h.pod].second;
    r.intended += offset;
    r.done += offset;
    for (auto* t : {&r.sent, &r.first_byte, &r.backend_fate_at, &r.bound}) {
      if (*t) {
        **t += offset;
      }
    }
    r.router = "node/" + h.node;
    Tally& tally = tallies_[h.pod];
    ++tally.lines;
    tally.failed_lines += r.failed ? 1 : 0;
    requests_.push_back(std::move(r));
  }

  // An agent's bucket, moved onto this clock and merged with the other parts of it.
  void agent_bucket(const AgentHello& h, BackendBucket b) {
    std::lock_guard lock(mutex_);
    Micros offset = agents_[h.pod].second;
    b.start += offset;
    for (auto* t : {&b.fresh_first, &b.fresh_last}) {
      if (*t) {
        (*t)->intended += offset;
        (*t)->routed += offset;
      }
    }
    Tally& tally = tallies_[h.pod];
    tally.bucketed += b.requests();
    tally.bucketed_failed += b.failed[0] + b.failed[1];
    auto [it, added] = buckets_["node/" + h.node].try_emplace({b.start.count(), b.backend}, b);
    if (!added) {
      it->second.merge(b);
    }
  }

  // An agent's own count at its end, checked against what its stream delivered.
  void agent_summary(const AgentHello& h, const AgentSummary& s) {
    std::string text;
    {
      std::lock_guard lock(mutex_);
      const Tally& t = tallies_[h.pod];
      bool buckets = h.records == AgentRecords::failed;
      uint64_t requests = buckets ? t.bucketed : t.lines;
      uint64_t failed = buckets ? t.bucketed_failed : t.failed_lines;
      text = requests == s.requests && failed == s.failed && t.failed_lines == failed
                 ? fmt::format("agent {}: {} requests, {} failed; its stream delivered each", h.pod,
                               s.requests, s.failed)
                 : fmt::format(
                     "agent {}: {} requests, {} failed by its own count; its stream "
                     "delivered {}, {} failed ({} failure lines)",
                     h.pod, s.requests, s.failed, requests, failed, t.failed_lines);
    }
    note(text);
  }

  // Each node's update of each deleted pod as finish() estimated it.
  const std::vector<NodeUpdate>& updates() const { return updates_; }

  std::vector<std::string> agent_nodes() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> nodes;
    for (const auto& [pod, agent] : agents_) {
      nodes.push_back(agent.first);
    }
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  // The record, requests in the order they were meant to be sent (numbered anew: each agent
  // and the --url load count from 0); the writer gets the requests and is closed.
  record::RunRecord finish(record::RunRecord run) {
    std::lock_guard lock(mutex_);
    std::stable_sort(requests_.begin(), requests_.end(), [](const auto& a, const auto& b) {
      return std::tie(a.intended, a.router, a.seq) < std::tie(b.intended, b.router, b.seq);
    });
    for (size_t i = 0; i < requests_.size(); ++i) {
      requests_[i].seq = i;
    }
    size_t named = attribute_to_terminating(events_, requests_);
    if (named > 0) {
      add_locked(
          api_event(now(), EventKind::note,
                    fmt::format("{} failed requests on new connections carried no backend "
                                "name; each went to the only pod terminating when it was sent",
                                named)));
    }
    // Each node's update of each deleted pod, bounded from its agent's traffic, tells the
    // diagnosis when the node had surely dropped it.
    std::map<std::string, std::vector<BackendBucket>> buckets;
    std::vector<BackendBucket> all;
    for (const auto& [router, parts] : buckets_) {
      for (const auto& [key, b] : parts) {
        buckets[router].push_back(b);
        all.push_back(b);
      }
    }
    updates_ = estimate_updates(events_, requests_, buckets);
    std::vector<Event> inferred;
    size_t unknown = apply_updates(updates_, inferred, requests_);
    for (Event& e : inferred) {
      add_locked(std::move(e));
    }
    if (unknown > 0) {
      add_locked(api_event(
          now(), EventKind::note,
          fmt::format("{} failed requests on reused connections were sent while their node's "
                      "update of their pod lay between its bounds: keepalive-stale after it, the "
                      "deregistration race before it; their backend is left out",
                      unknown)));
    }
    for (const auto& r : requests_) {
      writer_.write(r);
    }
    writer_.close();
    run.events = events_;
    run.requests = std::move(requests_);
    run.buckets = ok_time_buckets(all);
    write_buckets(run.buckets);
    return run;
  }

private:
  // What verify counted of each agent's requests: req lines, and the requests in its buckets.
  struct Tally {
    uint64_t lines = 0;
    uint64_t failed_lines = 0;
    uint64_t bucketed = 0;
    uint64_t bucketed_failed = 0;
  };

  // buckets.ndjson beside requests.ndjson: the agents' successes as counts.
  void write_buckets(const std::vector<record::TimeBucket>& buckets) {
    if (buckets.empty()) {
      return;
    }
    std::ofstream out(folder_.buckets());
    for (const record::TimeBucket& b : buckets) {
      record::write_ndjson(out, b);
    }
    out.close();
    if (!out) {
      throw Error(fmt::format("cannot write {}", folder_.buckets()));
    }
  }

  void add_locked(Event e) {
    writer_.write(e);
    events_.push_back(std::move(e));
  }

  record::RunFolder folder_;
  Clock::time_point start_;
  std::chrono::system_clock::time_point wall_start_;
  std::mutex mutex_;
  record::RunWriter writer_;
  Observer observer_;
  std::vector<Event> events_;
  std::vector<record::RequestRecord> requests_;
  std::map<std::string, std::pair<std::string, Micros>> agents_;  // pod -> node, clock offset
  std::vector<NodeUpdate> updates_;
  // By router, then by (start µs, backend): the agents' buckets, their parts merged.
  std::map<std::string, std::map<std::pair<int64_t, std::string>, BackendBucket>> buckets_;
  std::map<std::string, Tally> tallies_;  // by agent pod
};

}  // namespace zerodrop::verify
