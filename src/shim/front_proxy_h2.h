#pragma once

// Internal to the front proxy (includes Asio): its HTTP/2 side, on src/http's HTTP/2 halves.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "http/h2_proxy.h"
#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::http {
class H2Upstream;
}  // namespace zerodrop::http

namespace zerodrop::shim {

// The front proxy's h2c clients (prior knowledge) and its h2c connections to the app, as many as
// the app's SETTINGS_MAX_CONCURRENT_STREAMS need. Every client stream is in-flight work and every
// client connection is tracked by `shutdown`. From the stop signal on, each client connection
// (and each one accepted later) gets the double GOAWAY of RFC 9113 §6.8: last stream id 2^31-1
// at once, the real one `goaway_delay` later; it closes once its streams are answered. A stream
// the app never got (connect refused, app gone, above the app's GOAWAY) is refused to the client
// (REFUSED_STREAM, safe to resend); one the app had is answered by the proxy itself, gRPC
// UNAVAILABLE trailers-only (DEADLINE_EXCEEDED after the upstream timeout) or 502/504.
class FrontH2 final : public http::H2Router, public http::H2Pool {
public:
  FrontH2(boost::asio::io_context& io, lifecycle::Shutdown& shutdown,
          boost::asio::ip::tcp::endpoint app, std::chrono::nanoseconds goaway_delay);
  ~FrontH2() override;

  // Serves a client connection that began with the h2c preface (`preread`, as sniffed).
  void serve(boost::asio::ip::tcp::socket client, std::string preread);
  // The stop signal: every client connection starts its double GOAWAY.
  void stop_signal();

  // http::H2Router
  boost::asio::io_context& io() override { return io_; }

  std::string who() const override { return "zerodrop run"; }

  void dispatch(const std::shared_ptr<http::H2Exchange>& exchange) override;
  void cancel(http::H2Exchange& exchange) override;
  std::shared_ptr<void> admit() override;

  // http::H2Pool
  std::chrono::nanoseconds connect_timeout() const override;
  void connect_failed(const std::string& backend, const std::string& why,
                      const std::shared_ptr<http::H2Exchange>& exchange,
                      http::ProxyFailure failure) override;
  void unprocessed(const std::shared_ptr<http::H2Exchange>& exchange) override;
  void complete(http::H2Exchange& exchange, http::H2Exchange::End end,
                http::ProxyFailure failure) override;
  void forget(const http::H2Upstream& upstream) override;

private:
  struct Client {
    std::shared_ptr<http::H2Downstream> session;
    std::optional<lifecycle::Connection> tracked;
    std::unique_ptr<boost::asio::steady_timer> goaway_timer;
  };

  void start_goaway(Client& client);
  std::shared_ptr<http::H2Upstream> connection();

  boost::asio::io_context& io_;
  lifecycle::Shutdown& shutdown_;
  boost::asio::ip::tcp::endpoint app_;
  std::chrono::nanoseconds goaway_delay_;
  std::map<uint64_t, Client> clients_;
  uint64_t next_client_ = 0;
  std::vector<std::shared_ptr<http::H2Upstream>> upstreams_;
  bool stopping_ = false;
};

}  // namespace zerodrop::shim
