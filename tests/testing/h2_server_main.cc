// h2-server: an h2c test server that misbehaves on purpose, for end-to-end tests and benchmarks.
#include <signal.h>

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "testing/h2_server.h"

namespace {

constexpr const char* kFooter = R"(
Modes (they act on every request from number --after of a connection, 0-based):
  ok                  200 "ok" (with --grpc: an empty message and grpc-status 0)
  grpc-status         gRPC trailers grpc-status --code, grpc-message "boom here"
  goaway-graceful     GOAWAY(2^31-1) + PING, answers, GOAWAY(last stream) at the PING ACK
  goaway-single       one GOAWAY naming the previous stream: this request is unprocessed
  goaway-error        GOAWAY(this stream, INTERNAL_ERROR, "Cancelling all calls"), then closes
  refuse              RST_STREAM REFUSED_STREAM
  rst                 RST_STREAM --code (8 = CANCEL, 2 = INTERNAL_ERROR, ...)
  close-no-goaway     closes the TCP connection without GOAWAY
  close-mid-stream    response HEADERS and part of the DATA, then closes
  stall               never answers
  no-trailers         a gRPC response without trailers
  wrong-content-type  a gRPC answer with content-type text/html
  huge-headers        100 KiB of response header fields
  garbage-frames      a DATA frame on stream 0 (a connection PROTOCOL_ERROR)
  max-streams         SETTINGS_MAX_CONCURRENT_STREAMS --code, answers after --delay

Prints "listening on http://HOST:PORT/" (and writes PORT to --port-file), then serves h2c
(prior knowledge) until SIGINT or SIGTERM.

Example:
  h2-server --mode ok --grpc --port-file /tmp/port &)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"h2-server: an HTTP/2 (h2c) server that misbehaves on purpose (tests only)"};
  std::string mode = "ok";
  zerodrop::testing::H2ServerOptions options;
  bool grpc = false;
  int delay_ms = 0;
  std::string port_file;
  app.add_option("--mode", mode, "what to do with each request (see Modes)")->capture_default_str();
  app.add_flag("--grpc", grpc, "answer as a gRPC server");
  app.add_option("--code", options.code, "grpc-status, RST code or max streams, by mode");
  app.add_option("--after", options.after, "requests answered ok on a connection first");
  app.add_option("--name", options.name, "value of x-pod-name")->capture_default_str();
  app.add_option("--host", options.host, "address to listen on")->capture_default_str();
  app.add_option("--port", options.port, "port; 0 = any free port")->capture_default_str();
  app.add_option("--delay", delay_ms, "milliseconds before each answer")->capture_default_str();
  app.add_option("--port-file", port_file, "write the port to FILE once listening");
  app.footer(kFooter);
  CLI11_PARSE(app, argc, argv);

  auto parsed = zerodrop::testing::h2_mode_from_string(mode);
  if (!parsed) {
    std::fprintf(stderr, "h2-server: error: unknown --mode '%s' (see --help)\n", mode.c_str());
    return 2;
  }
  options.mode = *parsed;
  options.grpc = grpc ? zerodrop::testing::Grpc::on : zerodrop::testing::Grpc::off;
  options.delay = std::chrono::milliseconds(delay_ms);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  try {
    zerodrop::testing::H2Server server(options);
    if (!port_file.empty()) {
      std::FILE* f = std::fopen((port_file + ".tmp").c_str(), "w");
      if (f == nullptr) {
        std::fprintf(stderr, "h2-server: error: cannot write %s\n", port_file.c_str());
        return 2;
      }
      std::fprintf(f, "%u\n", server.port());
      std::fclose(f);
      std::rename((port_file + ".tmp").c_str(), port_file.c_str());
    }
    std::printf("listening on %s\n", server.url().c_str());
    std::fflush(stdout);
    int signal = 0;
    sigwait(&stop, &signal);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "h2-server: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
