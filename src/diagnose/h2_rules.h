#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "diagnose/facts.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// HTTP/2 and gRPC. Internal to diagnose.

// The HTTP/2 reading of one failed request to `life`, sent at `t` in backend state `state`:
// a drain cut short, an RPC accepted then cancelled, a reconnect after the pod's GOAWAY routed
// back to it, a connection closed without GOAWAY, or an unprocessed request not resent. Nullopt
// for an HTTP/1.1 request, or when none applies (the general rules decide).
std::optional<RequestDiagnosis> h2_rule(const record::RequestRecord& r, const PodLife& life,
                                        BackendState state, bool router_applied, Micros t);

// Latent risks, also when nothing failed: pods that closed HTTP/2 connections without GOAWAY,
// and load that stayed uneven across the pods alive at the end (connections pinned where they
// reconnected, until MAX_CONNECTION_AGE recycles them).
std::vector<std::string> h2_notes(const record::RunRecord& run, const std::vector<PodLife>& pods);

// Per-language app steps for a hole, when the run spoke HTTP/2 or gRPC (empty otherwise).
std::vector<std::string> h2_fix_steps(record::Hole hole, const record::Scenario* scenario);

}  // namespace zerodrop::diagnose
