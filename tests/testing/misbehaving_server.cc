#include "testing/misbehaving_server.h"

#include <sys/socket.h>

#include <array>
#include <stdexcept>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

namespace zerodrop::testing {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

constexpr std::array<std::string_view, 22> kNames = {
    "ok",           "status",          "chunked",         "slow",         "refuse",
    "reset",        "close",           "reset-mid-body",  "truncated",    "stall",
    "huge-headers", "endless-headers", "invalid-chunked", "endless-body", "garbage",
    "backlog-full", "head-length",     "interim",         "echo",         "slow-reset",
    "slow-close",   "close-reused",
};
static_assert(kNames.size() == static_cast<size_t>(Behaviour::close_reused) + 1,
              "one name per Behaviour");

bool equals_ignore_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

// The Content-Length of a request head ("\r\n"-separated lines), 0 when absent.
size_t content_length(std::string_view head) {
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string_view::npos) {
    pos += 2;
    std::string_view line = head.substr(pos, head.find("\r\n", pos) - pos);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos
        && equals_ignore_case(line.substr(0, colon), "content-length")) {
      return std::strtoull(std::string(line.substr(colon + 1)).c_str(), nullptr, 10);
    }
  }
  return 0;
}

std::string reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Status";
  }
}

}  // namespace

std::optional<Behaviour> behaviour_from_string(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) {
      return static_cast<Behaviour>(i);
    }
  }
  return std::nullopt;
}

std::string_view to_string(Behaviour behaviour) {
  return kNames[static_cast<size_t>(behaviour)];
}

std::vector<std::string_view> behaviour_names() {
  return {kNames.begin(), kNames.end()};
}

struct MisbehavingServer::Impl {
  ServerOptions options;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  uint16_t port = 0;
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> connections{0};
  std::vector<tcp::socket> fillers;  // backlog_full: the connections that fill the queue
  std::thread thread;

  awaitable<void> accept_loop();
  awaitable<void> session(tcp::socket socket);
  awaitable<bool> read_request(tcp::socket& socket, std::string& buffer, std::string& head);
  awaitable<bool> respond(tcp::socket& socket, const std::string& head);
  awaitable<void> write(tcp::socket& socket, std::string_view bytes);
  awaitable<void> pause(std::chrono::milliseconds d);
  std::string response(int status, std::string_view body) const;
};

std::string MisbehavingServer::Impl::response(int status, std::string_view body) const {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Length: {}\r\nX-Pod-Name: {}\r\n\r\n{}", status,
                     reason(status), body.size(), options.name, body);
}

awaitable<void> MisbehavingServer::Impl::accept_loop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
    if (ec) {
      co_return;
    }
    ++connections;
    asio::co_spawn(io, session(std::move(socket)), asio::detached);
  }
}

awaitable<void> MisbehavingServer::Impl::session(tcp::socket socket) {
  std::string buffer;
  std::string head;
  for (uint64_t n = 1; co_await read_request(socket, buffer, head); ++n) {
    ++requests;
    if (options.behaviour == Behaviour::close_reused && n > 1) {
      boost::system::error_code ignored;
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      co_return;
    }
    if (!co_await respond(socket, head)) {
      co_return;
    }
  }
}

// Reads one request head (kept in `head`) and its Content-Length body; false at EOF or on error.
awaitable<bool> MisbehavingServer::Impl::read_request(tcp::socket& socket, std::string& buffer,
                                                      std::string& head) {
  auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer, 1 << 20),
                                                 "\r\n\r\n", use_tuple);
  if (ec) {
    co_return false;
  }
  head.assign(buffer, 0, n);
  size_t body = content_length(head);
  if (buffer.size() < n + body) {
    auto [ec2, m] =
        co_await asio::async_read(socket, asio::dynamic_buffer(buffer),
                                  asio::transfer_exactly(n + body - buffer.size()), use_tuple);
    if (ec2) {
      co_return false;
    }
  }
  buffer.erase(0, n + body);
  co_return true;
}

awaitable<void> MisbehavingServer::Impl::write(tcp::socket& socket, std::string_view bytes) {
  co_await asio::async_write(socket, asio::buffer(bytes), use_tuple);
}

awaitable<void> MisbehavingServer::Impl::pause(std::chrono::milliseconds d) {
  asio::steady_timer timer(io, d);
  co_await timer.async_wait(use_tuple);
}

