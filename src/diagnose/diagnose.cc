#include "diagnose/diagnose.h"

#include <algorithm>
#include <array>
#include <csignal>
#include <map>

#include <fmt/format.h>

#include "base/subprocess.h"
#include "diagnose/evidence.h"
#include "diagnose/facts.h"
#include "diagnose/fix.h"
#include "diagnose/h2_rules.h"
#include "diagnose/rules.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;

constexpr auto kStateNames = std::to_array<std::string_view>(
    {"unknown", "starting", "warming", "serving", "prestop", "after_signal", "exited", "killed"});
static_assert(kStateNames.size() == static_cast<size_t>(BackendState::killed) + 1);

constexpr auto kPhaseNames = std::to_array<std::string_view>(
    {"serving", "before_signal", "after_signal", "after_router_update"});
static_assert(kPhaseNames.size() == kPhaseCount);

std::string extra_of(const record::Scenario& s, const std::string& key) {
  auto it = s.extra.find(key);
  return it == s.extra.end() ? "" : it->second;
}

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
    totals.retry_safe += r.failed && r.retry_safe ? 1 : 0;
    totals.resent += r.resent ? 1 : 0;
    totals.client_retry = totals.client_retry || r.attempt > 1;
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
  totals.latency_recorded = !latency.empty();
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

// verify's agents send their successes as counts beside their failed requests: the counts join
// the totals, and the latency percentiles, known only for the single records, are left out.
void add_bucketed_successes(const record::RunRecord& run, Totals& totals) {
  if (run.buckets.empty()) {
    return;
  }
  Totals counted = totals_of_buckets(run);
  totals.requests += counted.requests;
  totals.ok += counted.ok;
  totals.failed += counted.failed;
  totals.p50_ms = totals.p90_ms = totals.p99_ms = totals.max_ms = 0;
  totals.latency_recorded = false;
}

