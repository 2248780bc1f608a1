#include "shim/front_proxy.h"

#include <fcntl.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "http/idempotent.h"
#include "shim/accept_loop.h"
#include "zerodrop/lifecycle/beast.h"
#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::shim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

constexpr std::uint64_t kBodyLimit = 64 * 1024 * 1024;
constexpr auto kUpstreamTimeout = std::chrono::seconds(60);
constexpr auto kClientIdleTimeout = std::chrono::minutes(5);

// One client connection and its upstream connection.
class ProxySession : public std::enable_shared_from_this<ProxySession> {
public:
  ProxySession(tcp::socket client, FrontProxy::Impl& proxy);
  void start();

private:
  void read_request();
  void on_request(beast::error_code ec);
  void forward(bool retry_allowed);
  void read_upstream(bool retry_allowed);
  void on_upstream_failure(bool retry_allowed, bool got_bytes);
  void respond(Response response);
  void close_client();
  void close_upstream();

  beast::tcp_stream client_;
  beast::tcp_stream upstream_;
  FrontProxy::Impl& proxy_;
  beast::flat_buffer client_buffer_;
  beast::flat_buffer upstream_buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response_parser<http::string_body>> upstream_parser_;
  Request request_;
  bool upstream_open_ = false;
  bool upstream_reused_ = false;
  std::optional<lifecycle::Connection> connection_;
  std::optional<lifecycle::Work> work_;
};

}  // namespace

struct FrontProxy::Impl {
  asio::io_context& io;
  lifecycle::Shutdown& shutdown;
  tcp::endpoint upstream;
  tcp::acceptor acceptor;

  void accept() {
    accept_loop(acceptor, [this](tcp::socket socket) {
      std::make_shared<ProxySession>(std::move(socket), *this)->start();
    });
  }
};

namespace {

ProxySession::ProxySession(tcp::socket client, FrontProxy::Impl& proxy)
    : client_(std::move(client)), upstream_(proxy.io), proxy_(proxy) {}

void ProxySession::start() {
  connection_.emplace(proxy_.shutdown.track([weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->close_client();
    }
  }));
  read_request();
}

void ProxySession::read_request() {
  connection_->set_idle(true);
  parser_.emplace();
  parser_->body_limit(kBodyLimit);
  client_.expires_after(kClientIdleTimeout);
  http::async_read(
      client_, client_buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void ProxySession::on_request(beast::error_code ec) {
  if (ec) {
    if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted
        && ec != asio::error::connection_reset && ec != beast::error::timeout) {
      Response bad(http::status::bad_request, 11);
      bad.body() = "bad request: " + ec.message() + "\n";
      bad.prepare_payload();
      bad.keep_alive(false);
      return respond(std::move(bad));
    }
    return close_client();
  }
  connection_->set_idle(false);
  client_.expires_never();
  request_ = parser_->release();
  work_ = proxy_.shutdown.enter();
  forward(zerodrop::http::idempotent(request_.method()));
}

void ProxySession::forward(bool retry_allowed) {
  auto send = [self = shared_from_this(), retry_allowed] {
    auto message = std::make_shared<Request>(self->request_);
    message->keep_alive(true);
    message->prepare_payload();
    self->upstream_.expires_after(kUpstreamTimeout);
    http::async_write(self->upstream_, *message,
                      [self, message, retry_allowed](beast::error_code ec, std::size_t) {
                        if (ec) {
                          return self->on_upstream_failure(retry_allowed, false);
                        }
                        self->read_upstream(retry_allowed);
                      });
  };
  if (upstream_open_) {
    upstream_reused_ = true;
    return send();
  }
  upstream_reused_ = false;
  upstream_.expires_after(kUpstreamTimeout);
  upstream_.async_connect(proxy_.upstream, [self = shared_from_this(), send](beast::error_code ec) {
    if (ec) {
      return self->on_upstream_failure(false, false);
    }
    self->upstream_open_ = true;
    send();
  });
}

void ProxySession::read_upstream(bool retry_allowed) {
  upstream_parser_.emplace();
  upstream_parser_->body_limit(kBodyLimit);
  upstream_parser_->skip(request_.method() == http::verb::head);
  http::async_read(upstream_, upstream_buffer_, *upstream_parser_,
                   [self = shared_from_this(), retry_allowed](beast::error_code ec, std::size_t n) {
                     if (ec) {
                       return self->on_upstream_failure(retry_allowed, n > 0);
                     }
                     Response response = self->upstream_parser_->release();
                     if (!response.keep_alive()) {
                       self->close_upstream();
                     }
                     // Hop-by-hop: the client connection's fate is decided here, not upstream.
                     response.erase(http::field::connection);
                     response.erase("Keep-Alive");
                     self->respond(std::move(response));
                   });
}

void ProxySession::on_upstream_failure(bool retry_allowed, bool got_bytes) {
  bool was_reused = upstream_reused_;
  close_upstream();
  // A kept-alive upstream connection closed by the app while idle: try once on a new one.
  if (retry_allowed && was_reused && !got_bytes) {
    return forward(false);
  }
  Response bad(http::status::bad_gateway, request_.version());
  bad.set(http::field::content_type, "text/plain");
  bad.body() = "zerodrop run: upstream failed\n";
  bad.prepare_payload();
  bad.keep_alive(false);
  respond(std::move(bad));
}

void ProxySession::respond(Response response) {
  bool keep = request_.keep_alive() && response.keep_alive() && proxy_.shutdown.keep_connection();
  response.keep_alive(keep);
  response.version(request_.version() == 10 ? 10 : 11);
  auto message = std::make_shared<Response>(std::move(response));
  http::async_write(client_, *message,
                    [self = shared_from_this(), message, keep](beast::error_code ec, std::size_t) {
                      self->work_.reset();
                      if (ec || !keep) {
                        if (!ec) {
                          self->connection_->closing_after_response();
                        }
                        return self->close_client();
                      }
                      self->read_request();
                    });
}

void ProxySession::close_client() {
  beast::error_code ignored;
  client_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  client_.socket().close(ignored);
  close_upstream();
}

void ProxySession::close_upstream() {
  beast::error_code ignored;
  upstream_.socket().close(ignored);
  upstream_open_ = false;
}

tcp::endpoint endpoint_of(const ListenAddress& address, const char* what) {
  beast::error_code ec;
  auto ip = asio::ip::make_address(address.host, ec);
  if (ec) {
    throw Error(fmt::format("{}: expected an IP address, got '{}'", what, address.host));
  }
  return {ip, address.port};
}

}  // namespace

FrontProxy::FrontProxy(asio::io_context& io, lifecycle::Shutdown& shutdown,
                       const ListenAddress& listen, const ListenAddress& upstream)
    : impl_(std::make_shared<Impl>(
        Impl{io, shutdown, endpoint_of(upstream, "--to"), tcp::acceptor(io)})) {
  tcp::endpoint endpoint = endpoint_of(listen, "--listen");
  beast::error_code ec;
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    // Not inherited by the app (Asio opens sockets without SOCK_CLOEXEC): an app holding our
    // listener open would keep it accepting after we close it.
    ::fcntl(impl_->acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
    impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
    impl_->acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    throw Error(fmt::format("--listen: cannot listen on {}:{}: {}", listen.host, listen.port,
                            ec.message()));
  }
  lifecycle::close_when_draining(shutdown, impl_->acceptor);
  impl_->accept();
}

FrontProxy::~FrontProxy() {
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
}

unsigned short FrontProxy::port() const {
  beast::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

}  // namespace zerodrop::shim
