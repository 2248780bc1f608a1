// report.json (schema in docs/report-json.md).
#include <ostream>

#include <nlohmann/json.hpp>

#include "base/subprocess.h"
#include "report/report.h"
#include "report/timeline.h"

namespace zerodrop::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

double secs(Micros t) {
  return std::chrono::duration<double>(t).count();
}

json optional_secs(const std::optional<Micros>& t) {
  return t ? json(secs(*t)) : json(nullptr);
}

json optional_int(const std::optional<int>& v) {
  return v ? json(*v) : json(nullptr);
}

ordered_json load_json(const diagnose::Totals& t) {
  ordered_json classes = ordered_json::object();
  for (const auto& [name, n] : t.by_class) {
    classes[name] = n;
  }
  return {{"requests", t.requests},
          {"ok", t.ok},
          {"failed", t.failed},
          {"failures_by_class", classes},
          {"latency_ms", t.latency_recorded ? ordered_json{{"p50", t.p50_ms},
                                                           {"p90", t.p90_ms},
                                                           {"p99", t.p99_ms},
                                                           {"max", t.max_ms}}
                                            : ordered_json(nullptr)},
          {"retry_safe", t.retry_safe},
          {"client_retry", t.client_retry},
          {"resent", t.resent},
          {"failed_after_retries", t.failed_after_retries()}};
}

ordered_json pod_coverage_json(const diagnose::PodCoverage& p) {
  return {{"pod", p.pod},
          {"signal_s", secs(p.signal)},
          {"exit_s", secs(p.exit)},
          {"stop_window_s", secs(p.stop_window())},
          {"deregistered_s", optional_secs(p.deregistered)},
          {"race_window_s", secs(p.race_window())},
          {"in_flight_at_signal", p.in_flight_at_signal},
          {"stop_requests", p.stop_requests},
          {"stop_fresh", p.stop_fresh},
          {"race_fresh", p.race_fresh},
          {"after_deregistration", p.after_deregistration},
          {"fresh_per_s", p.fresh_rate},
          {"requests_per_s", p.request_rate},
          {"race_miss", p.race_miss()}};
}

ordered_json coverage_json(const diagnose::Coverage& c) {
  ordered_json pods = ordered_json::array();
  for (const diagnose::PodCoverage& p : c.pods) {
    pods.push_back(pod_coverage_json(p));
  }
  return {{"summary", c.summary},
          {"in_flight_at_signals", c.in_flight_at_signals},
          {"race_fresh", c.race_fresh},
          {"race_miss", c.race_miss},
          {"pods", pods}};
}

// The event as events.ndjson has it, but with its time in seconds and without the pod it is
// listed under.
ordered_json event_json(const record::Event& e) {
  ordered_json j = {{"t_s", secs(e.t)}};
  const ordered_json full = record::to_json(e);  // kept alive: items() refers into it
  for (const auto& [key, value] : full.items()) {
    if (key != "t_us" && key != "pod") {
      j[key] = value;
    }
  }
  return j;
}

ordered_json grace_kill_json(const diagnose::GraceKill& k) {
  return {{"pod", k.pod},
          {"stop_signal", signal_full_name(k.stop_signal)},
          {"signal_s", secs(k.signal)},
          {"kill_s", secs(k.kill)},
          {"signal_ignored", k.ignored.empty() ? json(nullptr) : json(k.ignored)},
          {"served_after_signal", k.served_after},
          {"cut", k.cut},
          {"waited_s", secs(k.waited)}};
}

ordered_json phases_json(const std::array<uint64_t, diagnose::kPhaseCount>& counts) {
  ordered_json j = ordered_json::object();
  for (size_t i = 0; i < diagnose::kPhaseCount; ++i) {
    j[std::string(diagnose::to_string(static_cast<diagnose::Phase>(i)))] = counts[i];
  }
  return j;
}

ordered_json pod_json(const record::RunRecord& run, const diagnose::PodLife& p,
                      const diagnose::Diagnosis& d) {
  ordered_json j = {
      {"name", p.name},
      {"created_s", optional_secs(p.created)},
      {"ready_s", optional_secs(p.ready)},
      {"first_success_s", optional_secs(p.first_success)},
      {"deletion_s", optional_secs(p.deletion)},
      {"prestop_started_s", optional_secs(p.prestop_started)},
      {"prestop_finished_s", optional_secs(p.prestop_finished)},
      {"prestop_failed", p.prestop_failed},
      {"signal_s", optional_secs(p.signal)},
      {"stop_signal", optional_int(p.stop_signal)},
      {"kill_s", optional_secs(p.kill)},
      {"exited_s", optional_secs(p.exited)},
      {"exit_code", optional_int(p.exit_code)},
      {"exit_signal", optional_int(p.exit_signal)},
  };
  json restarts = json::array();
  for (Micros t : p.liveness_restarts) {
    restarts.push_back(secs(t));
  }
  j["liveness_restarts_s"] = restarts;
  if (!p.version.empty()) {
    j["version"] = p.version;  // only in runs that rolled one version to another (lab --to)
  }
  for (const diagnose::PodTraffic& t : d.traffic) {
    if (t.pod == p.name) {
      j["requests_by_phase"] = phases_json(t.requests);
      j["failed_by_phase"] = phases_json(t.failed);
    }
  }
  ordered_json events = ordered_json::array();
  for (const record::Event& e : run.events) {
    if (e.pod == p.name) {
      events.push_back(event_json(e));
    }
  }
  j["events"] = events;
  return j;
}

