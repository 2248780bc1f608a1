#include "diagnose/diagnose.h"

#include <algorithm>
#include <array>
#include <csignal>
#include <map>

#include <fmt/format.h>

#include "base/parse.h"
#include "diagnose/evidence.h"
#include "diagnose/facts.h"
#include "diagnose/fix.h"
#include "diagnose/rules.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;

constexpr auto kStateNames = std::to_array<std::string_view>({
    "unknown", "starting", "warming", "serving", "prestop", "after_signal", "exited", "killed",
});
static_assert(kStateNames.size() == static_cast<size_t>(BackendState::killed) + 1);

constexpr auto kPhaseNames = std::to_array<std::string_view>(
    {"serving", "before_signal", "after_signal", "after_router_update"});
static_assert(kPhaseNames.size() == kPhaseCount);

Phase phase_of(const record::RequestRecord& r, const PodLife& life, const Facts& facts) {
  Micros t = r.sent.value_or(r.intended);
  if (!life.deletion || t < *life.deletion) {
    return Phase::serving;
  }
  auto applied = facts.applied_for(r.router, r.backend);
  if (applied && *applied <= t) {
    return Phase::after_router_update;
  }
  BackendState state = state_at(life, t);
  return state == BackendState::prestop ? Phase::before_signal : Phase::after_signal;
}

std::vector<PodTraffic> traffic_of(const record::RunRecord& run, const Facts& facts) {
  std::vector<PodTraffic> traffic;
  std::map<std::string, size_t> index;
  for (const PodLife& life : facts.pods()) {
    index.emplace(life.name, traffic.size());
    traffic.push_back(PodTraffic{.pod = life.name});
  }
  for (const record::RequestRecord& r : run.requests) {
    const PodLife* life = facts.pod(r.backend);
    if (!life) {
      continue;  // no backend, or a pod without events: nothing to place it in
    }
    auto phase = static_cast<size_t>(phase_of(r, *life, facts));
    PodTraffic& p = traffic[index.at(r.backend)];
    ++p.requests[phase];
    p.failed[phase] += r.failed ? 1 : 0;
  }
  return traffic;
}

std::optional<int> scenario_replicas(const record::RunRecord& run) {
  auto it = run.scenario.find("replicas");
  if (it == run.scenario.end()) {
    return std::nullopt;
  }
  try {
    return static_cast<int>(parse_integer(it->second, "replicas", 0, 1 << 20));
  } catch (const std::exception&) {
    return std::nullopt;  // an unreadable setting weakens the advice, never the attribution
  }
}

double percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) {
    return 0;
  }
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

