#include "shim/front_proxy.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/listen.h"
#include "http/idempotent.h"
#include "http/proxy_exchange.h"
#include "shim/accept_loop.h"
#include "shim/front_proxy_h2.h"
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

using zerodrop::http::ProxyFailure;

// Bodies are buffered whole. zerodrop run fronts a real app, where uploads of tens of MiB are
// ordinary, so the bound is generous; it exists so that one client cannot take the memory of a
// pod's shim. Over it, a request gets 400 and a response 502.
constexpr std::uint64_t kBodyLimit = 64 * 1024 * 1024;
// nginx's proxy_read_timeout default: an app that has not answered in a minute is stuck.
constexpr auto kUpstreamTimeout = std::chrono::seconds(60);
// Longer than the idle timeout of what usually sits in front of a pod (ingress-nginx's upstream
// keep-alive 60 s, an AWS ALB's 60 s): the side in front, not the app's proxy, closes an idle
// connection, because a close from the server's side races the next request sent on it.
constexpr auto kClientIdleTimeout = std::chrono::minutes(5);

// Whether a request may be sent again on a fresh upstream connection after the reused one failed.
enum class Retry { once, never };

// One client connection and its upstream connection. The forwarding itself is http::exchange;
// the one upstream per client and the retry on a reused connection are this session's policy.
class ProxySession : public std::enable_shared_from_this<ProxySession> {
public:
  ProxySession(tcp::socket client, FrontProxy::Impl& proxy, std::string_view preread);
  void start();

private:
  void read_request();
  void on_request(beast::error_code ec);
  void forward(Retry retry);
  void send(Retry retry);
  void on_exchanged(Retry retry, const zerodrop::http::Exchanged& result);
  void respond();
  void close_client();
  void close_upstream();

  beast::tcp_stream client_;
  beast::tcp_stream upstream_;
  FrontProxy::Impl& proxy_;
  beast::flat_buffer client_buffer_;
  beast::flat_buffer upstream_buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Request request_;
  zerodrop::http::ClientSide client_side_;
  Response response_;
  bool upstream_open_ = false;
  bool upstream_reused_ = false;
  std::optional<lifecycle::Connection> connection_;
  std::optional<lifecycle::Work> work_;
};

// A new client connection's first bytes, until they tell HTTP/2's preface (h2c by prior
// knowledge) from an HTTP/1.1 request: both share the one port, as they do on the app's.
struct Sniffed {
  explicit Sniffed(tcp::socket socket) : stream(std::move(socket)) {}

  beast::tcp_stream stream;
  std::string bytes;
  std::array<char, zerodrop::http::kH2Preface.size()> chunk{};
};

}  // namespace

struct FrontProxy::Impl {
  Impl(asio::io_context& context, lifecycle::Shutdown& machine, tcp::endpoint app,
       tcp::acceptor listener, Duration h2_goaway_delay)
      : io(context),
        shutdown(machine),
        upstream(app),
        acceptor(std::move(listener)),
        h2(context, machine, app, h2_goaway_delay) {}

  asio::io_context& io;
  lifecycle::Shutdown& shutdown;
  tcp::endpoint upstream;
  tcp::acceptor acceptor;
  FrontH2 h2;

  void accept() {
    accept_loop(acceptor, [this](tcp::socket socket) {
      sniff(std::make_shared<Sniffed>(std::move(socket)));
    });
  }

  void sniff(std::shared_ptr<Sniffed> s) {
    size_t want = zerodrop::http::kH2Preface.size() - s->bytes.size();
    s->stream.expires_after(kClientIdleTimeout);
    s->stream.async_read_some(asio::buffer(s->chunk.data(), want),
                              [this, s](beast::error_code ec, size_t n) {
                                s->bytes.append(s->chunk.data(), n);
                                if (!ec) {
                                  on_sniffed(std::move(s));
                                }  // else closed or idle before a request
                              });
  }

  void on_sniffed(std::shared_ptr<Sniffed> s) {
    if (!zerodrop::http::kH2Preface.starts_with(s->bytes)) {
      s->stream.expires_never();
      std::make_shared<ProxySession>(s->stream.release_socket(), *this, s->bytes)->start();
    } else if (s->bytes.size() == zerodrop::http::kH2Preface.size()) {
      s->stream.expires_never();
      h2.serve(s->stream.release_socket(), std::move(s->bytes));
    } else {
      sniff(std::move(s));
    }
  }
};

