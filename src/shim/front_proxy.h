#pragma once

#include <memory>
#include <string>

#include "base/duration.h"
#include "shim/ready_server.h"

namespace zerodrop::shim {

// Between the two GOAWAYs of a drain: long enough for a client a round trip away (even a busy
// one) to see the first before the second; short next to any readiness delay.
inline constexpr Duration kDefaultH2GoawayDelay = std::chrono::seconds(1);

// The optional front proxy of `zerodrop run` (--listen, --to): an HTTP/1.1 reverse proxy that
// gives keep-alive hygiene to an app that lacks it. Each client connection gets its own upstream
// keep-alive connection. From the stop signal on, responses carry `Connection: close`; when
// draining starts it stops accepting and closes idle client connections. Every client connection
// and proxied request is tracked by `shutdown`, so the shim stops only once they are done.
// An upstream failure answers 502 with `Connection: close`; a reused upstream connection that
// fails before any response byte is retried once on a fresh one for idempotent methods.
// Bodies are buffered, up to 64 MiB; Upgrade (WebSocket) is not supported.
// A connection that opens with HTTP/2's preface (h2c, prior knowledge: gRPC) is proxied over h2c
// to the app on the same port; from the stop signal on it gets GOAWAY(2^31-1), then after
// `h2_goaway_delay` the final GOAWAY, and closes once its streams are answered (front_proxy_h2.h).
class FrontProxy {
public:
  FrontProxy(boost::asio::io_context& io, lifecycle::Shutdown& shutdown,
             const ListenAddress& listen, const ListenAddress& upstream,
             Duration h2_goaway_delay = kDefaultH2GoawayDelay);
  ~FrontProxy();

  unsigned short port() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace zerodrop::shim