// The drain the grace period must cover: the longest a pod took to exit after its stop signal,
// at least what a pod killed at the end of its grace period was given (it had not finished), or
// the longest successful request, whichever is longer.
void measure_drain(const record::RunRecord& run, const Facts& facts, Diagnosis& d) {
  for (const PodLife& p : facts.pods()) {
    bool killed = p.kill || killed_by_sigkill(p) || p.end_of_run_kill;
    if (p.signal && p.kill && *p.kill >= *p.signal
        && (!d.longest_drain || *p.kill - *p.signal > *d.longest_drain)) {
      d.longest_drain = *p.kill - *p.signal;
      d.drain_evidence = fmt::format(
          "pod {} was still draining when SIGKILL came {} after its "
          "stop signal",
          p.name, duration_text(*d.longest_drain));
    } else if (p.signal && p.exited && !killed && *p.exited >= *p.signal
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

// Pods SIGKILLed at the end of their grace period after the stop signal: what the signal did not
// do, what the kill cost in requests, and how long each took from its deletion to its exit.
std::vector<GraceKill> grace_kills_of(const record::RunRecord& run, const Facts& facts,
                                      const std::vector<RequestDiagnosis>& failures) {
  std::vector<GraceKill> kills;
  for (const PodLife& p : facts.pods()) {
    bool killed_by_it = p.exit_signal && *p.exit_signal == SIGKILL;
    if (!p.deletion || !p.signal || !p.kill || *p.kill < *p.signal || !killed_by_it) {
      continue;
    }
    GraceKill k{p.name, p.stop_signal.value_or(SIGTERM), *p.signal, *p.kill, p.signal_ignored};
    k.waited = p.exited.value_or(*p.kill) - *p.deletion;
    for (const record::RequestRecord& r : run.requests) {
      k.served_after += r.backend == p.name && !r.failed && r.sent && *r.sent >= *p.signal;
    }
    for (const RequestDiagnosis& f : failures) {
      k.cut += f.hole == Hole::grace_overrun && run.requests[f.index].backend == p.name;
    }
    kills.push_back(std::move(k));
  }
  return kills;
}

// "; the stop signal did nothing at 3 pods: SIGKILL at the end of the grace period cut 0
// requests, and each took up to 5.00 s from its deletion to its exit".
std::string grace_kills_text(const std::vector<GraceKill>& kills) {
  if (kills.empty()) {
    return {};
  }
  uint64_t cut = 0;
  Micros waited{0};
  bool ignored = false;
  for (const GraceKill& k : kills) {
    cut += k.cut;
    waited = std::max(waited, k.waited);
    ignored = ignored || !k.ignored.empty();
  }
  return fmt::format(
      "; {} at {} pod{}: SIGKILL at the end of the grace period cut {} request{}, and each "
      "took up to {} from its deletion to its exit",
      ignored ? "the stop signal did nothing" : "the drain outlasted the grace period",
      kills.size(), kills.size() == 1 ? "" : "s", cut, cut == 1 ? "" : "s", duration_text(waited));
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

std::string disruption_text(const std::optional<Window>& w) {
  if (!w) {
    return {};
  }
  return fmt::format("; the longest disruption lasted {}, from {} to {}",
                     duration_text(w->end - w->start), seconds_text(w->start),
                     seconds_text(w->end));
}

// What a record of requests alone can say: each failure class and when it happened.
std::string classes_over_time(const record::RunRecord& run, const Diagnosis& d) {
  struct Span {
    uint64_t count = 0;
    Micros first{0}, last{0};
  };

  std::map<record::Outcome, Span> spans;
  for (const RequestDiagnosis& f : d.failures) {
    const record::RequestRecord& r = run.requests[f.index];
    Micros t = r.sent.value_or(r.intended);
    Span& span = spans[r.outcome];
    span.first = span.count == 0 ? t : std::min(span.first, t);
    span.last = std::max(span.last, t);
    ++span.count;
  }
  std::vector<std::pair<record::Outcome, Span>> sorted(spans.begin(), spans.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  std::vector<std::string> parts;
  for (const auto& [outcome, span] : sorted) {
    parts.push_back(fmt::format("{} {} ({} to {})", record::to_string(outcome), span.count,
                                seconds_text(span.first), seconds_text(span.last)));
  }
  return fmt::format(
      "{} failed requests: {}{}; the record has no pod or router events, so no "
      "hole can be named",
      d.failures.size(), fmt::join(parts, ", "), disruption_text(d.disruption));
}

// Without pod and router events every failure is unexplained: say what the requests show, and
// what would name the hole.
void describe_traffic_only(const record::RunRecord& run, Diagnosis& d) {
  for (HoleSummary& h : d.holes) {
    h.evidence = classes_over_time(run, d);
    h.fix = Fix{.summary = "record pod and router events to name the hole",
                .why =
                    "a hole is named from the state of the pod behind each failed request and from "
                    "its router's update; this record holds the client's side only. Run the "
                    "rollout under `zerodrop lab`, or record the pods' events with the requests"};
  }
}

// What a pass covered, and whether it covered little: a hole with no traffic where it would
// show passes too.
std::string coverage_text(const Coverage& c) {
  if (c.pods.empty()) {
    return {};
  }
  std::vector<std::string> weak;
  if (c.race_windows > Micros{0} && c.race_miss > 0.05 && c.race_fresh == 0) {
    weak.push_back(fmt::format(
        "a pod refusing new connections after its stop signal would have shown no failure "
        "with probability {:.2f}",
        c.race_miss));
  }
  if (c.in_flight_at_signals == 0
      && std::all_of(c.pods.begin(), c.pods.end(),
                     [](const PodCoverage& p) { return p.stop_requests == 0; })) {
    weak.push_back("no request was at a stopping pod, so a missing drain could not show");
  }
  std::string text = "; covered: " + c.summary;
  if (!weak.empty()) {
    text += fmt::format(
        "; a pass that covered little: {}; rerun with --runs N, a higher --rate or "
        "--fresh-share",
        fmt::join(weak, "; "));
  }
  return text;
}

// The load's failures as a retrying client saw them (browsers, Go, gRPC resend retry-safe ones),
// after the raw count and its holes.
std::string retries_text(const Totals& t) {
  if (t.failed == 0 || (t.retry_safe == 0 && !t.client_retry)) {
    return {};
  }
  if (t.client_retry) {
    return fmt::format("; {} after client retries ({} retry-safe failures resent)",
                       t.failed_after_retries(), t.resent);
  }
  return fmt::format(
      "; {} retry-safe: a client that resends them would have seen {} if each resend "
      "succeeded",
      t.retry_safe, t.failed_after_retries());
}

std::string conclusion_of(const Diagnosis& d, const Facts& facts) {
  if (d.verdict == Verdict::pass) {
    return fmt::format("no request failed ({} requests){}", d.totals.requests,
                       coverage_text(d.coverage));
  }
  std::vector<std::string> parts;
  for (const HoleSummary& h : d.holes) {
    parts.push_back(fmt::format("{} {}", record::to_string(h.hole), h.requests));
  }
  std::string head = fmt::format("{} of {} requests failed", d.totals.failed, d.totals.requests);
  if (facts.traffic_only()) {
    std::vector<std::string> classes;
    for (const auto& [name, n] : d.totals.by_class) {
      classes.push_back(fmt::format("{} {}", name, n));
    }
    return fmt::format(
        "{} ({}){}; with no pod or router events in the record, no hole can be "
        "named{}",
        head, fmt::join(classes, ", "), disruption_text(d.disruption), retries_text(d.totals));
  }
  if (!d.rollout_related) {
    std::string why = facts.rollout_started() ? "" : " (no rollout happened in this run)";
    return fmt::format("{}, none with a rollout-related cause{}{}", head, why,
                       retries_text(d.totals));
  }
  return fmt::format("{}: {}{}", head, fmt::join(parts, ", "), retries_text(d.totals));
}

void add_fixes(const record::RunRecord& run, const Options& options, Diagnosis& d,
               const Facts& facts, const RuleContext& context) {
  FixInputs in{options,
               &run.scenario,
               d.propagation,
               d.longest_drain,
               d.drain_evidence,
               context.replicas,
               0,
               stop_signal_name(d)};
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
  RuleContext context{run.scenario.replicas, run.scenario.readiness, d.drain_evidence,
                      extra_of(run.scenario, "version_a"), extra_of(run.scenario, "version_b")};
  // Attribute every failed request, then group by hole with evidence, then compute the fixes.
  if (run.requests.empty() && !run.buckets.empty()) {
    d.totals = totals_of_buckets(run);
    d.holes = holes_of_buckets(run);
  } else {
    d.totals = totals_of_requests(run);
    add_bucketed_successes(run, d.totals);
    for (size_t i = 0; i < run.requests.size(); ++i) {
      if (run.requests[i].failed) {
        d.failures.push_back(attribute(run.requests[i], i, facts, context));
      }
    }
    d.holes = summarize(run, d.failures, facts, context);
  }
  add_fixes(run, options, d, facts, context);
  d.disruption = facts.disruption();
  if (facts.traffic_only() && !d.failures.empty()) {
    describe_traffic_only(run, d);
  }
  d.verdict = d.totals.failed == 0 ? Verdict::pass : Verdict::fail;
  d.rollout_related = std::any_of(d.holes.begin(), d.holes.end(),
                                  [](const HoleSummary& h) { return h.hole != Hole::unexplained; });
  d.grace_kills = grace_kills_of(run, facts, d.failures);
  d.coverage = coverage_of(run, facts);
  d.conclusion = conclusion_of(d, facts) + grace_kills_text(d.grace_kills);
  d.notes = h2_notes(run, d.pods);
  return d;
}

std::string stop_signal_name(const Diagnosis& d) {
  for (const PodLife& p : d.pods) {
    if (p.stop_signal) {
      return signal_full_name(*p.stop_signal);
    }
  }
  return signal_full_name(SIGTERM);
}

}  // namespace zerodrop::diagnose
