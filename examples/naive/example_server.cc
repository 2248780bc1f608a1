#include "naive/example_server.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unordered_set>

// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"

namespace zerodrop::examples {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class Server;

// One client connection: reads requests one after another and answers each.
class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket socket, Server& server);
  ~Session();

  void start() { read(); }

  // Closes the connection if it waits for a request (used when draining).
  void close_if_idle();

private:
  void read();
  void on_read(beast::error_code ec);
  void respond();
  void on_write(beast::error_code ec, bool keep_alive);

  tcp::socket socket_;
  Server& server_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  asio::steady_timer timer_;
  bool busy_ = false;
};

class Server {
public:
  Server(asio::io_context& io, const ServerOptions& options)
      : io_(io), options_(options), acceptor_(io), signals_(io) {}

  void listen() {
    beast::error_code ec;
    auto address = asio::ip::make_address(options_.host, ec);
    if (ec) {
      throw Error(fmt::format("--host: not an IP address: '{}'", options_.host));
    }
    tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint, ec);
    if (ec) {
      throw Error(
          fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, ec.message()));
    }
    acceptor_.listen(asio::socket_base::max_listen_connections);
    if (options_.on_sigterm == OnSigterm::close_and_drain) {
      signals_.add(SIGTERM);
      signals_.add(SIGINT);
      signals_.async_wait([this](beast::error_code e, int) {
        if (!e) {
          drain();
        }
      });
    }
    accept();
  }

  const ServerOptions& options() const { return options_; }

  bool draining() const { return draining_; }

  void add(Session* s) { sessions_.insert(s); }

  void remove(Session* s) {
    sessions_.erase(s);
    finish_if_drained();
  }

private:
  void accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        return;  // closed by drain(), or out of descriptors: stop accepting
      }
      std::make_shared<Session>(std::move(socket), *this)->start();
      accept();
    });
  }

  // The textbook handler: stop accepting, close idle connections, finish the rest, exit.
  void drain() {
    std::fprintf(stderr, "%s: SIGTERM: closing the listener and draining %zu connections\n",
                 options_.pod_name.c_str(), sessions_.size());
    draining_ = true;
    acceptor_.close();
    for (Session* s : sessions_) {
      s->close_if_idle();
    }
    finish_if_drained();
  }

  void finish_if_drained() {
    if (draining_ && sessions_.empty()) {
      io_.stop();
    }
  }

  asio::io_context& io_;
  const ServerOptions& options_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  std::unordered_set<Session*> sessions_;
  bool draining_ = false;
};

Session::Session(tcp::socket socket, Server& server)
    : socket_(std::move(socket)), server_(server), timer_(socket_.get_executor()) {
  server_.add(this);
}

Session::~Session() {
  server_.remove(this);
}

void Session::close_if_idle() {
  if (!busy_) {
    beast::error_code ignored;
    socket_.close(ignored);
  }
}

void Session::read() {
  request_ = {};
  http::async_read(
      socket_, buffer_, request_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
}

void Session::on_read(beast::error_code ec) {
  if (ec) {
    return;  // peer closed, reset, or closed by drain(): the session ends
  }
  busy_ = true;
  bool slow = request_.target() == "/" && server_.options().delay.count() > 0;
  if (!slow) {
    respond();
    return;
  }
  timer_.expires_after(server_.options().delay);
  timer_.async_wait([self = shared_from_this()](beast::error_code) { self->respond(); });
}

void Session::respond() {
  std::string_view path = request_.target();
  path = path.substr(0, path.find('?'));
  bool known = path == "/" || path == "/readyz" || path == "/healthz";
  response_ = {known ? http::status::ok : http::status::not_found, request_.version()};
  response_.set(http::field::content_type, "text/plain");
  response_.set("X-Pod-Name", server_.options().pod_name);
  response_.body() = known ? "ok\n" : "not found\n";
  bool keep_alive = request_.keep_alive() && !server_.draining();
  response_.keep_alive(keep_alive);
  response_.prepare_payload();
  http::async_write(socket_, response_,
                    [self = shared_from_this(), keep_alive](beast::error_code e, size_t) {
                      self->on_write(e, keep_alive);
                    });
}

void Session::on_write(beast::error_code ec, bool keep_alive) {
  busy_ = false;
  if (ec || !keep_alive || server_.draining()) {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    return;
  }
  read();
}

const char* env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

ServerOptions parse_server_options(int argc, char** argv, OnSigterm on_sigterm) {
  ServerOptions o;
  o.on_sigterm = on_sigterm;
  o.host = env_or("POD_IP", "127.0.0.1");
  o.port = static_cast<uint16_t>(parse_integer(env_or("PORT", "8080"), "PORT", 0, 65535));
  o.pod_name = env_or("POD_NAME", "local");
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) {
      throw Error(fmt::format("{}: expected a value (flags: --host H --port P --delay D)", flag));
    }
    std::string value = argv[++i];
    if (flag == "--host") {
      o.host = value;
    } else if (flag == "--port") {
      o.port = static_cast<uint16_t>(parse_integer(value, "--port", 0, 65535));
    } else if (flag == "--delay") {
      o.delay = parse_duration(value, "--delay");
    } else {
      throw Error(fmt::format("unknown flag '{}' (flags: --host H --port P --delay D)", flag));
    }
  }
  return o;
}

int run_server(const ServerOptions& options) {
  asio::io_context io;
  Server server(io, options);
  server.listen();
  io.run();
  return 0;
}

int server_main(int argc, char** argv, OnSigterm on_sigterm) {
  try {
    return run_server(parse_server_options(argc, argv, on_sigterm));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", argv[0], e.what());
    return 2;
  }
}

}  // namespace zerodrop::examples
