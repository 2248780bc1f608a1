// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "shim/front_proxy_h2.h"

#include <algorithm>

#include "http/h2_upstream.h"

namespace zerodrop::shim {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using http::H2Exchange;
using http::ProxyFailure;

namespace {

// The app is on loopback, or next to the proxy in its pod: a connect that takes this long is
// not coming.
constexpr auto kH2ConnectTimeout = std::chrono::seconds(5);
// As the HTTP/1.1 side's (nginx's proxy_read_timeout default): an app silent for a minute is stuck.
constexpr auto kH2UpstreamTimeout = std::chrono::seconds(60);

}  // namespace

FrontH2::FrontH2(asio::io_context& io, lifecycle::Shutdown& shutdown, tcp::endpoint app,
                 std::chrono::nanoseconds goaway_delay)
    : io_(io), shutdown_(shutdown), app_(std::move(app)), goaway_delay_(goaway_delay) {}

FrontH2::~FrontH2() = default;

void FrontH2::serve(tcp::socket client, std::string preread) {
  uint64_t id = next_client_++;
  auto session = std::make_shared<http::H2Downstream>(*this, std::move(client));
  Client& entry = clients_[id];
  entry.session = session;
  // Never idle for the drain's sake: the GOAWAYs close it, once its streams are answered.
  entry.tracked.emplace(shutdown_.track([] {}));
  session->on_closed([this, id] {
    // Not erased here: the session is inside its own close(), on a stack that still uses it.
    asio::post(io_, [this, id] { clients_.erase(id); });
  });
  session->start(std::move(preread));
  if (stopping_) {
    start_goaway(entry);
  }
}

void FrontH2::stop_signal() {
  if (stopping_) {
    return;
  }
  stopping_ = true;
  for (auto& [id, client] : clients_) {
    start_goaway(client);
  }
}

// The notice now; the final GOAWAY once the client had time to see it (about one round trip),
// so that streams it opened meanwhile are not lost in flight.
void FrontH2::start_goaway(Client& client) {
  client.session->goaway_notice();
  client.goaway_timer = std::make_unique<asio::steady_timer>(io_, goaway_delay_);
  client.goaway_timer->async_wait(
      [weak = std::weak_ptr(client.session)](boost::system::error_code ec) {
        std::shared_ptr<http::H2Downstream> session = weak.lock();
        if (!ec && session) {
          session->goaway_final();
        }
      });
}

std::shared_ptr<void> FrontH2::admit() {
  std::optional<lifecycle::Work> work = shutdown_.enter();
  if (!work) {
    return nullptr;
  }
  return std::make_shared<lifecycle::Work>(std::move(*work));
}

std::shared_ptr<http::H2Upstream> FrontH2::connection() {
  for (const std::shared_ptr<http::H2Upstream>& c : upstreams_) {
    if (c->takes_streams()) {
      return c;
    }
  }
  auto c =
      std::make_shared<http::H2Upstream>(*this, "app", app_.address().to_string(), app_.port());
  upstreams_.push_back(c);
  c->connect();
  return c;
}

void FrontH2::dispatch(const std::shared_ptr<H2Exchange>& exchange) {
  exchange->reset_attempt();
  exchange->timer.expires_after(kH2UpstreamTimeout);
  exchange->timer.async_wait([this, weak = std::weak_ptr(exchange)](boost::system::error_code ec) {
    std::shared_ptr<H2Exchange> ex = weak.lock();
    if (ec || !ex || ex->completed) {
      return;
    }
    cancel(*ex);
    complete(*ex, H2Exchange::End::failed, ProxyFailure::upstream_timeout);
  });
  connection()->submit(exchange);
}

void FrontH2::cancel(H2Exchange& exchange) {
  if (std::shared_ptr<http::H2Upstream> up = exchange.upstream.lock()) {
    up->cancel(exchange);
  }
  exchange.upstream.reset();
}

std::chrono::nanoseconds FrontH2::connect_timeout() const {
  return kH2ConnectTimeout;
}

// Nothing reached the app (it is gone, or not up yet): the client may send it again.
void FrontH2::connect_failed(const std::string&, const std::string&,
                             const std::shared_ptr<H2Exchange>& exchange, ProxyFailure) {
  complete(*exchange, H2Exchange::End::refused, ProxyFailure::none);
}

// The app never processed it (REFUSED_STREAM, above its GOAWAY, unsent when its connection
// broke). With one app there is nowhere else to send it: the client is told, and may resend it.
void FrontH2::unprocessed(const std::shared_ptr<H2Exchange>& exchange) {
  exchange->upstream.reset();
  complete(*exchange, H2Exchange::End::refused, ProxyFailure::none);
}

void FrontH2::complete(H2Exchange& exchange, H2Exchange::End end, ProxyFailure failure) {
  http::complete_exchange(exchange, end, failure);
}

void FrontH2::forget(const http::H2Upstream& upstream) {
  std::erase_if(upstreams_, [&](const auto& c) { return c.get() == &upstream; });
}

}  // namespace zerodrop::shim
