#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/parse.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace zerodrop::lifecycle {
class Shutdown;
}  // namespace zerodrop::lifecycle

namespace zerodrop::shim {

// Where `zerodrop run` listens: an IPv4/IPv6 address and a port (0 = any free port).
using ListenAddress = HostPort;

// An http:// URL split for a GET: host, port and target (path and query).
struct HttpUrl {
  std::string host;
  std::string port;
  std::string target;
};

// Parses "http://host[:port]/path". Throws Error naming `what` unless it is such a URL.
HttpUrl parse_http_url(const std::string& text, const std::string& what);

// The readiness endpoint of `zerodrop run`. GET /healthz answers 200 (liveness never fails
// while zerodrop runs). Any other path is readiness: 503 from the stop signal on; while serving,
// 200 if `app_ready` is unset or a GET of it answers 2xx/3xx within 1 s, else 503. Asynchronous
// on `io`; binding errors throw Error.
class ReadyServer {
public:
  ReadyServer(boost::asio::io_context& io, const lifecycle::Shutdown& shutdown,
              const ListenAddress& listen, std::optional<HttpUrl> app_ready);
  ~ReadyServer();

  // The bound port (useful with port 0).
  unsigned short port() const;

  // Stops accepting; probes in progress complete.
  void close();

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace zerodrop::shim
