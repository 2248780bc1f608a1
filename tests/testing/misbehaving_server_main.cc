// misbehaving-server: a test HTTP server that misbehaves on purpose, for end-to-end tests.
#include <signal.h>

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "testing/misbehaving_server.h"

namespace {

constexpr const char* kFooter = R"(
Modes:
  ok               200 "ok" with X-Pod-Name, keep-alive
  status           answers --status (e.g. 502, 503, 504, 404)
  chunked          200 with a valid chunked body
  slow             200 after --delay
  refuse           nothing listens on the port: connection refused
  reset            reads the request, then resets the connection (RST)
  close            reads the request, then closes the connection (FIN)
  reset-mid-body   sends headers and part of the body, waits --delay, resets
  truncated        sends headers and part of the body, then closes
  stall            reads the request and never answers
  huge-headers     a 1 MiB header block
  endless-headers  header lines that never end
  invalid-chunked  a chunked body whose chunk size is not hexadecimal
  endless-body     a body that keeps coming, slowly, forever
  garbage          bytes that are not HTTP
  backlog-full     a full accept queue that is never served: connects time out
  head-length      200 "ok", Content-Length: 2; to HEAD the same headers, no body (as nginx)
  interim          100 Continue and 103 Early Hints, then 200 "ok"
  echo             200 echoing the request head, with hop-by-hop headers a proxy must drop
  close-reused     answers each connection's first request, closes it at the second unanswered

Prints "listening on http://HOST:PORT/" (and writes PORT to --port-file) once it accepts
connections, then serves until SIGINT or SIGTERM.

Example:
  misbehaving-server --mode status --status 503 --port-file /tmp/port &)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"misbehaving-server: an HTTP/1.1 server that misbehaves on purpose (tests only)"};
  std::string mode = "ok";
  zerodrop::testing::ServerOptions options;
  int delay_ms = 100;
  std::string port_file;
  app.add_option("--mode", mode, "what to do with each request (see Modes)")->capture_default_str();
  app.add_option("--status", options.status, "status for --mode status")->capture_default_str();
  app.add_option("--name", options.name, "value of X-Pod-Name")->capture_default_str();
  app.add_option("--host", options.host, "address to listen on")->capture_default_str();
  app.add_option("--port", options.port, "port; 0 = any free port")->capture_default_str();
  app.add_option("--delay", delay_ms, "milliseconds for slow and reset-mid-body")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "write the port to FILE once listening");
  app.footer(kFooter);
  CLI11_PARSE(app, argc, argv);

  auto behaviour = zerodrop::testing::behaviour_from_string(mode);
  if (!behaviour) {
    std::fprintf(stderr, "misbehaving-server: error: unknown --mode '%s' (see --help)\n",
                 mode.c_str());
    return 2;
  }
  options.behaviour = *behaviour;
  options.delay = std::chrono::milliseconds(delay_ms);

  // Block the stop signals before the server thread starts, then wait for one here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  try {
    zerodrop::testing::MisbehavingServer server(options);
    if (!port_file.empty()) {
      std::FILE* f = std::fopen((port_file + ".tmp").c_str(), "w");
      if (f == nullptr) {
        std::fprintf(stderr, "misbehaving-server: error: cannot write %s\n", port_file.c_str());
        return 2;
      }
      std::fprintf(f, "%u\n", server.port());
      std::fclose(f);
      std::rename((port_file + ".tmp").c_str(), port_file.c_str());  // appears complete
    }
    std::printf("listening on %s\n", server.url().c_str());
    std::fflush(stdout);
    int signal = 0;
    sigwait(&stop, &signal);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "misbehaving-server: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