ordered_json failure_json(const record::RunRecord& run, const diagnose::RequestDiagnosis& f) {
  const record::RequestRecord& r = run.requests[f.index];
  return {{"seq", r.seq},
          {"intended_s", secs(r.intended)},
          {"sent_s", optional_secs(r.sent)},
          {"done_s", secs(r.done)},
          {"class", record::to_string(r.outcome)},
          {"status", r.status},
          {"connection", r.connection == record::Connection::reused ? "reused" : "fresh"},
          {"router", r.router},
          {"backend", r.backend},
          {"backend_state", diagnose::to_string(f.backend_state)},
          {"router_applied", f.router_applied},
          {"hole", record::to_string(f.hole)},
          {"reason", f.reason},
          {"error", r.error},
          {"retry_safe", r.retry_safe},
          {"attempt", r.attempt},
          {"resent", r.resent}};
}

// failure_json, with `router_error` when the router answered the request itself (optional).
ordered_json failure_json_with_router(const record::RunRecord& run,
                                      const diagnose::RequestDiagnosis& f) {
  ordered_json j = failure_json(run, f);
  if (const std::string& why = run.requests[f.index].router_error; !why.empty()) {
    j["router_error"] = why;
  }
  return j;
}

ordered_json hole_json(const diagnose::HoleSummary& h) {
  return {{"id", record::to_string(h.hole)},
          {"requests", h.requests},
          {"first_s", secs(h.first)},
          {"last_s", secs(h.last)},
          {"pods", h.pods},
          {"routers", h.routers},
          {"evidence", h.evidence},
          {"fix",
           {{"summary", h.fix.summary},
            {"why", h.fix.why},
            {"snippet", h.fix.snippet},
            {"steps", h.fix.steps},
            {"warning", h.fix.warning}}}};
}

ordered_json propagation_json(const diagnose::Propagation& p) {
  ordered_json updates = ordered_json::array();
  for (const diagnose::PropagationSample& s : p.samples) {
    updates.push_back({{"pod", s.pod},
                       {"router", s.router},
                       {"deletion_s", secs(s.deletion)},
                       {"applied_s", secs(s.applied)},
                       {"applied_min_s", optional_secs(s.applied_min)},
                       {"delay_s", secs(s.delay())}});
  }
  json max = p.samples.empty() ? json(nullptr) : json(secs(p.max));
  json p50 = p.samples.empty() ? json(nullptr) : json(secs(p.p50));
  return {{"max_s", max}, {"p50_s", p50}, {"updates", updates}};
}

ordered_json timeline_json(const record::RunRecord& run, const diagnose::Diagnosis& d) {
  ordered_json rows = ordered_json::array();
  for (const Bucket& b : bucketize(run, d, std::chrono::seconds(1))) {
    ordered_json by_hole = ordered_json::object();
    for (size_t h = 0; h < record::kHoleCount; ++h) {
      if (b.by_hole[h] > 0) {
        by_hole[std::string(record::to_string(static_cast<record::Hole>(h)))] = b.by_hole[h];
      }
    }
    rows.push_back({{"t_s", secs(b.start)},
                    {"requests", b.requests},
                    {"failed", b.failed},
                    {"failed_by_hole", by_hole}});
  }
  return rows;
}

}  // namespace

void write_json(std::ostream& out, const record::RunRecord& run, const diagnose::Diagnosis& d) {
  ordered_json j;
  j["schema"] = "zerodrop-report/1";
  j["verdict"] = d.verdict == diagnose::Verdict::pass ? "pass" : "fail";
  j["conclusion"] = d.conclusion;
  j["notes"] = d.notes;
  j["rollout_related"] = d.rollout_related;
  j["engine"] = run.engine;
  j["scenario"] = record::to_strings(run.scenario);
  j["load"] = load_json(d.totals);
  j["propagation"] = propagation_json(d.propagation);
  j["longest_drain_s"] = optional_secs(d.longest_drain);
  j["drain_evidence"] = d.drain_evidence;
  j["coverage"] = coverage_json(d.coverage);
  j["grace_kills"] = ordered_json::array();
  for (const diagnose::GraceKill& k : d.grace_kills) {
    j["grace_kills"].push_back(grace_kill_json(k));
  }
  j["holes"] = ordered_json::array();
  for (const diagnose::HoleSummary& h : d.holes) {
    j["holes"].push_back(hole_json(h));
  }
  j["pods"] = ordered_json::array();
  for (const diagnose::PodLife& p : d.pods) {
    j["pods"].push_back(pod_json(run, p, d));
  }
  j["failed_requests"] = ordered_json::array();
  for (const diagnose::RequestDiagnosis& f : d.failures) {
    j["failed_requests"].push_back(failure_json_with_router(run, f));
  }
  j["timeline"] = timeline_json(run, d);
  j["disruption"] = d.disruption ? ordered_json{{"start_s", secs(d.disruption->start)},
                                                {"end_s", secs(d.disruption->end)}}
                                 : ordered_json(nullptr);
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

}  // namespace zerodrop::report
