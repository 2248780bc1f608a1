// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "http/h2_upstream.h"
#include "lab/routers/l7_h2.h"

namespace zerodrop::lab {

using boost::system::error_code;
using http::ProxyFailure;
using End = H2Exchange::End;

H2Upstreams::~H2Upstreams() = default;

using http::H2Upstream;

std::chrono::nanoseconds H2Upstreams::connect_timeout() const {
  return core_.options().connect_timeout;
}

std::shared_ptr<H2Upstream> H2Upstreams::connection_to(const Endpoint& endpoint) {
  std::vector<std::shared_ptr<H2Upstream>>& list = connections_[endpoint.pod];
  for (const std::shared_ptr<H2Upstream>& c : list) {
    if (c->takes_streams()) {
      return c;
    }
  }
  auto c = std::make_shared<H2Upstream>(*this, endpoint.pod, endpoint.ip, endpoint.port);
  list.push_back(c);
  c->connect();
  return c;
}

void H2Upstreams::dispatch(const std::shared_ptr<H2Exchange>& exchange) {
  route(exchange, End::failed, ProxyFailure::no_endpoint);
}

// Sends `exchange` to the next pod not tried yet; with none left, ends it as `end`/`failure` say
// (one choice per attempt, so that round robin stays even).
void H2Upstreams::route(const std::shared_ptr<H2Exchange>& exchange, End end,
                        ProxyFailure failure) {
  if (exchange->completed) {
    return;
  }
  const Endpoint* endpoint = core_.choose(exchange->tried);
  if (endpoint == nullptr) {
    if (failure == ProxyFailure::no_endpoint) {
      core_.refused("", "no usable endpoint");
    }
    complete(*exchange, end, failure);
    return;
  }
  exchange->reset_attempt();
  exchange->tried.push_back(endpoint->pod);
  start_timer(exchange);
  connection_to(*endpoint)->submit(exchange);
}

void H2Upstreams::start_timer(const std::shared_ptr<H2Exchange>& exchange) {
  if (exchange->tried.size() > 1) {
    return;  // one upstream timeout for all attempts, as the HTTP/1.1 side's whole exchange
  }
  exchange->timer.expires_after(core_.options().upstream_timeout);
  exchange->timer.async_wait([this, weak = std::weak_ptr(exchange)](error_code ec) {
    std::shared_ptr<H2Exchange> ex = weak.lock();
    if (ec || !ex || ex->completed) {
      return;
    }
    cancel(*ex);
    complete(*ex, End::failed, ProxyFailure::upstream_timeout);
  });
}

void H2Upstreams::cancel(H2Exchange& exchange) {
  if (std::shared_ptr<H2Upstream> up = exchange.upstream.lock()) {
    up->cancel(exchange);
  }
  exchange.upstream.reset();
}

void H2Upstreams::connect_failed(const std::string& pod, const std::string& why,
                                 const std::shared_ptr<H2Exchange>& exchange,
                                 ProxyFailure failure) {
  core_.refused(pod, why);
  if (static_cast<int>(exchange->tried.size()) <= core_.options().retries) {
    route(exchange, End::failed, failure);  // nothing reached a pod: another one may take it
    return;
  }
  complete(*exchange, End::failed, failure);
}

// Never processed by the pod: another pod may take it whatever the method (RFC 9113 §8.7);
// without one, the client is told the same and may resend it.
void H2Upstreams::unprocessed(const std::shared_ptr<H2Exchange>& exchange) {
  exchange->upstream.reset();
  route(exchange, End::refused, ProxyFailure::none);
}

void H2Upstreams::complete(H2Exchange& exchange, End end, ProxyFailure failure) {
  http::complete_exchange(exchange, end, failure);
}

void H2Upstreams::forget(const H2Upstream& upstream) {
  auto it = connections_.find(upstream.name());
  if (it != connections_.end()) {
    std::erase_if(it->second, [&](const auto& c) { return c.get() == &upstream; });
  }
}

}  // namespace zerodrop::lab
