#include "report/timeline.h"

#include <algorithm>
#include <csignal>
#include <map>

#include <fmt/format.h>

#include "base/subprocess.h"

namespace zerodrop::report {
namespace {

void add_bucket_record(std::vector<Bucket>& buckets, Micros width, Micros t, uint64_t requests,
                       uint64_t failed) {
  if (buckets.empty() || t < Micros{0}) {
    return;
  }
  size_t i = std::min(buckets.size() - 1, static_cast<size_t>(t / width));
  buckets[i].requests += requests;
  buckets[i].failed += failed;
}

void add_pod_marks(const diagnose::PodLife& p, std::vector<Mark>& out) {
  auto add = [&](const std::optional<Micros>& t, const std::string& what) {
    if (t) {
      out.push_back({*t, MarkKind::pod, fmt::format("{} {}", p.name, what)});
    }
  };
  add(p.created, "created");
  add(p.ready, "Ready");
  add(p.deletion, "deleted");
  add(p.prestop_started, "preStop");
  add(p.signal, signal_full_name(p.stop_signal.value_or(SIGTERM)));
  add(p.kill, "SIGKILL");
  add(p.end_of_run_kill, "SIGKILL (end of the run)");
  std::string exit = p.exit_signal ? fmt::format("exited ({})", signal_full_name(*p.exit_signal))
                                   : fmt::format("exited ({})", p.exit_code.value_or(0));
  add(p.exited, exit);
  for (Micros t : p.liveness_restarts) {
    out.push_back({t, MarkKind::pod, fmt::format("{} liveness restart", p.name)});
  }
}

}  // namespace

std::string seconds(Micros t) {
  return fmt::format("{:.2f}", std::chrono::duration<double>(t).count());
}

Micros run_end(const record::RunRecord& run) {
  Micros end = run.end;
  for (const record::Event& e : run.events) {
    end = std::max(end, e.t);
  }
  for (const record::RequestRecord& r : run.requests) {
    end = std::max(end, r.done);
  }
  for (const record::TimeBucket& b : run.buckets) {
    end = std::max(end, b.start + b.width);
  }
  return end;
}

Micros nice_width(Micros span, int max_buckets) {
  constexpr int64_t kSteps[] = {100'000,   200'000,   250'000,    500'000,    1'000'000,
                                2'000'000, 5'000'000, 10'000'000, 30'000'000, 60'000'000};
  for (int64_t step : kSteps) {
    if (span.count() / step < max_buckets) {
      return Micros{step};
    }
  }
  return Micros{span.count() / max_buckets + 1};
}

std::vector<Bucket> bucketize(const record::RunRecord& run, const diagnose::Diagnosis& d,
                              Micros width) {
  size_t count =
      std::max<size_t>(1, static_cast<size_t>((run_end(run) + width - Micros{1}) / width));
  std::vector<Bucket> buckets(count);
  for (size_t i = 0; i < count; ++i) {
    buckets[i].start = width * static_cast<int64_t>(i);
    buckets[i].width = width;
  }
  for (const record::RequestRecord& r : run.requests) {
    add_bucket_record(buckets, width, r.sent.value_or(r.intended), 1, r.failed ? 1 : 0);
  }
  for (const diagnose::RequestDiagnosis& f : d.failures) {
    const record::RequestRecord& r = run.requests[f.index];
    size_t i = std::min(count - 1, static_cast<size_t>(r.sent.value_or(r.intended) / width));
    ++buckets[i].by_hole[static_cast<size_t>(f.hole)];
  }
  for (const record::TimeBucket& b : run.buckets) {
    uint64_t failed = b.requests - std::min(b.requests, b.outcomes[0]);
    add_bucket_record(buckets, width, b.start, b.requests, failed);
    size_t i = std::min(count - 1, static_cast<size_t>(b.start / width));
    for (size_t h = 0; h < record::kHoleCount; ++h) {
      buckets[i].by_hole[h] += b.failures_by_hole[h];
    }
  }
  return buckets;
}

// HTTP/2 connection events, one mark per pod and kind at the first of them: a rollout drains
// many connections at once, and one mark each would bury the pod events.
void add_connection_marks(const record::RunRecord& run, std::vector<Mark>& out) {
  struct Seen {
    Micros first{0};
    std::vector<uint32_t> conns;
  };

  std::map<std::pair<std::string, bool>, Seen> seen;  // (pod, GOAWAY?) -> connections
  for (const record::Event& e : run.events) {
    bool goaway = e.kind == record::EventKind::goaway_received;
    bool blind =
        e.kind == record::EventKind::connection_closed && e.connection && !e.connection->goaway;
    if ((!goaway && !blind) || !e.connection || e.pod.empty()) {
      continue;
    }
    auto [it, fresh] = seen.try_emplace({e.pod, goaway}, Seen{e.t, {}});
    std::vector<uint32_t>& conns = it->second.conns;
    if (std::find(conns.begin(), conns.end(), e.connection->conn) == conns.end()) {
      conns.push_back(e.connection->conn);
    }
  }
  for (const auto& [key, s] : seen) {
    out.push_back(
        {s.first, MarkKind::connection,
         key.second ? fmt::format("{} GOAWAY ({} conn)", key.first, s.conns.size())
                    : fmt::format("{} closed {} conn without GOAWAY", key.first, s.conns.size())});
  }
}

std::vector<Mark> marks(const record::RunRecord& run, const diagnose::Diagnosis& d) {
  std::vector<Mark> out;
  for (const diagnose::PodLife& p : d.pods) {
    add_pod_marks(p, out);
  }
  for (const diagnose::PropagationSample& s : d.propagation.samples) {
    out.push_back({s.applied, MarkKind::router, fmt::format("{} drops {}", s.router, s.pod)});
  }
  if (d.disruption) {
    out.push_back({d.disruption->start, MarkKind::disruption, "disruption starts"});
    out.push_back({d.disruption->end, MarkKind::disruption, "disruption ends"});
  }
  for (const record::Event& e : run.events) {
    if (e.kind == record::EventKind::rollout_started) {
      out.push_back({e.t, MarkKind::rollout, "rollout starts"});
    } else if (e.kind == record::EventKind::rollout_finished) {
      out.push_back({e.t, MarkKind::rollout, "rollout done"});
    } else if (e.kind == record::EventKind::migration_started) {
      out.push_back({e.t, MarkKind::rollout, "migration starts"});
    } else if (e.kind == record::EventKind::migration_finished) {
      out.push_back({e.t, MarkKind::rollout, "migration done"});
    }
  }
  add_connection_marks(run, out);
  std::stable_sort(out.begin(), out.end(), [](const Mark& a, const Mark& b) { return a.t < b.t; });
  return out;
}

}  // namespace zerodrop::report
