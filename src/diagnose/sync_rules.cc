#include "diagnose/sync_rules.h"

#include <fmt/format.h>

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using record::Outcome;
using record::RequestRecord;

// When the connect went out: the connection's bind (its conntrack event) when the record has it.
Micros connect_time(const RequestRecord& r) {
  return r.bound.value_or(r.sent.value_or(r.intended));
}

// "65 us after", "3.1 ms before": how far the connect was from the commit.
std::string offset_text(Micros connect, Micros commit) {
  Micros d = connect >= commit ? connect - commit : commit - connect;
  return fmt::format("{} {}", duration_text(d), connect >= commit ? "after" : "before");
}

}  // namespace

std::string_view to_string(SyncLossProof proof) {
  switch (proof) {
    case SyncLossProof::proved:
      return "proved";
    case SyncLossProof::likely:
      return "likely";
    case SyncLossProof::possible:
      return "possible";
  }
  return "possible";
}

std::optional<RequestDiagnosis> proved_sync_loss(const RequestRecord& r, const Facts& facts) {
  if (r.router_error != record::kUntranslated || r.router.empty()) {
    return std::nullopt;
  }
  Micros t = connect_time(r);
  auto commit = facts.nearest_commit(r.router, t);
  if (!commit || t < commit->t - kCommitBefore || t > commit->t + kCommitAfter) {
    return std::nullopt;
  }
  std::string what = commit->detail.empty()
                         ? fmt::format("{} committed {}'s change", r.router, commit->pod)
                         : fmt::format("{}'s {}", r.router, commit->detail);
  return RequestDiagnosis{
      0, Hole::proxy_sync_loss, BackendState::unknown, false,
      fmt::format("{} with no pod ({}): the kernel of {} gave the connection to the Service no "
                  "NAT (conntrack: untranslated) {} {}; the node's proxy lost it while it "
                  "rewrote its rules, not the app",
                  record::to_string(r.outcome), to_string(SyncLossProof::proved), r.router,
                  offset_text(t, commit->t), what)};
}

std::optional<RequestDiagnosis> inferred_sync_loss(const RequestRecord& r, const Facts& facts) {
  bool connect_failed =
      r.outcome == Outcome::connect_timeout || r.outcome == Outcome::connect_refused;
  if (!connect_failed || !r.backend.empty() || !r.router_error.empty() || r.router.empty()) {
    return std::nullopt;
  }
  Micros t = connect_time(r);
  const record::Event* change = facts.change_before(t, kInferWindow);
  if (!change || facts.ready_pods_at(t) == 0 || facts.pod_terminating_at(t)) {
    return std::nullopt;
  }
  size_t others = facts.successes_between(t - kServingOthers, t + kServingOthers);
  if (others == 0) {
    return std::nullopt;
  }
  SyncLossProof proof =
      t - change->t <= kLikelyWindow ? SyncLossProof::likely : SyncLossProof::possible;
  return RequestDiagnosis{
      0, Hole::proxy_sync_loss, BackendState::unknown, false,
      fmt::format("{} on {} ({}, inferred: no conntrack in the record) {} after the "
                  "EndpointSlice change of {} at {}, while {} pods were Ready, none terminating, "
                  "and {} other requests within 1 s succeeded: the node's proxy was rewriting its "
                  "rules",
                  record::to_string(r.outcome), r.router, to_string(proof),
                  duration_text(t - change->t), change->pod, seconds_text(change->t),
                  facts.ready_pods_at(t), others)};
}

std::optional<RequestDiagnosis> sync_loss(const RequestRecord& r, const Facts& facts) {
  auto lost = proved_sync_loss(r, facts);
  return lost ? lost : inferred_sync_loss(r, facts);
}

}  // namespace zerodrop::diagnose
