// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <sys/socket.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/idempotent.h"
#include "lab/router_core.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr size_t kIdlePerBackend = 32;  // ingress-nginx's upstream-keepalive-connections
constexpr auto kClientIdle = std::chrono::seconds(60);
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

// One client connection: a backend per request, like an ingress.
class L7Session : public std::enable_shared_from_this<L7Session> {
public:
  L7Session(L7Router& router, tcp::socket client);
  void read();

private:
  void on_request(error_code ec);
  void attempt();
  void on_connect(error_code ec);
  void send();
  void on_response(error_code ec);
  void reply_error(http::status status, const std::string& pod);
  void forward();
  RouterCore& core();

  L7Router& router_;
  beast::tcp_stream client_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::optional<http::response_parser<http::string_body>> upstream_parser_;
  http::response<http::string_body> response_;
  std::shared_ptr<Upstream> upstream_;
  std::vector<std::string> tried_;
  bool client_keep_alive_ = true;
};

class L7Router final : public RouterCore {
public:
  using RouterCore::RouterCore;

  ~L7Router() override { stop(); }

  void accept() override {
    acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) {
        return;
      }
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        std::make_shared<L7Session>(*this, std::move(socket))->read();
      }
      accept();
    });
  }

  UpstreamPool pool;
};

L7Session::L7Session(L7Router& router, tcp::socket client)
    : router_(router), client_(std::move(client)) {}

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
    return;  // the client closed, went idle too long or sent something that is not HTTP/1.1
  }
  request_ = parser_->release();
  client_keep_alive_ = request_.keep_alive();
  tried_.clear();
  attempt();
}

void L7Session::attempt() {
  const Endpoint* endpoint = core().choose(tried_);
  if (endpoint == nullptr) {
    if (tried_.empty()) {
      core().refused("", "no usable endpoint");
      reply_error(http::status::service_unavailable, "");
    } else {
      reply_error(http::status::bad_gateway, tried_.back());
    }
    return;
  }
  tried_.push_back(endpoint->pod);
  upstream_ = router_.pool.take(endpoint->pod);
  if (upstream_) {
    send();
    return;
  }
  upstream_ = std::make_shared<Upstream>(core().io_);
  upstream_->pod = endpoint->pod;
  error_code bad;
  tcp::endpoint to(asio::ip::make_address(endpoint->ip, bad), endpoint->port);
  upstream_->stream.expires_after(core().options_.connect_timeout);
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
  if (attempts <= core().options_.retries && zerodrop::http::idempotent(request_.method())) {
    attempt();  // proxy_next_upstream error timeout: another backend
    return;
  }
  reply_error(http::status::bad_gateway, upstream_->pod);
}

void L7Session::send() {
  request_.keep_alive(true);  // upstream connections are pooled whatever the client asked
  upstream_->stream.expires_after(core().options_.upstream_timeout);
  http::async_write(
      upstream_->stream, request_, [self = shared_from_this()](error_code ec, size_t) {
        if (ec) {
          self->on_response(ec);
          return;
        }
        self->upstream_parser_.emplace();
        self->upstream_parser_->body_limit(kBodyLimit);
        http::async_read(self->upstream_->stream, self->upstream_->buffer, *self->upstream_parser_,
                         [self](error_code e, size_t) { self->on_response(e); });
      });
}

void L7Session::on_response(error_code ec) {
  if (ec) {
    // Reset, early close or timeout of the upstream: the ingress answers 502 for that pod.
    error_code ignored;
    upstream_->stream.socket().close(ignored);
    reply_error(
        ec == beast::error::timeout ? http::status::gateway_timeout : http::status::bad_gateway,
        upstream_->pod);
    return;
  }
  response_ = upstream_parser_->release();
  if (response_.keep_alive()) {
    router_.pool.put(std::move(upstream_));
  } else {
    error_code ignored;
    upstream_->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    upstream_->stream.socket().close(ignored);
    upstream_.reset();
  }
  forward();
}

void L7Session::reply_error(http::status status, const std::string& pod) {
  response_ = {status, 11};
  response_.set(http::field::content_type, "text/plain");
  response_.body() = std::string(http::obsolete_reason(status)) + "\n";
  if (!pod.empty()) {
    response_.set("X-Pod-Name", pod);  // the backend the ingress chose, for the record
  }
  upstream_.reset();
  forward();
}

void L7Session::forward() {
  if (!tried_.empty() && response_.find("X-Pod-Name") == response_.end()) {
    response_.set("X-Pod-Name", tried_.back());
  }
  bool keep_alive = client_keep_alive_;  // hop by hop: the upstream's Connection is not passed on
  response_.keep_alive(keep_alive);
  if (request_.method() != http::verb::head) {
    response_.prepare_payload();
  }
  http::async_write(client_, response_,
                    [self = shared_from_this(), keep_alive](error_code ec, size_t) {
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
