#include "naive/example_server.h"

#include <csignal>
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
using Clock = std::chrono::steady_clock;

class Server;

// Dies by `signal`: its default action, or, where that is dropped (PID 1 of a PID namespace),
// exit status 128 + signal, as a shell reports a death by that signal.
void die_by_signal(int signal) {
  std::signal(signal, SIG_DFL);
  std::raise(signal);
  std::_Exit(128 + signal);
}

// One client connection: HTTP/1.1 requests one after another, keep-alive.
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
      : io_(io),
        options_(options),
        acceptor_(io),
        signals_(io),
        linger_timer_(io),
        started_(Clock::now()) {}

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
    if (options_.on_sigterm == OnSigterm::exit_now) {
      // The default disposition would kill it, except as PID 1 of a container's PID namespace,
      // where the kernel drops a signal that has no handler: die by it explicitly, as Go's
      // runtime does for a server without signal.Notify.
      std::signal(SIGTERM, die_by_signal);
    } else {
      signals_.add(SIGTERM);
      signals_.add(SIGINT);
      signals_.async_wait([this](beast::error_code e, int) {
        if (!e) {
          on_sigterm();
        }
      });
    }
    accept();
  }

  const ServerOptions& options() const { return options_; }

  bool draining() const { return draining_; }

  bool warming() const { return Clock::now() - started_ < options_.warmup; }

  void add(Session* s) { sessions_.insert(s); }

  void remove(Session* s) {
    sessions_.erase(s);
    if (draining_ && sessions_.empty()) {
      io_.stop();
    }
  }

private:
  void accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        return;  // closed at SIGTERM, or out of descriptors: stop accepting
      }
      std::make_shared<Session>(std::move(socket), *this)->start();
      accept();
    });
  }

  void on_sigterm() {
    if (options_.on_sigterm == OnSigterm::linger) {
      // Keeps serving, then stops the loop: the process exits with its keep-alive connections
      // open, never having told a client to close them.
      std::fprintf(stderr, "%s: SIGTERM: serving %s more, then exiting\n",
                   options_.pod_name.c_str(), format_duration(options_.linger).c_str());
      linger_timer_.expires_after(options_.linger);
      linger_timer_.async_wait([this](beast::error_code) { io_.stop(); });
      return;
    }
    // The textbook handler: stop accepting, close idle connections, finish the rest, exit.
    std::fprintf(stderr, "%s: SIGTERM: closing the listener, draining %zu connections\n",
                 options_.pod_name.c_str(), sessions_.size());
    draining_ = true;
    acceptor_.close();
    std::vector<Session*> sessions(sessions_.begin(), sessions_.end());
    for (Session* s : sessions) {
      s->close_if_idle();
    }
    if (sessions_.empty()) {
      io_.stop();
    }
  }

  asio::io_context& io_;
  const ServerOptions& options_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer linger_timer_;
  Clock::time_point started_;
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
    // Cancels the wait for a request instead of closing under it: a request whose bytes the
    // read has already taken is answered (with Connection: close), not dropped unanswered. The
    // cancelled read ends the session, which closes the connection.
    beast::error_code ignored;
    socket_.cancel(ignored);
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
    return;  // peer closed or reset, or closed while draining: the session ends
  }
  busy_ = true;
  if (request_.target() != "/" || server_.options().delay.count() == 0) {
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
  bool unavailable = known && path != "/healthz" && server_.warming();
  http::status status = !known        ? http::status::not_found
                        : unavailable ? http::status::service_unavailable
                                      : http::status::ok;
  response_ = {status, request_.version()};
  response_.set(http::field::content_type, "text/plain");
  response_.set("X-Pod-Name", server_.options().pod_name);
  response_.body() = !known ? "not found\n" : unavailable ? "warming up\n" : "ok\n";
  if (known && !unavailable && path == "/" && server_.options().handler) {
    Reply reply = server_.options().handler();
    response_.result(static_cast<unsigned>(reply.status));
    response_.body() = std::move(reply.body);
  }
  bool keep_alive = request_.keep_alive() && !server_.draining();
  response_.keep_alive(keep_alive);
  response_.prepare_payload();
  http::async_write(socket_, response_,
                    [self = shared_from_this(), keep_alive](beast::error_code e, size_t) {
                      self->busy_ = false;
                      if (e || !keep_alive || self->server_.draining()) {
                        beast::error_code ignored;
                        self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                        return;
                      }
                      self->read();
                    });
}

const char* env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

ServerOptions parse_server_options(int argc, char** argv, ServerOptions o) {
  constexpr const char* kFlags = "flags: --host H --port P --delay D --linger D --warmup D";
  o.host = env_or("POD_IP", o.host.c_str());
  o.port = static_cast<uint16_t>(parse_integer(env_or("PORT", "8080"), "PORT", 0, 65535));
  o.pod_name = env_or("POD_NAME", o.pod_name.c_str());
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) {
      throw Error(fmt::format("{}: expected a value ({})", flag, kFlags));
    }
    std::string value = argv[++i];
    if (flag == "--host") {
      o.host = value;
    } else if (flag == "--port") {
      o.port = static_cast<uint16_t>(parse_integer(value, "--port", 0, 65535));
    } else if (flag == "--delay") {
      o.delay = parse_duration(value, "--delay");
    } else if (flag == "--linger") {
      o.linger = parse_duration(value, "--linger");
    } else if (flag == "--warmup") {
      o.warmup = parse_duration(value, "--warmup");
    } else {
      throw Error(fmt::format("unknown flag '{}' ({})", flag, kFlags));
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

int server_main(int argc, char** argv, const ServerOptions& defaults) {
  try {
    return run_server(parse_server_options(argc, argv, defaults));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", argv[0], e.what());
    return 2;
  }
}

}  // namespace zerodrop::examples
