#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zerodrop::testing {

// What the server does with each request it reads.
enum class Behaviour {
  ok,               // 200 "ok" with X-Pod-Name, keep-alive
  status,           // answers Options::status (502, 503, 504, 404, ...)
  chunked,          // 200 with a valid chunked body
  slow,             // 200 after Options::delay
  refuse,           // nothing listens on the port: connection refused
  reset,            // reads the request, then resets the connection (RST)
  close,            // reads the request, then closes the connection (FIN)
  reset_mid_body,   // sends headers and part of the body, waits Options::delay, resets
  truncated,        // sends headers and part of the body, then closes (FIN)
  stall,            // reads the request and never answers
  huge_headers,     // a header block of 1 MiB
  endless_headers,  // header lines that never end
  invalid_chunked,  // a chunked body whose chunk size is not hexadecimal
  endless_body,     // a Content-Length body that keeps coming, slowly, forever
  garbage,          // bytes that are not HTTP
  backlog_full,     // listens with a full accept queue, never accepts: connect times out
  // Correct HTTP that proxies have got wrong:
  head_length,   // 200 "ok" with Content-Length: 2; to HEAD the same headers and no body (nginx)
  interim,       // 100 Continue and 103 Early Hints, then 200 "ok"
  echo,          // 200 whose body is the request head as received, with hop-by-hop response
                 // headers a proxy must drop (Connection: X-Hop, X-Hop, Keep-Alive,
                 // Proxy-Connection) and a forged X-Zerodrop-Router-Error
  slow_reset,    // reads the request, waits Options::delay, then resets (a request held, then cut)
  slow_close,    // reads the request, waits Options::delay, then closes (FIN)
  close_reused,  // answers each connection's first request (200 "ok", keep-alive) and closes
                 // (FIN) at its second without answering: a kept-alive connection the server
                 // closed as the client sent on it (nginx's old workers at a reload)
};

std::optional<Behaviour> behaviour_from_string(std::string_view name);
std::string_view to_string(Behaviour behaviour);
std::vector<std::string_view> behaviour_names();

struct ServerOptions {
  Behaviour behaviour = Behaviour::ok;
  int status = 200;            // for Behaviour::status
  std::string name = "pod-0";  // sent as X-Pod-Name
  std::string host = "127.0.0.1";
  uint16_t port = 0;                     // 0 = any free port
  std::chrono::milliseconds delay{100};  // for slow, reset_mid_body, slow_reset and slow_close
};

// An HTTP/1.1 server that misbehaves on purpose, for tests of the load engine (and other
// engineers' tests). Listens at construction on its own thread; the destructor stops it and
// closes every connection. Throws std::runtime_error if it cannot bind.
class MisbehavingServer {
public:
  explicit MisbehavingServer(ServerOptions options);
  ~MisbehavingServer();
  MisbehavingServer(const MisbehavingServer&) = delete;
  MisbehavingServer& operator=(const MisbehavingServer&) = delete;

  uint16_t port() const;
  std::string url(std::string_view path = "/") const;
  uint64_t requests() const;     // requests read so far, all connections
  uint64_t connections() const;  // connections accepted so far

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerodrop::testing