namespace {

ProxySession::ProxySession(tcp::socket client, FrontProxy::Impl& proxy, std::string_view preread)
    : client_(std::move(client)), upstream_(proxy.io), proxy_(proxy) {
  client_buffer_.commit(
      asio::buffer_copy(client_buffer_.prepare(preread.size()), asio::buffer(preread)));
}

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
      zerodrop::http::ClientSide side{};  // the request is unreadable: an HTTP/1.1 answer
      response_ = zerodrop::http::own_response(http::status::bad_request,
                                               "bad request: " + ec.message() + "\n", side,
                                               zerodrop::http::ClientConnection::close);
      client_side_ = side;
      return respond();
    }
    return close_client();
  }
  connection_->set_idle(false);
  client_.expires_never();
  request_ = parser_->release();
  client_side_ = zerodrop::http::client_side(request_);
  zerodrop::http::prepare_upstream_request(request_);
  work_ = proxy_.shutdown.enter();
  forward(zerodrop::http::idempotent(request_.method()) ? Retry::once : Retry::never);
}

void ProxySession::forward(Retry retry) {
  if (upstream_open_) {
    upstream_reused_ = true;
    return send(retry);
  }
  upstream_reused_ = false;
  upstream_.expires_after(kUpstreamTimeout);
  upstream_.async_connect(proxy_.upstream, [self = shared_from_this()](beast::error_code ec) {
    if (ec) {
      return self->on_exchanged(Retry::never, {zerodrop::http::connect_failure(ec)});
    }
    self->upstream_open_ = true;
    self->send(Retry::never);
  });
}

void ProxySession::send(Retry retry) {
  zerodrop::http::exchange(
      upstream_, upstream_buffer_, request_, response_, {kBodyLimit, kUpstreamTimeout},
      [self = shared_from_this(), retry](auto result) { self->on_exchanged(retry, result); });
}

void ProxySession::on_exchanged(Retry retry, const zerodrop::http::Exchanged& result) {
  if (result.failure == ProxyFailure::none) {
    if (!result.upstream_keep_alive) {
      close_upstream();
    }
    // An app that closes its connection asks for the client's to close too; otherwise the
    // client connection's fate is decided here (respond), not upstream.
    auto connection = result.upstream_keep_alive ? zerodrop::http::ClientConnection::keep
                                                 : zerodrop::http::ClientConnection::close;
    zerodrop::http::prepare_client_response(response_, client_side_, connection);
    return respond();
  }
  bool was_reused = upstream_reused_;
  close_upstream();
  // A kept-alive upstream connection closed by the app while idle: try once on a new one.
  if (retry == Retry::once && was_reused && !result.got_bytes) {
    return forward(Retry::never);
  }
  // Every failure is a 502 here (a timeout too): the contract of zerodrop run's proxy.
  response_ =
      zerodrop::http::own_response(http::status::bad_gateway, "zerodrop run: upstream failed\n",
                                   client_side_, zerodrop::http::ClientConnection::close);
  respond();
}

void ProxySession::respond() {
  bool keep =
      client_side_.keep_alive && response_.keep_alive() && proxy_.shutdown.keep_connection();
  response_.keep_alive(keep);
  zerodrop::http::write_response(client_, response_, client_side_,
                                 [self = shared_from_this(), keep](beast::error_code ec) {
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
                       const ListenAddress& listen, const ListenAddress& upstream,
                       Duration h2_goaway_delay) {
  tcp::endpoint app = endpoint_of(upstream, "--to");
  impl_ = std::make_shared<Impl>(
      io, shutdown, app, open_listener(io, listen.host, listen.port, "--listen"), h2_goaway_delay);
  lifecycle::close_when_draining(shutdown, impl_->acceptor);
  shutdown.on_transition([weak = std::weak_ptr(impl_)](lifecycle::State state) {
    if (state != lifecycle::State::unready) {
      return;
    }
    if (auto impl = weak.lock()) {
      asio::dispatch(impl->io, [weak] {
        if (auto alive = weak.lock()) {
          alive->h2.stop_signal();
        }
      });
    }
  });
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
