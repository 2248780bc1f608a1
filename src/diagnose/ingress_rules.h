#pragma once

// A real ingress's faults, named from its own log lines, which the lab quotes as router-log notes
// (record::kRouterLog; docs/lab.md, "A real ingress"). Internal to diagnose.

#include <optional>
#include <string>

#include "diagnose/diagnose.h"
#include "diagnose/facts.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// A request as its router's log tells it: HAProxy's termination state decides why it answered
// itself, not the status alone (a 502 is `upstream_reset` when the server broke the connection,
// `SH`, but `bad_response` when HAProxy rejected the server's response, `PH`; a state of HAProxy's
// own, such as `PR` or `RC`, leaves a word no rule blames on the app). `quote` is what the
// diagnosis' reason adds: the state, its meaning and the line. The request unchanged and no
// quote when no line of its router matches it.
struct LogRead {
  record::RequestRecord request;
  std::string quote;
};

LogRead read_router_log(const record::RequestRecord& r, const Facts& facts);

// ingress-reload-reset: a request closed or reset before any response on a kept-alive client
// connection, no pod named, whose connection's last request was served by an nginx worker
// (access.log) that a reload retired after that request and no later than this one was sent
// (error.log's "gracefully shutting down", stamped when the lab saw the worker shut down), within
// nginx's keep-alive timeout. nullopt otherwise.
std::optional<RequestDiagnosis> reload_reset(const record::RequestRecord& r, const Facts& facts);

}  // namespace zerodrop::diagnose
