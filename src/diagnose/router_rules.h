#pragma once
// The rules for failures that no pod's life explains (router_rules.cc) and the words they share
// with the pod rules (rules.cc). Internal to diagnose.

#include <optional>
#include <string>

#include "diagnose/diagnose.h"
#include "diagnose/facts.h"
#include "diagnose/rules.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// "router node-1", or "its router" when the record names none.
std::string router_name(const record::RequestRecord& r);

// What a router's own answer was: its HTTP status, or for gRPC the grpc-status it gave.
std::string router_answer(const record::RequestRecord& r);

// The router answered the request itself (RequestRecord::router_error) for a reason that says
// nothing about the app, or the node's kernel left its connection untranslated: unexplained,
// the router's failure, with its words. nullopt when the router only relayed the upstream's.
std::optional<RequestDiagnosis> router_fault(const record::RequestRecord& r, const Facts& facts);

// A failure with no backend pod recorded: a capacity dip when its router had no ready endpoint
// or fewer replicas than the scenario's were Ready, else unexplained.
RequestDiagnosis without_backend(const record::RequestRecord& r, const Facts& facts,
                                 const RuleContext& context);

// A failure whose backend is one of several pods (RequestRecord::backend_candidates): a hole
// only when attribute() gives every one of them the same hole; else unexplained, naming what
// each would mean.
RequestDiagnosis one_of(const record::RequestRecord& r, size_t index, const Facts& facts,
                        const RuleContext& context);

}  // namespace zerodrop::diagnose
