#include "shim/ready_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/listen.h"
#include "base/text.h"
#include "http/url.h"
#include "shim/accept_loop.h"
#include "zerodrop/lifecycle/beast.h"
#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::shim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Verdict = std::function<void(bool ok, std::string detail)>;

constexpr auto kAppTimeout = std::chrono::seconds(1);

// One GET of the app's readiness URL; `done` gets whether it answered 2xx/3xx in time.
void check_app(asio::io_context& io, const HttpUrl& url, Verdict done) {
  auto stream = std::make_shared<beast::tcp_stream>(io);
  auto resolver = std::make_shared<tcp::resolver>(io);
  resolver->async_resolve(
      url.host, url.port, [stream, resolver, url, done](beast::error_code ec, auto results) {
        if (ec) {
          return done(false, "app readiness: " + ec.message());
        }
        stream->expires_after(kAppTimeout);
        stream->async_connect(results, [stream, url, done](beast::error_code ec2, auto) {
          if (ec2) {
            return done(false, "app readiness: " + ec2.message());
          }
          auto request =
              std::make_shared<http::request<http::empty_body>>(http::verb::get, url.target, 11);
          request->set(http::field::host, url.host);
          request->keep_alive(false);
          http::async_write(
              *stream, *request, [stream, request, done](beast::error_code ec3, auto) {
                if (ec3) {
                  return done(false, "app readiness: " + ec3.message());
                }
                auto buffer = std::make_shared<beast::flat_buffer>();
                auto response = std::make_shared<http::response<http::string_body>>();
                http::async_read(*stream, *buffer, *response,
                                 [stream, buffer, response, done](beast::error_code ec4, auto) {
                                   if (ec4) {
                                     return done(false, "app readiness: " + ec4.message());
                                   }
                                   unsigned status = response->result_int();
                                   done(status >= 200 && status < 400,
                                        fmt::format("app readiness: {}", status));
                                 });
              });
        });
      });
}

// One probe connection: read a request, answer it, repeat while the prober keeps it alive.
class ProbeSession : public std::enable_shared_from_this<ProbeSession> {
public:
  ProbeSession(tcp::socket socket, ReadyServer::Impl& server);
  void read();

private:
  void answer();
  void reply(http::status status, std::string body);

  beast::tcp_stream stream_;
  ReadyServer::Impl& server_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
};

}  // namespace

struct ReadyServer::Impl {
  asio::io_context& io;
  const lifecycle::Shutdown& shutdown;
  std::optional<HttpUrl> app_ready;
  tcp::acceptor acceptor;

  void accept() {
    accept_loop(acceptor, [this](tcp::socket socket) {
      std::make_shared<ProbeSession>(std::move(socket), *this)->read();
    });
  }
};

namespace {

ProbeSession::ProbeSession(tcp::socket socket, ReadyServer::Impl& server)
    : stream_(std::move(socket)), server_(server) {}

void ProbeSession::read() {
  request_ = {};
  stream_.expires_after(std::chrono::seconds(30));  // a prober that says nothing is dropped
  http::async_read(stream_, buffer_, request_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                     if (!ec) {
                       self->answer();
                     }
                   });
}

void ProbeSession::answer() {
  std::string_view target(request_.target().data(), request_.target().size());
  if (target.substr(0, target.find('?')) == "/healthz") {
    return reply(http::status::ok, "alive\n");
  }
  if (!server_.shutdown.ready()) {
    return reply(http::status::service_unavailable, "shutting down\n");
  }
  if (!server_.app_ready) {
    return reply(http::status::ok, "ready\n");
  }
  check_app(
      server_.io, *server_.app_ready, [self = shared_from_this()](bool ok, std::string detail) {
        // The signal may have arrived while the app was asked: it wins.
        bool ready = ok && self->server_.shutdown.ready();
        self->reply(ready ? http::status::ok : http::status::service_unavailable, detail + "\n");
      });
}

void ProbeSession::reply(http::status status, std::string body) {
  auto response = std::make_shared<http::response<http::string_body>>(status, request_.version());
  response->set(http::field::content_type, "text/plain");
  response->body() = std::move(body);
  response->prepare_payload();
  response->keep_alive(request_.keep_alive());
  http::async_write(stream_, *response,
                    [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
                      if (!ec && response->keep_alive()) {
                        self->read();
                      } else {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
                      }
                    });
}

}  // namespace

// The load engine's URL parser (zerodrop::http, not the Beast alias above) checks the rest: a
// host, a port in range, no credentials.
HttpUrl parse_http_url(const std::string& text, const std::string& what) {
  if (!equals_ignore_case(std::string_view(text).substr(0, 7), "http://")) {
    throw Error(fmt::format("{}: expected an http:// URL, got '{}'", what, text));
  }
  try {
    zerodrop::http::Url url = zerodrop::http::parse_url(text);
    return HttpUrl{url.host, std::to_string(url.port), url.target};
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", what, e.what()));
  }
}

ReadyServer::ReadyServer(asio::io_context& io, const lifecycle::Shutdown& shutdown,
                         const ListenAddress& listen, std::optional<HttpUrl> app_ready)
    : impl_(
        std::make_shared<Impl>(Impl{io, shutdown, std::move(app_ready),
                                    open_listener(io, listen.host, listen.port, "--ready-port")})) {
  impl_->accept();
}

ReadyServer::~ReadyServer() {
  close();
}

unsigned short ReadyServer::port() const {
  beast::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

void ReadyServer::close() {
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
}

}  // namespace zerodrop::shim
