// The failures no pod's life explains: the router's own answers and the requests that reached
// no pod recorded. A router's fault is never counted against a hole of the app.
#include "diagnose/router_rules.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "http/proxy_failure.h"

namespace zerodrop::diagnose {

using record::Hole;
using record::RequestRecord;

std::string router_name(const RequestRecord& r) {
  return r.router.empty() ? std::string("its router") : fmt::format("router {}", r.router);
}

RequestDiagnosis without_backend(const RequestRecord& r, const Facts& facts,
                                 const RuleContext& context) {
  Micros t = send_time(r);
  auto endpoints = r.router.empty() ? std::nullopt : facts.ready_endpoints_on(r.router, t);
  if (endpoints && *endpoints == 0) {
    return {0, Hole::capacity_dip, BackendState::unknown, false,
            fmt::format("{} had no ready endpoint", router_name(r))};
  }
  // Without pod events, "0 Ready" would be a claim the record does not support.
  int ready = facts.ready_pods_at(t);
  if (context.replicas && ready < *context.replicas && !facts.traffic_only()) {
    return {0, Hole::capacity_dip, BackendState::unknown, false,
            fmt::format("{} while {} of {} replicas were Ready", record::to_string(r.outcome),
                        ready, *context.replicas)};
  }
  return {0, Hole::unexplained, BackendState::unknown, false,
          fmt::format("{} with no backend pod recorded", record::to_string(r.outcome))};
}

// What a router's own answer was: its HTTP status, or for gRPC the grpc-status it gave.
std::string router_answer(const RequestRecord& r) {
  if (r.h2 && r.h2->grpc_status) {
    return fmt::format("grpc-status {}", *r.h2->grpc_status);
  }
  return std::to_string(r.status);
}

// The router answered the request itself (RequestRecord::router_error) for a reason that says
// nothing about the app: a response it could not parse or would not buffer, or a word this
// version does not know. Such a failure is the router's, never a hole of the app.
std::optional<RequestDiagnosis> router_fault(const RequestRecord& r, const Facts& facts) {
  if (r.router_error.empty()) {
    return std::nullopt;
  }
  if (r.router_error == record::kUntranslated) {
    return RequestDiagnosis{
        0, Hole::unexplained, BackendState::unknown, false,
        fmt::format(
            "{} with no pod: the kernel of {} gave its connection to the Service no NAT ({}), "
            "so it went to no pod, with no rule commit of that node near it; the router failed, "
            "not the app",
            record::to_string(r.outcome), r.router, r.router_error)};
  }
  auto failure = http::proxy_failure_from_string(r.router_error);
  if (failure && http::blame(*failure) == http::Blame::upstream) {
    return std::nullopt;
  }
  std::string what = failure == http::ProxyFailure::bad_response ? "could not parse the response"
                     : failure == http::ProxyFailure::body_too_large
                         ? "would not buffer a response body that large"
                         : "failed";
  std::string from = r.backend.empty() ? "" : fmt::format(" of pod {}", r.backend);
  const PodLife* life = r.backend.empty() ? nullptr : facts.pod(r.backend);
  BackendState state = life ? state_at(*life, send_time(r)) : BackendState::unknown;
  return RequestDiagnosis{
      0, Hole::unexplained, state, false,
      fmt::format("{} answered {} itself ({}): it {}{}; the router failed, not the app",
                  router_name(r), router_answer(r), r.router_error, what, from)};
}

RequestDiagnosis one_of(const RequestRecord& r, size_t index, const Facts& facts,
                        const RuleContext& context) {
  std::vector<RequestDiagnosis> each;
  for (const std::string& pod : r.backend_candidates) {
    RequestRecord as = r;
    as.backend = pod;
    as.backend_candidates.clear();
    each.push_back(attribute(as, index, facts, context));
  }
  std::string pods = fmt::format("{}", fmt::join(r.backend_candidates, ", "));
  bool same = std::all_of(each.begin(), each.end(),
                          [&](const RequestDiagnosis& d) { return d.hole == each[0].hole; });
  if (!same || each[0].hole == Hole::unexplained) {
    std::vector<std::string> what;
    for (size_t i = 0; i < each.size(); ++i) {
      what.push_back(
          fmt::format("{}: {}", r.backend_candidates[i], record::to_string(each[i].hole)));
    }
    return {index, Hole::unexplained, BackendState::unknown, false,
            fmt::format("{} with no backend recorded, one of pods {} ({})",
                        record::to_string(r.outcome), pods, fmt::join(what, ", "))};
  }
  RequestDiagnosis d = each[0];
  for (const RequestDiagnosis& other : each) {
    d.backend_state =
        other.backend_state == d.backend_state ? d.backend_state : BackendState::unknown;
    d.router_applied = d.router_applied && other.router_applied;
  }
  d.reason = fmt::format("at one of pods {}, for each of them: {}", pods, d.reason);
  return d;
}

}  // namespace zerodrop::diagnose
