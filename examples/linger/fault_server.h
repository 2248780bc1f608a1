#pragma once

#include <cstdint>
#include <string>

#include "base/duration.h"

namespace zerodrop::examples {

// The misbehaving example servers the diagnosis e2e tests run under the lab, one hole each:
// linger (keepalive-stale), slow-drain (grace-overrun), warmup-503 (readiness-lies).

// What the server does at SIGTERM.
enum class OnTerm {
  linger,  // keep serving (keep-alive too) for `linger`, then exit without closing connections
  drain,   // close the listener and idle connections, finish in-flight requests, exit
};

struct MisbehaviourOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::string pod_name = "local";
  Duration delay{0};   // time each "/" request takes before its answer
  Duration linger{0};  // OnTerm::linger: how long to keep serving after SIGTERM
  Duration warmup{0};  // after start, every path but /healthz answers 503 this long
  OnTerm on_term = OnTerm::drain;
};

// Parses `--host H --port P --delay D --linger D --warmup D` over the defaults in `defaults`
// and the environment (POD_IP, PORT, POD_NAME). Throws Error naming the bad flag.
MisbehaviourOptions parse_misbehaviour(int argc, char** argv, MisbehaviourOptions defaults);

// main() of a misbehaving server: parses, serves until its SIGTERM behaviour ends it, prints
// "<name>: error: …" and returns 2 on bad flags or when it cannot listen.
int misbehaving_main(int argc, char** argv, const MisbehaviourOptions& defaults);

}  // namespace zerodrop::examples
