#include "load/tally.h"

namespace zerodrop::load {
namespace {

double to_ms(std::chrono::nanoseconds d) {
  return static_cast<double>(d.count()) / 1e6;
}

Summary::Percentiles percentiles_of(const LatencyHistogram& h) {
  return {to_ms(h.quantile(0.5)), to_ms(h.quantile(0.9)), to_ms(h.quantile(0.99)),
          to_ms(h.quantile(0.999)), to_ms(h.max())};
}

}  // namespace

void Tally::add(record::Outcome outcome, bool is_failure, bool responded,
                std::chrono::nanoseconds latency_ns, std::chrono::nanoseconds service_ns) {
  ++requests;
  ++outcomes[static_cast<size_t>(outcome)];
  ++(is_failure ? failed : ok);
  if (responded) {
    latency.add(latency_ns);
    service.add(service_ns);
  }
}

void Tally::note_error(record::Outcome outcome, std::string_view error) {
  std::string& first = first_error[static_cast<size_t>(outcome)];
  if (first.empty()) {
    first.assign(error);
  }
}

void Tally::merge(const Tally& other) {
  sent += other.sent;
  requests += other.requests;
  ok += other.ok;
  failed += other.failed;
  late += other.late;
  unsent += other.unsent;
  connections_opened += other.connections_opened;
  retry_safe += other.retry_safe;
  resent += other.resent;
  resent_ok += other.resent_ok;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    outcomes[i] += other.outcomes[i];
    if (first_error[i].empty()) {
      first_error[i] = other.first_error[i];
    }
  }
  latency.merge(other.latency);
  service.merge(other.service);
  h2.merge(other.h2);
}

void Http2Counts::merge(const Http2Counts& other) {
  for (size_t i = 0; i < kCodes; ++i) {
    goaways[i] += other.goaways[i];
    rst_streams[i] += other.rst_streams[i];
  }
  closed_without_goaway += other.closed_without_goaway;
  unprocessed += other.unprocessed;
  resent_ok += other.resent_ok;
  resend_failed += other.resend_failed;
  for (size_t i = 0; i < grpc_status.size(); ++i) {
    grpc_status[i] += other.grpc_status[i];
  }
  grpc_status_other += other.grpc_status_other;
}

Summary summarize(const Tally& tally, double elapsed_s, double sending_s) {
  Summary s;
  s.requests = tally.requests;
  s.ok = tally.ok;
  s.failed = tally.failed;
  s.outcomes = tally.outcomes;
  s.first_error = tally.first_error;
  s.late = tally.late;
  s.unsent = tally.unsent;
  s.connections_opened = tally.connections_opened;
  s.retry_safe = tally.retry_safe;
  s.resent = tally.resent;
  s.resent_ok = tally.resent_ok;
  s.elapsed_s = elapsed_s;
  s.rate_achieved = sending_s > 0 ? static_cast<double>(tally.sent) / sending_s : 0;
  s.latency_ms = percentiles_of(tally.latency);
  s.service_ms = percentiles_of(tally.service);
  s.h2 = tally.h2;
  return s;
}

}  // namespace zerodrop::load
