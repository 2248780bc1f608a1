// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/idempotent.h"
#include "http/proxy_exchange.h"
#include "lab/routers/l7_h2.h"
#include "lab/routers/router_core.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

using zerodrop::http::ProxyFailure;

constexpr size_t kIdlePerBackend = 32;  // ingress-nginx's upstream-keepalive-connections
// A client connection idle this long is closed. The lab's load keeps its connections busy, so it
// never meets this limit (no request races the close); it frees connections a client abandoned.
// Shorter than ingress-nginx's 75 s client keep-alive, as a router in front of it would be.
constexpr auto kClientIdle = std::chrono::seconds(60);
// Bodies are buffered whole, one per request in flight, and a lab run keeps hundreds of requests
// in flight on a small machine: 8 MiB is far above what the lab's load sends (--body; ingress-nginx
// allows 1 MiB by default) yet keeps a runaway upstream from growing the router without bound.
// Over it, a request closes the client connection and a response is a body_too_large 502.
constexpr uint64_t kBodyLimit = 8 * 1024 * 1024;

// One connection to a backend pod, kept in the pool between requests.
struct Upstream {
  explicit Upstream(asio::io_context& io) : stream(io) {}

  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  std::string pod;
};

// Idle upstream connections per pod. Before reuse, a connection is checked with a non-blocking
// MSG_PEEK: one the backend has closed (or written to) is dropped, as nginx drops idle upstream
// connections that close, so only a close in the race window fails a request. Router thread only.
class UpstreamPool {
public:
  std::shared_ptr<Upstream> take(const std::string& pod) {
    auto it = idle_.find(pod);
    while (it != idle_.end() && !it->second.empty()) {
      std::shared_ptr<Upstream> up = std::move(it->second.back());
      it->second.pop_back();
      if (still_open(*up)) {
        return up;
      }
    }
    return nullptr;
  }

  void put(std::shared_ptr<Upstream> up) {
    std::vector<std::shared_ptr<Upstream>>& list = idle_[up->pod];
    if (list.size() < kIdlePerBackend && up->buffer.size() == 0) {
      list.push_back(std::move(up));
    }
  }

private:
  static bool still_open(Upstream& up) {
    char byte = 0;
    ssize_t n = ::recv(up.stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  std::unordered_map<std::string, std::vector<std::shared_ptr<Upstream>>> idle_;
};

class L7Router;

// One HTTP/1.1 client connection: a backend per request, like an ingress. The forwarding itself
// is http::exchange; choosing the pod, pooling and retrying are this session's policy.
class L7Session : public std::enable_shared_from_this<L7Session> {
public:
  // `preread`: the bytes read while telling HTTP/1.1 from HTTP/2, the start of the first request.
  L7Session(L7Router& router, tcp::socket client, std::string_view preread);
  void read();

private:
  void on_request(error_code ec);
  void attempt();
  void on_connect(error_code ec);
  void send();
  void on_response(const zerodrop::http::Exchanged& result);
  void reply_error(zerodrop::http::ProxyFailure failure, const std::string& pod);
  void forward();
  RouterCore& core();

  zerodrop::http::ClientConnection client_connection() const {
    return client_side_.keep_alive ? zerodrop::http::ClientConnection::keep
                                   : zerodrop::http::ClientConnection::close;
  }

  L7Router& router_;
  beast::tcp_stream client_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  zerodrop::http::ProxyRequest request_;
  zerodrop::http::ClientSide client_side_;
  zerodrop::http::ProxyResponse response_;
  std::shared_ptr<Upstream> upstream_;
  std::vector<std::string> tried_;
};

class L7Router final : public RouterCore {
public:
  L7Router(const RouterOptions& options, Recorder* recorder)
      : RouterCore(options, Balance::round_robin, recorder), h2(*this) {}

  ~L7Router() override { stop(); }

  void accept() override {
    acceptor().async_accept([this](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) {
        return;
      }
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        sniff(std::make_shared<Sniffed>(std::move(socket)));
      }
      accept();
    });
  }

  UpstreamPool pool;
  H2Upstreams h2;

private:
  // A new client connection's first bytes, until they tell HTTP/2's preface (h2c by prior
  // knowledge, as the lab's load speaks it) from an HTTP/1.1 request.
  struct Sniffed {
    explicit Sniffed(tcp::socket socket) : stream(std::move(socket)) {}

    beast::tcp_stream stream;
    std::string bytes;
    std::array<char, kH2Preface.size()> chunk{};
  };

  void sniff(std::shared_ptr<Sniffed> s) {
    size_t want = kH2Preface.size() - s->bytes.size();
    s->stream.expires_after(kClientIdle);
    s->stream.async_read_some(asio::buffer(s->chunk.data(), want),
                              [this, s](error_code ec, size_t n) {
                                s->bytes.append(s->chunk.data(), n);
                                if (ec) {
                                  return;  // closed or idle before a request
                                }
                                on_sniffed(std::move(s));
                              });
  }

  void on_sniffed(std::shared_ptr<Sniffed> s) {
    if (!kH2Preface.starts_with(s->bytes)) {
      s->stream.expires_never();
      std::make_shared<L7Session>(*this, s->stream.release_socket(), s->bytes)->read();
    } else if (s->bytes.size() == kH2Preface.size()) {
      s->stream.expires_never();
      zerodrop::http::serve_h2(h2, s->stream.release_socket(), std::move(s->bytes));
    } else {
      sniff(std::move(s));
    }
  }
};

