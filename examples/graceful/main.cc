// graceful: the HTTP/1.1 server that shuts down without dropping a request, built on the
// zerodrop/lifecycle library. At SIGTERM it fails /readyz and keeps serving for --delay (the
// routers drop it meanwhile), then stops accepting, closes idle keep-alive connections and answers
// the rest with `Connection: close`, drains in-flight requests, closes its resources and exits
// before --drain-timeout. /healthz stays 200 throughout.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "base/duration.h"
#include "base/error.h"
#include "base/parse.h"
#include "zerodrop/lifecycle.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace lc = zerodrop::lifecycle;
using tcp = asio::ip::tcp;

// Everything a connection needs from the server.
struct App {
  asio::io_context& io;
  lc::Shutdown& shutdown;
  std::string pod_name;
  zerodrop::Duration work;
};

// One keep-alive connection: read a request, answer it, repeat until either side closes.
class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket socket, App& app) : stream_(std::move(socket)), app_(app) {}

  void start() {
    // Lifecycle: register the connection so that draining can close it while it is idle.
    connection_.emplace(app_.shutdown.track([weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        self->close();
      }
    }));
    read();
  }

private:
  void read() {
    connection_->set_idle(true);
    request_ = {};
    http::async_read(
        stream_, buffer_, request_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      close();
      return;
    }
    connection_->set_idle(false);
    // Lifecycle: /readyz, /healthz and /metrics are answered by the library.
    if (auto probe = lc::answer_probe(app_.shutdown, request_)) {
      write(std::move(*probe));
      return;
    }
    // Lifecycle: count the request in flight until its response is written.
    work_ = app_.shutdown.enter();
    if (!work_) {
      write(reply(http::status::service_unavailable, "stopped\n"));
      return;
    }
    if (app_.work.count() == 0) {
      write(reply(http::status::ok, "ok\n"));
      return;
    }
    auto timer = std::make_shared<asio::steady_timer>(stream_.get_executor(), app_.work);
    timer->async_wait([self = shared_from_this(), timer](beast::error_code) {
      self->write(self->reply(http::status::ok, "ok\n"));
    });
  }

  lc::StringResponse reply(http::status status, std::string body) {
    lc::StringResponse response(status, request_.version());
    response.set(http::field::content_type, "text/plain");
    response.body() = std::move(body);
    response.prepare_payload();
    // Lifecycle: `Connection: close` once the shutdown has begun.
    lc::apply_keep_alive(app_.shutdown, request_, response);
    return response;
  }

  void write(lc::StringResponse response) {
    response.set("X-Pod-Name", app_.pod_name);
    auto message = std::make_shared<lc::StringResponse>(std::move(response));
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message](beast::error_code ec, std::size_t) {
                        self->on_write(ec, message->keep_alive());
                      });
  }

  void on_write(beast::error_code ec, bool keep_alive) {
    work_.reset();
    if (ec) {
      close();
      return;
    }
    if (!keep_alive) {
      connection_->closing_after_response();
      close();
      return;
    }
    read();
  }

  // Half-close first so the client reads the whole response before the FIN.
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  App& app_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  std::optional<lc::Connection> connection_;
  std::optional<lc::Work> work_;
};

void accept(tcp::acceptor& acceptor, App& app) {
  acceptor.async_accept([&acceptor, &app](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) {
      return;
    }
    if (!ec) {
      std::make_shared<Session>(std::move(socket), app)->start();
    }
    accept(acceptor, app);
  });
}

struct Flags {
  std::string host;
  std::string port;
  std::string delay = "5s";
  std::string drain_timeout = "20s";
  std::string work = "0s";
};

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

void log_transitions(lc::Shutdown& shutdown, const zerodrop::Duration& delay) {
  shutdown.on_transition([&shutdown, delay](lc::State state) {
    lc::Counters c = shutdown.counters();
    switch (state) {
      case lc::State::unready:
        std::fprintf(stderr, "graceful: stop signal: /readyz fails; serving %s more\n",
                     zerodrop::format_duration(delay).c_str());
        break;
      case lc::State::draining:
        std::fprintf(stderr,
                     "graceful: draining: listener closed; %zu connections, %zu in flight\n",
                     c.connections, c.in_flight);
        break;
      case lc::State::stopped:
        std::fprintf(stderr, "graceful: stopped (%s): %llu requests served\n",
                     std::string(lc::to_string(c.stop_reason)).c_str(),
                     static_cast<unsigned long long>(c.requests_total));
        break;
      case lc::State::serving:
        break;
    }
  });
}

int serve(const Flags& flags) {
  lc::Options options;
  options.delay = zerodrop::parse_duration(flags.delay, "--delay");
  options.drain_timeout = zerodrop::parse_duration(flags.drain_timeout, "--drain-timeout");
  auto port = static_cast<unsigned short>(zerodrop::parse_integer(flags.port, "--port", 0, 65535));
  beast::error_code ec;
  auto address = asio::ip::make_address(flags.host, ec);
  if (ec) {
    throw zerodrop::Error("--host: expected an IP address, got '" + flags.host + "'");
  }

  lc::Shutdown shutdown(options);
  asio::io_context io;
  App app{io, shutdown, env_or("POD_NAME", "graceful"),
          zerodrop::parse_duration(flags.work, "--work")};
  tcp::acceptor acceptor(io);
  acceptor.open(address.is_v6() ? tcp::v6() : tcp::v4());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind({address, port}, ec);
  if (ec) {
    throw zerodrop::Error("cannot listen on " + flags.host + ":" + flags.port + ": "
                          + ec.message());
  }
  acceptor.listen();

  // The order: fail readiness -> wait -> stop accepting -> drain -> close resources -> exit.
  lc::Driver driver(io, shutdown);
  lc::close_when_draining(shutdown, acceptor);
  log_transitions(shutdown, options.delay);
  shutdown.on_stopped([&io](lc::StopReason) {
    asio::post(io, [&io] {
      std::fprintf(stderr, "graceful: closing resources; exit\n");
      io.stop();
    });
  });
  driver.start();
  std::fprintf(stderr, "graceful: listening on %s:%u\n", flags.host.c_str(),
               acceptor.local_endpoint().port());
  accept(acceptor, app);
  io.run();
  return shutdown.counters().stop_reason == lc::StopReason::deadline ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"graceful: an HTTP server that drains without dropping a request (zerodrop)"};
  Flags flags{env_or("POD_IP", "127.0.0.1"), env_or("PORT", "8080")};
  cli.add_option("--host", flags.host, "address to listen on (env POD_IP)")->capture_default_str();
  cli.add_option("--port", flags.port, "port to listen on, 0 = any (env PORT)")
      ->capture_default_str();
  cli.add_option("--delay", flags.delay, "keep serving this long after failing readiness")
      ->capture_default_str();
  cli.add_option("--drain-timeout", flags.drain_timeout,
                 "hard deadline from the stop signal; exit 1 if reached")
      ->capture_default_str();
  cli.add_option("--work", flags.work, "time each / request takes (to show draining)")
      ->capture_default_str();
  cli.footer(
      "\n/ answers 200 ok; /readyz fails from SIGTERM; /healthz stays 200; /metrics.\n"
      "Example: graceful --port 8080 --delay 5s --drain-timeout 20s");
  CLI11_PARSE(cli, argc, argv);
  try {
    return serve(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graceful: error: %s\n", e.what());
    return 2;
  }
}
