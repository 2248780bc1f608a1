#pragma once

#include <memory>
#include <string>

#include "shim/ready_server.h"

namespace zerodrop::shim {

// The optional front proxy of `zerodrop run` (--listen, --to): an HTTP/1.1 reverse proxy that
// gives keep-alive hygiene to an app that lacks it. Each client connection gets its own upstream
// keep-alive connection. From the stop signal on, responses carry `Connection: close`; when
// draining starts it stops accepting and closes idle client connections. Every client connection
// and proxied request is tracked by `shutdown`, so the shim stops only once they are done.
// An upstream failure answers 502 with `Connection: close`; a reused upstream connection that
// fails before any response byte is retried once on a fresh one for idempotent methods.
// Bodies are buffered, up to 64 MiB; Upgrade (WebSocket) is not supported.
class FrontProxy {
public:
  FrontProxy(boost::asio::io_context& io, lifecycle::Shutdown& shutdown,
             const ListenAddress& listen, const ListenAddress& upstream);
  ~FrontProxy();

  unsigned short port() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace zerodrop::shim
