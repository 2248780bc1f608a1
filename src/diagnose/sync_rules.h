#pragma once

// proxy-sync-loss: a new connect that the node's own Service proxy lost while it rewrote its
// rules for an endpoint change (docs/dataplane-sync.md). Proved where the node's conntrack showed
// the connection untranslated within a window of that node's rule commit (the lab's kernel
// dataplanes: RequestRecord::router_error kUntranslated); inferred, saying how sure, from a
// connect that failed on a node shortly after an EndpointSlice change while the pods were Ready,
// none terminating, and serving others (verify, whose record has no conntrack).

#include <optional>

#include "diagnose/diagnose.h"
#include "diagnose/facts.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// Around a node's rule commit, stamped when its tool returned: a connect from kCommitBefore
// before the stamp (the tool ran meanwhile: an iptables-restore takes tens of ms, more on a busy
// machine) to kCommitAfter after it (the connection's own stamp is when conntrack's event was
// read) met the rewrite.
inline constexpr Micros kCommitBefore{500'000};
inline constexpr Micros kCommitAfter{100'000};

// After the API showed an EndpointSlice change, a node's kube-proxy rewrites its rules within
// about this long (its --min-sync-period, 1 s by default, plus the watch's delay): a connect
// failure later than that is never inferred to be this hole. Within the first kLikelyWindow it
// is `likely`, after that `possible`.
inline constexpr Micros kInferWindow{2'000'000};
inline constexpr Micros kLikelyWindow{1'000'000};

// "Serving others": some request sent within this of the failure succeeded.
inline constexpr Micros kServingOthers{1'000'000};

// How sure a proxy-sync-loss diagnosis is.
enum class SyncLossProof : uint8_t {
  proved,    // the node's conntrack: the connection got no NAT, within the commit's window
  likely,    // inferred: within kLikelyWindow of the change, pods Ready and serving others
  possible,  // inferred: within kInferWindow, the same conditions
};

std::string_view to_string(SyncLossProof proof);

// The proved case, for a failed request whose router_error is kUntranslated: proxy-sync-loss when
// a rule commit of its node lies within the window; nullopt otherwise (the caller keeps calling
// it the router's failure).
std::optional<RequestDiagnosis> proved_sync_loss(const record::RequestRecord& r,
                                                 const Facts& facts);

// The inferred case, for a connect that timed out or was refused with no pod recorded and no
// router_error, through a named node: nullopt unless every condition above holds.
std::optional<RequestDiagnosis> inferred_sync_loss(const record::RequestRecord& r,
                                                   const Facts& facts);

// The proved case, else the inferred one: a connect the node's own proxy lost reached no pod, so
// no pod's rule applies to it (attribute() asks this first).
std::optional<RequestDiagnosis> sync_loss(const record::RequestRecord& r, const Facts& facts);

}  // namespace zerodrop::diagnose
