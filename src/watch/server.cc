#include "watch/server.h"

#include <sys/socket.h>

#include <list>
#include <mutex>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/listen.h"
#include "base/parse.h"

namespace zerodrop::watch {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// The open connections, so the destructor can shut them down and join their threads.
struct HttpServer::Connections {
  struct One {
    explicit One(tcp::socket s) : socket(std::move(s)) {}

    tcp::socket socket;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  std::mutex mutex;
  std::list<One> open;

  // Joins the threads of connections that have ended.
  void reap() {
    std::lock_guard lock(mutex);
    for (auto it = open.begin(); it != open.end();) {
      if (it->done.load()) {
        it->thread.join();
        it = open.erase(it);
      } else {
        ++it;
      }
    }
  }
};

namespace {

void serve(tcp::socket& socket, const HttpServer::Handler& handler) {
  // A receive timeout: an idle keep-alive connection ends after 60 s.
  timeval tv{60, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  boost::beast::flat_buffer buffer;
  for (;;) {
    boost::system::error_code ec;
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(16 << 20);
    bhttp::read(socket, buffer, parser, ec);
    if (ec) {
      return;
    }
    auto& req = parser.get();
    HttpAnswer answer;
    try {
      answer = handler(
          {std::string(req.method_string()), std::string(req.target()), std::move(req.body())});
    } catch (const std::exception& e) {
      answer = {400, "text/plain; charset=utf-8", std::string(e.what()) + "\n"};
    }
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(answer.status), 11};
    res.set(bhttp::field::content_type, answer.content_type);
    res.set(bhttp::field::server, "zerodrop-watch");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(answer.body);
    res.prepare_payload();
    bhttp::write(socket, res, ec);
    if (ec || !res.keep_alive()) {
      socket.shutdown(tcp::socket::shutdown_both, ec);
      return;
    }
  }
}

}  // namespace

std::pair<std::string, uint16_t> parse_listen(const std::string& text) {
  size_t colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "0.0.0.0" : text.substr(0, colon);
  std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  if (host.empty()) {
    host = "0.0.0.0";
  }
  if (host.starts_with('[') && host.ends_with(']')) {
    host = host.substr(1, host.size() - 2);
  }
  return {host, static_cast<uint16_t>(parse_integer(port, "--listen", 0, 65535))};
}

HttpServer::HttpServer(const std::string& host, uint16_t port, Handler handler)
    : handler_(std::move(handler)),
      acceptor_(open_listener(io_, host, port, "--listen")),
      connections_(std::make_unique<Connections>()) {
  port_ = acceptor_.local_endpoint().port();
  thread_ = std::thread([this] { accept_loop(); });
}

void HttpServer::accept_loop() {
  for (;;) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    acceptor_.accept(socket, ec);
    if (stopping_.load()) {
      return;
    }
    if (ec) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    connections_->reap();
    std::lock_guard lock(connections_->mutex);
    auto& one = connections_->open.emplace_back(std::move(socket));
    one.thread = std::thread([this, &one] {
      serve(one.socket, handler_);
      one.done.store(true);
    });
  }
}

HttpServer::~HttpServer() {
  stopping_.store(true);
  ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
  boost::system::error_code ec;
  acceptor_.close(ec);
  thread_.join();
  std::lock_guard lock(connections_->mutex);
  for (auto& one : connections_->open) {
    ::shutdown(one.socket.native_handle(), SHUT_RDWR);
  }
  for (auto& one : connections_->open) {
    one.thread.join();
  }
}

}  // namespace zerodrop::watch
