#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zerodrop::testing {

// What the HTTP/2 test server does with each request (the HTTP/2 counterpart of Behaviour).
// Modes that end a connection act on its request number `after` (0-based) and later ones;
// earlier requests on the connection are answered as `ok` (or `grpc_ok` with Grpc::on).
enum class H2Mode {
  ok,                  // 200 "ok" with x-pod-name (gRPC: a framed empty message, grpc-status 0)
  grpc_status,         // gRPC: trailers grpc-status `code`, grpc-message "boom%20here"
  goaway_graceful,     // GOAWAY(2^31-1) + PING, answers, then GOAWAY(last) at the ACK, closes
  goaway_single,       // one GOAWAY(previous stream id): this request is left unprocessed
  goaway_error,        // GOAWAY(this stream, INTERNAL_ERROR, "Cancelling all calls"), closes
  refuse,              // RST_STREAM REFUSED_STREAM
  rst,                 // RST_STREAM `code`
  close_no_goaway,     // closes the TCP connection without GOAWAY
  close_mid_stream,    // response HEADERS and part of the DATA, then closes
  stall,               // never answers
  no_trailers,         // gRPC response without trailers (END_STREAM on the DATA)
  wrong_content_type,  // gRPC answer with content-type text/html
  huge_headers,        // 100 KiB of response header fields
  garbage_frames,      // a DATA frame on stream 0: a connection PROTOCOL_ERROR
  max_streams,         // SETTINGS_MAX_CONCURRENT_STREAMS `code`; answers after `delay`
};

std::optional<H2Mode> h2_mode_from_string(std::string_view name);
std::vector<std::string_view> h2_mode_names();

enum class Grpc { off, on };

struct H2ServerOptions {
  H2Mode mode = H2Mode::ok;
  Grpc grpc = Grpc::off;  // answer as a gRPC server (content-type, framing, trailers)
  int code = 0;           // grpc-status, RST code or max streams, by mode
  uint32_t after = 0;     // the request number on a connection from which the mode acts
  std::string name = "pod-0";
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::chrono::milliseconds delay{0};  // before each answer
};

// An h2c (prior knowledge) server on libnghttp2 that misbehaves on purpose, for the load
// engine's HTTP/2 tests. Listens at construction, one thread per connection; the destructor
// stops it. Throws std::runtime_error if it cannot bind.
class H2Server {
public:
  explicit H2Server(H2ServerOptions options);
  ~H2Server();
  H2Server(const H2Server&) = delete;
  H2Server& operator=(const H2Server&) = delete;

  uint16_t port() const;
  std::string url(std::string_view path = "/") const;
  uint64_t requests() const;        // requests received, all connections
  uint64_t connections() const;     // connections accepted
  uint32_t max_concurrent() const;  // most streams open at once on one connection

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerodrop::testing
