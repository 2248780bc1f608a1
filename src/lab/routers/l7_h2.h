#pragma once

// Internal to the l7 router (includes Asio): its HTTP/2 routing. A client connection that opens
// with the h2c preface (prior knowledge) is served by an http::H2Downstream session; each request
// stream goes to a pod chosen per stream over one of the router's http::H2Upstream connections
// to it. Everything runs on the router's one thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "http/h2_proxy.h"
#include "http/proxy_failure.h"
#include "lab/routers/router_core.h"

namespace zerodrop::lab {

using http::H2Exchange;
using http::kH2Preface;

// The router's h2c connections to its pods (up to each one's SETTINGS_MAX_CONCURRENT_STREAMS
// streams, another connection when those are taken or after a GOAWAY) and the routing policy of
// a stream: round robin over usable endpoints; a connect failure tried again on another pod
// within --retries (nothing was sent); a stream the pod refused unprocessed (REFUSED_STREAM, or
// above its GOAWAY's last stream id) resent to another pod whatever --retries says, else
// refused to the client, who may resend it.
class H2Upstreams final : public http::H2Router, public http::H2Pool {
public:
  explicit H2Upstreams(RouterCore& core) : core_(core) {}

  ~H2Upstreams() override;

  // http::H2Router
  boost::asio::io_context& io() override { return core_.io(); }

  std::string who() const override { return "router " + core_.name(); }

  void dispatch(const std::shared_ptr<H2Exchange>& exchange) override;
  void cancel(H2Exchange& exchange) override;

  // http::H2Pool
  std::chrono::nanoseconds connect_timeout() const override;
  void connect_failed(const std::string& pod, const std::string& why,
                      const std::shared_ptr<H2Exchange>& exchange,
                      http::ProxyFailure failure) override;
  void unprocessed(const std::shared_ptr<H2Exchange>& exchange) override;
  void complete(H2Exchange& exchange, H2Exchange::End end, http::ProxyFailure failure) override;
  void forget(const http::H2Upstream& upstream) override;

private:
  void route(const std::shared_ptr<H2Exchange>& exchange, H2Exchange::End end,
             http::ProxyFailure failure);
  std::shared_ptr<http::H2Upstream> connection_to(const Endpoint& endpoint);
  void start_timer(const std::shared_ptr<H2Exchange>& exchange);

  RouterCore& core_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<http::H2Upstream>>> connections_;
};

}  // namespace zerodrop::lab
