#pragma once

#include <cstdint>
#include <string>

#include "base/duration.h"

namespace zerodrop::examples {

// What an example server does when it receives SIGTERM.
enum class OnSigterm {
  exit_now,         // naive: the default disposition; the process dies mid-request
  close_and_drain,  // close-listener: close the listener and idle connections, finish requests
};

// Settings shared by the example servers: `--host H --port P --delay D`, defaulting to the
// environment the lab (or a pod) provides: POD_IP, PORT, POD_NAME.
struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::string pod_name = "local";
  Duration delay{0};  // time spent on each "/" request before answering
  OnSigterm on_sigterm = OnSigterm::exit_now;
};

// Parses argv over the environment defaults; throws Error naming the bad flag.
ServerOptions parse_server_options(int argc, char** argv, OnSigterm on_sigterm);

// Serves HTTP/1.1 with keep-alive until the process is stopped: "/" answers 200 "ok" (after
// `delay`), "/readyz" and "/healthz" answer 200, anything else 404. Every response carries
// `X-Pod-Name`. Returns the process exit code. Throws Error when it cannot listen.
int run_server(const ServerOptions& options);

// main() of an example server: parses, serves, prints "<name>: error: …" and returns 2 on Error.
int server_main(int argc, char** argv, OnSigterm on_sigterm);

}  // namespace zerodrop::examples