L7Session::L7Session(L7Router& router, tcp::socket client, std::string_view preread)
    : router_(router), client_(std::move(client)) {
  buffer_.commit(asio::buffer_copy(buffer_.prepare(preread.size()), asio::buffer(preread)));
}

RouterCore& L7Session::core() {
  return router_;
}

void L7Session::read() {
  parser_.emplace();
  parser_->body_limit(kBodyLimit);
  client_.expires_after(kClientIdle);
  http::async_read(client_, buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, size_t) { self->on_request(ec); });
}

void L7Session::on_request(error_code ec) {
  if (ec) {
    error_code ignored;
    client_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    return;  // the client closed, went idle too long or sent something that is not HTTP/1.x
  }
  client_.expires_never();  // the upstream's timeouts bound the exchange from here on
  request_ = parser_->release();
  client_side_ = zerodrop::http::client_side(request_);
  zerodrop::http::prepare_upstream_request(request_);
  tried_.clear();
  attempt();
}

void L7Session::attempt() {
  const Endpoint* endpoint = core().choose(tried_);
  if (endpoint == nullptr) {
    if (tried_.empty()) {
      core().refused("", "no usable endpoint");
      reply_error(ProxyFailure::no_endpoint, "");
    } else {
      reply_error(ProxyFailure::connect_refused, tried_.back());
    }
    return;
  }
  tried_.push_back(endpoint->pod);
  upstream_ = router_.pool.take(endpoint->pod);
  if (upstream_) {
    send();
    return;
  }
  upstream_ = std::make_shared<Upstream>(core().io());
  upstream_->pod = endpoint->pod;
  error_code bad;
  tcp::endpoint to(asio::ip::make_address(endpoint->ip, bad), endpoint->port);
  upstream_->stream.expires_after(core().options().connect_timeout);
  upstream_->stream.async_connect(
      to, [self = shared_from_this()](error_code e) { self->on_connect(e); });
}

void L7Session::on_connect(error_code ec) {
  if (!ec) {
    error_code ignored;
    upstream_->stream.socket().set_option(tcp::no_delay(true), ignored);
    send();
    return;
  }
  core().refused(upstream_->pod, ec == beast::error::timeout ? "connect timed out" : ec.message());
  int attempts = static_cast<int>(tried_.size());
  if (attempts <= core().options().retries && zerodrop::http::idempotent(request_.method())) {
    attempt();  // proxy_next_upstream error timeout: another backend
    return;
  }
  reply_error(zerodrop::http::connect_failure(ec), upstream_->pod);
}

void L7Session::send() {
  zerodrop::http::ProxyLimits limits{kBodyLimit, core().options().upstream_timeout};
  zerodrop::http::exchange(
      upstream_->stream, upstream_->buffer, request_, response_, limits,
      [self = shared_from_this()](zerodrop::http::Exchanged result) { self->on_response(result); });
}

void L7Session::on_response(const zerodrop::http::Exchanged& result) {
  if (result.failure != ProxyFailure::none) {
    // Reset, early close, timeout or an unusable response: the ingress answers 502 (504 for a
    // timeout) for that pod, and says why.
    error_code ignored;
    upstream_->stream.socket().close(ignored);
    reply_error(result.failure, upstream_->pod);
    return;
  }
  if (result.upstream_keep_alive) {
    router_.pool.put(std::move(upstream_));
  } else {
    error_code ignored;
    upstream_->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    upstream_->stream.socket().close(ignored);
    upstream_.reset();
  }
  // Hop by hop: the upstream's Connection is not passed on; the client's own choice decides.
  zerodrop::http::prepare_client_response(response_, client_side_, client_connection());
  forward();
}

void L7Session::reply_error(ProxyFailure failure, const std::string& pod) {
  http::status status = zerodrop::http::gateway_status(failure);
  response_ = zerodrop::http::own_response(
      status, std::string(http::obsolete_reason(status)) + "\n", client_side_, client_connection());
  if (!pod.empty()) {
    response_.set("X-Pod-Name", pod);  // the backend the ingress chose, for the record
  }
  // Why the router answered itself: the record keeps it, so the diagnosis does not blame the app
  // for the router's own failure.
  response_.set(zerodrop::http::kRouterErrorHeader, zerodrop::http::to_string(failure));
  upstream_.reset();
  forward();
}

void L7Session::forward() {
  if (!tried_.empty() && response_.find("X-Pod-Name") == response_.end()) {
    response_.set("X-Pod-Name", tried_.back());
  }
  bool keep_alive = client_side_.keep_alive;
  client_.expires_after(kClientIdle);  // a client that stops reading does not hold the session
  zerodrop::http::write_response(
      client_, response_, client_side_, [self = shared_from_this(), keep_alive](error_code ec) {
        if (ec || !keep_alive) {
          error_code ignored;
          self->client_.socket().shutdown(tcp::socket::shutdown_send, ignored);
          return;
        }
        self->read();
      });
}

}  // namespace

std::unique_ptr<Router> start_l7(const RouterOptions& options, Recorder* recorder) {
  auto router = std::make_unique<L7Router>(options, recorder);
  router->run();
  return router;
}

}  // namespace zerodrop::lab
