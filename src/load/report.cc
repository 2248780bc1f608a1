#include "load/report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "record/outcome.h"

namespace zerodrop::load {
namespace {

std::string failures_by_class(const Summary& s) {
  std::string out;
  for (size_t i = 1; i < record::kOutcomeCount; ++i) {
    if (s.outcomes[i] != 0) {
      out +=
          fmt::format("{}{} {}", out.empty() ? "" : ", ", record::kOutcomeNames[i], s.outcomes[i]);
    }
  }
  return out;
}

nlohmann::json percentiles_json(const Summary::Percentiles& p) {
  return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"p999", p.p999}, {"max", p.max}};
}

std::string ms(double value) {
  return fmt::format("{:.3g}ms", value);
}

}  // namespace

std::string format_summary(const Summary& s) {
  std::string out = fmt::format("requests {}  ok {}  failed {}  in {:.2f}s ({:.0f} req/s sent){}\n",
                                s.requests, s.ok, s.failed, s.elapsed_s, s.rate_achieved,
                                s.interrupted ? "  [interrupted]" : "");
  if (s.failed != 0) {
    out += fmt::format("failures  {}\n", failures_by_class(s));
    for (size_t i = 1; i < record::kOutcomeCount; ++i) {
      if (!s.first_error[i].empty()) {
        out += fmt::format("  {}, first: {}\n", record::kOutcomeNames[i], s.first_error[i]);
      }
    }
    out += fmt::format(
        "disruption {:.3f}s from {:.3f}s (longest stretch of consecutive failures); failures "
        "between {:.3f}s and {:.3f}s\n",
        s.disruption_s, s.disruption_start_s, s.first_failure_s, s.last_failure_s);
  }
  const auto& l = s.latency_ms;
  out += fmt::format("latency   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (from intended send)\n",
                     ms(l.p50), ms(l.p90), ms(l.p99), ms(l.p999), ms(l.max));
  const auto& v = s.service_ms;
  out += fmt::format("service   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (from actual send)\n",
                     ms(v.p50), ms(v.p90), ms(v.p99), ms(v.p999), ms(v.max));
  out += fmt::format("late {}  unsent {}  connections opened {}\n", s.late, s.unsent,
                     s.connections_opened);
  return out;
}

std::string format_interval(const Summary& s) {
  std::string failures = failures_by_class(s);
  return fmt::format("{:7.1f}s  done {:>7}  ok {:>7}  failed {:>5}{}  p50 {}  p99 {}\n",
                     s.elapsed_s, s.requests, s.ok, s.failed,
                     failures.empty() ? "" : " (" + failures + ")", ms(s.latency_ms.p50),
                     ms(s.latency_ms.p99));
}

std::string summary_json(const Summary& s) {
  nlohmann::json failures = nlohmann::json::object();
  nlohmann::json first_errors = nlohmann::json::object();
  for (size_t i = 1; i < record::kOutcomeCount; ++i) {
    failures[std::string(record::kOutcomeNames[i])] = s.outcomes[i];
    if (!s.first_error[i].empty()) {
      first_errors[std::string(record::kOutcomeNames[i])] = s.first_error[i];
    }
  }
  nlohmann::json j = {
      {"requests", s.requests},
      {"ok", s.ok},
      {"failed", s.failed},
      {"failures", failures},
      {"first_errors", first_errors},
      {"late", s.late},
      {"unsent", s.unsent},
      {"rate_achieved", s.rate_achieved},
      {"elapsed_s", s.elapsed_s},
      {"latency_ms", percentiles_json(s.latency_ms)},
      {"service_ms", percentiles_json(s.service_ms)},
      {"disruption_s", s.disruption_s},
      {"disruption_start_s", s.disruption_start_s},
      {"first_failure_s", s.first_failure_s},
      {"last_failure_s", s.last_failure_s},
      {"connections_opened", s.connections_opened},
      {"interrupted", s.interrupted},
  };
  return j.dump(2) + "\n";
}

}  // namespace zerodrop::load

namespace zerodrop::load {

std::vector<record::Event> disruption_events(const Summary& s) {
  if (s.failed == 0) {
    return {};
  }
  auto at = [](double seconds) {
    return std::chrono::duration_cast<record::Micros>(from_seconds(seconds));
  };
  record::Event start{.t = at(s.disruption_start_s), .kind = record::EventKind::disruption_started};
  record::Event end{.t = at(s.disruption_start_s + s.disruption_s),
                    .kind = record::EventKind::disruption_ended,
                    .detail = fmt::format("{:.3f} s of consecutive failures", s.disruption_s)};
  return {start, end};
}

}  // namespace zerodrop::load
