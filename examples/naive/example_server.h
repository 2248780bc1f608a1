#pragma once
// The example servers the lab and the e2e tests run, one shutdown behaviour (and one hole) each:
// naive (no handling: deregistration-race, no-drain), close-listener (the textbook drain:
// deregistration-race), linger (keepalive-stale), slow-drain (grace-overrun), warmup-503
// (readiness-lies). graceful, the cure, is built on zerodrop/lifecycle instead.

#include <cstdint>
#include <functional>
#include <string>

#include "base/duration.h"

namespace zerodrop::examples {

// What an example server does when it receives SIGTERM (or SIGINT).
enum class OnSigterm {
  exit_now,  // the default disposition: the process dies mid-request
  drain,     // close the listener and idle connections, finish in-flight requests, exit 0
  linger,    // keep serving (keep-alive too) for `linger`, then exit without closing connections
};

// What "/" answers when the server computes it (schema-app: a database query).
struct Reply {
  int status = 200;
  std::string body;
};

// Settings shared by the example servers, defaulting to the environment the lab (or a pod)
// provides: POD_IP, PORT, POD_NAME.
struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::string pod_name = "local";
  Duration delay{0};   // time each "/" request takes before its answer
  Duration linger{0};  // OnSigterm::linger: how long to keep serving after SIGTERM
  Duration warmup{0};  // after start, every path but /healthz answers 503 this long
  OnSigterm on_sigterm = OnSigterm::exit_now;
  std::function<Reply()> handler;  // when set, "/" answers what it returns instead of 200 "ok"
};

// Parses `--host H --port P --delay D --linger D --warmup D` over `defaults` and the environment.
// Throws Error naming the bad flag.
ServerOptions parse_server_options(int argc, char** argv, ServerOptions defaults);

// Serves HTTP/1.1 with keep-alive until its SIGTERM behaviour ends it: "/" answers 200 "ok"
// (after `delay`), "/readyz" and "/healthz" answer 200 (503 during `warmup`, but /healthz),
// anything else 404. Every response carries `X-Pod-Name`. Returns the process exit code. Throws
// Error when it cannot listen.
int run_server(const ServerOptions& options);

// main() of an example server: parses, serves, prints "<name>: error: …" and returns 2 on Error.
int server_main(int argc, char** argv, const ServerOptions& defaults);

}  // namespace zerodrop::examples