// Answers one request (`request` is its head) as the behaviour says; false when the connection is
// done.
awaitable<bool> MisbehavingServer::Impl::respond(tcp::socket& socket, const std::string& request) {
  boost::system::error_code ignored;
  std::string head = fmt::format("HTTP/1.1 200 OK\r\nX-Pod-Name: {}\r\n", options.name);
  switch (options.behaviour) {
    case Behaviour::ok:
    case Behaviour::refuse:
    case Behaviour::close_reused:
      co_await write(socket, response(200, "ok"));
      co_return true;
    case Behaviour::status:
      co_await write(socket, response(options.status, "status"));
      co_return true;
    case Behaviour::chunked:
      co_await write(socket, head + "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n");
      co_return true;
    case Behaviour::slow:
      co_await pause(options.delay);
      co_await write(socket, response(200, "ok"));
      co_return true;
    case Behaviour::slow_reset:
      co_await pause(options.delay);
      [[fallthrough]];
    case Behaviour::reset:
      socket.set_option(asio::socket_base::linger(true, 0), ignored);
      socket.close(ignored);
      co_return false;
    case Behaviour::slow_close:
      co_await pause(options.delay);
      [[fallthrough]];
    case Behaviour::close:
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
      co_return false;
    case Behaviour::reset_mid_body:
      co_await write(socket, head + "Content-Length: 100\r\n\r\n0123456789");
      co_await pause(options.delay);  // lets the client read the part before the reset
      socket.set_option(asio::socket_base::linger(true, 0), ignored);
      socket.close(ignored);
      co_return false;
    case Behaviour::truncated:
      co_await write(socket, head + "Content-Length: 100\r\n\r\n0123456789");
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
      co_return false;
    case Behaviour::stall: {
      std::array<char, 4096> sink;
      for (;;) {  // holds the connection until the client gives up
        auto [ec, n] = co_await socket.async_read_some(asio::buffer(sink), use_tuple);
        if (ec) {
          co_return false;
        }
      }
    }
    case Behaviour::huge_headers:
      co_await write(socket, head + "X-Huge: " + std::string(1 << 20, 'a') + "\r\n\r\n");
      co_return false;
    case Behaviour::endless_headers: {
      co_await write(socket, head);
      std::string lines;
      for (int i = 0; i < 64; ++i) {
        lines += fmt::format("X-Endless-{}: {}\r\n", i, std::string(48, 'b'));
      }
      for (;;) {
        auto [ec, n] = co_await asio::async_write(socket, asio::buffer(lines), use_tuple);
        if (ec) {
          co_return false;
        }
      }
    }
    case Behaviour::invalid_chunked:
      co_await write(socket, head + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
      co_return false;
    case Behaviour::endless_body: {
      co_await write(socket, head + "Content-Length: 1000000000000\r\n\r\n");
      std::string chunk(1024, 'c');
      for (;;) {
        auto [ec, n] = co_await asio::async_write(socket, asio::buffer(chunk), use_tuple);
        if (ec) {
          co_return false;
        }
        co_await pause(std::chrono::milliseconds(5));
      }
    }
    case Behaviour::garbage:
      co_await write(socket, "SSH-2.0-OpenSSH_9.2\r\n\r\n");
      co_return false;
    case Behaviour::backlog_full:
      co_return false;  // never accepted
    case Behaviour::head_length: {
      // Built before the co_await: g++ 12 destroys a ?: temporary inside one twice.
      std::string answer = head + "Content-Length: 2\r\n\r\n";
      if (!request.starts_with("HEAD ")) {
        answer = response(200, "ok");
      }
      co_await write(socket, answer);
      co_return true;
    }
    case Behaviour::interim:
      co_await write(socket,
                     "HTTP/1.1 100 Continue\r\n\r\n"
                     "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                         + response(200, "ok"));
      co_return true;
    case Behaviour::echo:
      co_await write(socket, fmt::format("{}Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
                                         "Keep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\n"
                                         "X-Zerodrop-Router-Error: bad_response\r\n"
                                         "Content-Length: {}\r\n\r\n{}",
                                         head, request.size(), request));
      co_return true;
  }
  co_return false;
}

MisbehavingServer::MisbehavingServer(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  tcp::endpoint at(asio::ip::make_address(impl_->options.host), impl_->options.port);
  impl_->acceptor.open(at.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(at);
  impl_->port = impl_->acceptor.local_endpoint().port();
  if (impl_->options.behaviour == Behaviour::refuse) {
    impl_->acceptor.close();  // bound, never listening: connects are refused
    return;
  }
  if (impl_->options.behaviour == Behaviour::backlog_full) {
    // Linux drops a SYN when the accept queue is full; a queue of one, filled by our own
    // connections and never accepted, makes every client's handshake time out (loopback only).
    impl_->acceptor.listen(0);
    for (int i = 0; i < 2; ++i) {
      tcp::socket& s = impl_->fillers.emplace_back(impl_->io);
      s.open(at.protocol());
      s.non_blocking(true);
      // ::connect, not Asio's, which would wait for the handshake that never completes.
      tcp::endpoint to(at.address(), impl_->port);
      (void)::connect(s.native_handle(), to.data(), static_cast<socklen_t>(to.size()));
    }
    return;
  }
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

MisbehavingServer::~MisbehavingServer() {
  impl_->io.stop();
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  }
}

uint16_t MisbehavingServer::port() const {
  return impl_->port;
}

std::string MisbehavingServer::url(std::string_view path) const {
  return fmt::format("http://{}:{}{}", impl_->options.host, impl_->port, path);
}

uint64_t MisbehavingServer::requests() const {
  return impl_->requests.load();
}

uint64_t MisbehavingServer::connections() const {
  return impl_->connections.load();
}

}  // namespace zerodrop::testing