void add_classes(Totals& totals, const std::map<std::string, uint64_t>& counts) {
  totals.by_class.assign(counts.begin(), counts.end());
  std::stable_sort(totals.by_class.begin(), totals.by_class.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

Totals totals_of_requests(const record::RunRecord& run) {
  Totals totals;
  std::map<std::string, uint64_t> classes;
  std::vector<double> latency;
  for (const record::RequestRecord& r : run.requests) {
    ++totals.requests;
    ++(r.failed ? totals.failed : totals.ok);
    if (r.failed) {
      ++classes[std::string(record::to_string(r.outcome))];
    }
    latency.push_back(std::chrono::duration<double, std::milli>(r.done - r.intended).count());
  }
  add_classes(totals, classes);
  std::sort(latency.begin(), latency.end());
  totals.p50_ms = percentile(latency, 0.50);
  totals.p90_ms = percentile(latency, 0.90);
  totals.p99_ms = percentile(latency, 0.99);
  totals.max_ms = latency.empty() ? 0 : latency.back();
  return totals;
}

// The simulator keeps counts per time bucket, not single requests (no latency percentiles).
Totals totals_of_buckets(const record::RunRecord& run) {
  Totals totals;
  std::map<std::string, uint64_t> classes;
  for (const record::TimeBucket& b : run.buckets) {
    totals.requests += b.requests;
    for (size_t i = 1; i < record::kOutcomeCount; ++i) {
      totals.failed += b.outcomes[i];
      if (b.outcomes[i] > 0) {
        classes[std::string(record::to_string(static_cast<record::Outcome>(i)))] += b.outcomes[i];
      }
    }
  }
  totals.ok = totals.requests - std::min(totals.requests, totals.failed);
  add_classes(totals, classes);
  return totals;
}

// The drain the grace period must cover: the longest a pod took to exit after its stop signal,
// or the longest successful request, whichever is longer.
void measure_drain(const record::RunRecord& run, const Facts& facts, Diagnosis& d) {
  for (const PodLife& p : facts.pods()) {
    bool killed = p.kill || (p.exit_signal && *p.exit_signal == SIGKILL);
    if (p.signal && p.exited && !killed && *p.exited >= *p.signal
        && (!d.longest_drain || *p.exited - *p.signal > *d.longest_drain)) {
      d.longest_drain = *p.exited - *p.signal;
      d.drain_evidence = fmt::format("pod {} exited {} after its stop signal", p.name,
                                     duration_text(*d.longest_drain));
    }
  }
  for (const record::RequestRecord& r : run.requests) {
    if (!r.failed && r.sent && (!d.longest_drain || r.done - *r.sent > *d.longest_drain)) {
      d.longest_drain = r.done - *r.sent;
      d.drain_evidence =
          fmt::format("the longest successful request took {}", duration_text(*d.longest_drain));
    }
  }
}

// The simulator attributes its failures itself: one summary per hole from the buckets.
std::vector<HoleSummary> holes_of_buckets(const record::RunRecord& run) {
  std::vector<HoleSummary> holes;
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    HoleSummary s{.hole = static_cast<Hole>(h)};
    for (const record::TimeBucket& b : run.buckets) {
      if (b.failures_by_hole[h] > 0) {
        s.first = s.requests == 0 ? b.start : s.first;
        s.last = b.start + b.width;
        s.requests += b.failures_by_hole[h];
      }
    }
    if (s.requests > 0) {
      s.evidence = fmt::format("{} failures attributed by the {} engine between {} and {}",
                               s.requests, run.engine, seconds_text(s.first), seconds_text(s.last));
      holes.push_back(s);
    }
  }
  return holes;
}

std::string conclusion_of(const Diagnosis& d, const Facts& facts) {
  if (d.verdict == Verdict::pass) {
    return fmt::format("no request failed ({} requests)", d.totals.requests);
  }
  std::vector<std::string> parts;
  for (const HoleSummary& h : d.holes) {
    parts.push_back(fmt::format("{} {}", record::to_string(h.hole), h.requests));
  }
  std::string head = fmt::format("{} of {} requests failed", d.totals.failed, d.totals.requests);
  if (!d.rollout_related) {
    std::string why = facts.rollout_started() ? "" : " (no rollout happened in this run)";
    return fmt::format("{}, none with a rollout-related cause{}", head, why);
  }
  return fmt::format("{}: {}", head, fmt::join(parts, ", "));
}

void add_fixes(const record::RunRecord& run, const Options& options, Diagnosis& d,
               const Facts& facts, const RuleContext& context) {
  FixInputs in{
      options, &run.scenario, d.propagation, d.longest_drain, d.drain_evidence, context.replicas,
      0};
  for (HoleSummary& h : d.holes) {
    in.min_ready = min_ready_during(run, d.failures, h.hole, facts);
    h.fix = fix_for(h.hole, in);
  }
}

}  // namespace

std::string_view to_string(BackendState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::string_view to_string(Phase phase) {
  return kPhaseNames[static_cast<size_t>(phase)];
}

Diagnosis diagnose(const record::RunRecord& run, const Options& options) {
  k8s_minor(options.k8s_version);  // reject a malformed version before any work
  Facts facts(run);
  Diagnosis d;
  d.pods = facts.pods();
  d.traffic = traffic_of(run, facts);
  d.propagation = facts.propagation();
  measure_drain(run, facts, d);
  RuleContext context{scenario_replicas(run), {}, d.drain_evidence};
  if (auto it = run.scenario.find("readiness"); it != run.scenario.end()) {
    context.readiness = it->second;
  }
  // Attribute every failed request, then group by hole with evidence, then compute the fixes.
  if (run.requests.empty() && !run.buckets.empty()) {
    d.totals = totals_of_buckets(run);
    d.holes = holes_of_buckets(run);
  } else {
    d.totals = totals_of_requests(run);
    for (size_t i = 0; i < run.requests.size(); ++i) {
      if (run.requests[i].failed) {
        d.failures.push_back(attribute(run.requests[i], i, facts, context));
      }
    }
    d.holes = summarize(run, d.failures, facts, context);
  }
  add_fixes(run, options, d, facts, context);
  d.verdict = d.totals.failed == 0 ? Verdict::pass : Verdict::fail;
  d.rollout_related = std::any_of(d.holes.begin(), d.holes.end(),
                                  [](const HoleSummary& h) { return h.hole != Hole::unexplained; });
  d.conclusion = conclusion_of(d, facts);
  return d;
}

}  // namespace zerodrop::diagnose
