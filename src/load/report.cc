#include "load/report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "load/grpc.h"
#include "record/outcome.h"
#include "record/run_record.h"

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

// "NO_ERROR 12, INTERNAL_ERROR 1" from counts by HTTP/2 error code; empty when all are zero.
std::string by_code(const std::array<uint64_t, Http2Counts::kCodes>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) {
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ",
                         record::h2_error_name(static_cast<uint32_t>(i)), counts[i]);
    }
  }
  return out;
}

std::string grpc_name(size_t code) {
  return std::string(kGrpcStatusNames[code]);
}

// The HTTP/2 lines of the summary: GOAWAYs, closes without one, resets, resends, gRPC statuses.
std::string format_h2(const Summary& s) {
  const Http2Counts& h = s.h2;
  uint64_t goaways = 0;
  for (uint64_t n : h.goaways) {
    goaways += n;
  }
  std::string codes = by_code(h.goaways);
  std::string out = fmt::format(
      "HTTP/2    {} GOAWAY{}, {} connection(s) closed without GOAWAY, {} unprocessed request(s) "
      "resent ({} ok, {} failed)\n",
      goaways, codes.empty() ? "" : " (" + codes + ")", h.closed_without_goaway, h.unprocessed,
      h.resent_ok, h.resend_failed);
  if (std::string rst = by_code(h.rst_streams); !rst.empty()) {
    out += fmt::format("RST_STREAM received: {}\n", rst);
  }
  if (s.protocol == Protocol::grpc) {
    std::string statuses;
    for (size_t i = 0; i < h.grpc_status.size(); ++i) {
      if (h.grpc_status[i] != 0) {
        statuses +=
            fmt::format("{}{} {}", statuses.empty() ? "" : ", ", grpc_name(i), h.grpc_status[i]);
      }
    }
    if (h.grpc_status_other != 0) {
      statuses += fmt::format("{}other {}", statuses.empty() ? "" : ", ", h.grpc_status_other);
    }
    out += fmt::format("grpc-status {}\n", statuses.empty() ? "none received" : statuses);
  }
  return out;
}

nlohmann::json h2_json(const Summary& s) {
  const Http2Counts& h = s.h2;
  nlohmann::json goaways = nlohmann::json::object();
  nlohmann::json rst = nlohmann::json::object();
  for (size_t i = 0; i < Http2Counts::kCodes; ++i) {
    std::string name = record::h2_error_name(static_cast<uint32_t>(i));
    if (h.goaways[i] != 0) {
      goaways[name] = h.goaways[i];
    }
    if (h.rst_streams[i] != 0) {
      rst[name] = h.rst_streams[i];
    }
  }
  return {{"connections_opened", s.connections_opened},
          {"goaways", goaways},
          {"closed_without_goaway", h.closed_without_goaway},
          {"rst_stream", rst},
          {"unprocessed_retried", h.unprocessed},
          {"unprocessed_retry_ok", h.resent_ok},
          {"unprocessed_retry_failed", h.resend_failed}};
}

// What a client that resends retry-safe failures once saw, beside the raw counts. Empty when
// nothing failed.
std::string format_retries(const Summary& s) {
  if (s.failed == 0) {
    return {};
  }
  if (s.client_retry) {
    return fmt::format(
        "retries   {} retry-safe failure(s) resent on a new connection ({} ok, {} failed): {} "
        "failed after client retries, {} raw\n",
        s.resent, s.resent_ok, s.resent - s.resent_ok, s.failed - s.resent, s.failed);
  }
  return fmt::format(
      "retries   {} of {} failure(s) retry-safe (idempotent, reused connection, no response "
      "byte): a client that resends those once would have seen {} if each resend succeeded "
      "(--client-retry tries it)\n",
      s.retry_safe, s.failed, s.failed - s.retry_safe);
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
    out += format_retries(s);
  }
  const auto& l = s.latency_ms;
  out += fmt::format("latency   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (from intended send)\n",
                     ms(l.p50), ms(l.p90), ms(l.p99), ms(l.p999), ms(l.max));
  const auto& v = s.service_ms;
  out += fmt::format("service   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (from actual send)\n",
                     ms(v.p50), ms(v.p90), ms(v.p99), ms(v.p999), ms(v.max));
  out += fmt::format("late {}  unsent {}  connections opened {}\n", s.late, s.unsent,
                     s.connections_opened);
  if (s.protocol != Protocol::http1) {
    out += format_h2(s);
  }
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
      {"retry_safe", s.retry_safe},
      {"client_retry", s.client_retry},
      {"failed_after_retries", s.failed - (s.client_retry ? s.resent : s.retry_safe)},
  };
  if (s.client_retry) {
    j["resent"] = s.resent;
    j["resent_ok"] = s.resent_ok;
  }
  if (s.protocol != Protocol::http1) {
    j["protocol"] = s.protocol == Protocol::grpc ? "grpc" : "h2";
    j["h2"] = h2_json(s);
  }
  if (s.protocol == Protocol::grpc) {
    nlohmann::json statuses = nlohmann::json::object();
    for (size_t i = 0; i < s.h2.grpc_status.size(); ++i) {
      if (s.h2.grpc_status[i] != 0) {
        statuses[grpc_name(i)] = s.h2.grpc_status[i];
      }
    }
    if (s.h2.grpc_status_other != 0) {
      statuses["other"] = s.h2.grpc_status_other;
    }
    j["grpc_status"] = statuses;
  }
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
