// A Boost.Beast server built on the library, under keep-alive load, receives a real SIGTERM;
// repeated ZERODROP_SIGTERM_ITERATIONS times (20 here, 1,000 in bench/lifecycle_sigterm.sh).
// Every request sent must get its 200 and the server must stop drained, before the deadline.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>

#include "zerodrop/lifecycle.h"

namespace zerodrop::lifecycle {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// The server side: the few lines a Beast server adds for the library, marked "lifecycle:".
class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket socket, Shutdown& shutdown)
      : stream_(std::move(socket)), shutdown_(shutdown) {}

  void start() {
    // lifecycle: register the connection so draining can close it while idle.
    connection_.emplace(shutdown_.track([weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        self->close();
      }
    }));
    read();
  }

private:
  void read() {
    connection_->set_idle(true);  // lifecycle: idle between requests
    request_ = {};
    http::async_read(stream_, buffer_, request_, [self = shared_from_this()](auto ec, auto) {
      if (ec) {
        return self->close();
      }
      self->connection_->set_idle(false);
      self->respond();
    });
  }

  void respond() {
    auto response = std::make_shared<http::response<http::string_body>>();
    if (auto probe = answer_probe(shutdown_, request_)) {  // lifecycle: /readyz, /healthz
      *response = std::move(*probe);
    } else {
      work_ = shutdown_.enter();  // lifecycle: in flight until written
      response->result(work_ ? http::status::ok : http::status::service_unavailable);
      response->body() = "ok\n";
      response->prepare_payload();
      apply_keep_alive(shutdown_, request_, *response);  // lifecycle: Connection: close
    }
    http::async_write(stream_, *response, [self = shared_from_this(), response](auto ec, auto) {
      self->work_.reset();
      if (ec || !response->keep_alive()) {
        self->connection_->closing_after_response();
        return self->close();
      }
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  Shutdown& shutdown_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  std::optional<Connection> connection_;
  std::optional<Work> work_;
};

void accept(tcp::acceptor& acceptor, Shutdown& shutdown) {
  acceptor.async_accept([&](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open() || ec == asio::error::operation_aborted) {
      return;
    }
    if (!ec) {
      std::make_shared<Session>(std::move(socket), shutdown)->start();
    }
    accept(acceptor, shutdown);
  });
}

// Stands for the routers: once the server is unready, no new connection is routed to it.
struct Router {
  std::shared_mutex mutex;
  bool routed = true;
};

struct Tally {
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::mutex mutex;
  std::string first_error;

  void fail(const std::string& what) {
    ++failed;
    std::lock_guard lock(mutex);
    if (first_error.empty()) {
      first_error = what;
    }
  }
};

// One keep-alive client: requests until the server asks it to close and the router is empty.
void client(unsigned short port, Router& router, Tally& tally) {
  asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  for (;;) {
    beast::error_code ec;
    if (!stream) {
      std::shared_lock lock(router.mutex);
      if (!router.routed) {
        return;
      }
      stream.emplace(io);
      stream->socket().connect({asio::ip::make_address("127.0.0.1"), port}, ec);
      if (ec) {
        return tally.fail("connect: " + ec.message());
      }
    }
    http::request<http::empty_body> request(http::verb::get, "/", 11);
    request.set(http::field::host, "test");
    http::write(*stream, request, ec);
    http::response<http::string_body> response;
    if (!ec) {
      http::read(*stream, buffer, response, ec);
    }
    if (ec || response.result() != http::status::ok || response.body() != "ok\n") {
      return tally.fail("request: " + (ec ? ec.message() : std::to_string(response.result_int())));
    }
    ++tally.ok;
    if (!response.keep_alive()) {
      stream.reset();
      buffer.clear();
    }
  }
}

int iterations() {
  const char* text = std::getenv("ZERODROP_SIGTERM_ITERATIONS");
  return text != nullptr ? std::max(1, std::atoi(text)) : 20;
}

TEST(SigtermLoop, BeastServerUnderLoadDropsNothing) {
  constexpr int kClients = 4;
  int total_ok = 0;
  for (int i = 0; i < iterations(); ++i) {
    Options options;
    options.delay = std::chrono::milliseconds(200);
    options.drain_timeout = std::chrono::seconds(10);
    Shutdown shutdown(options);
    Router router;
    Tally tally;
    asio::io_context io;
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    Driver driver(io, shutdown);
    close_when_draining(shutdown, acceptor);
    shutdown.on_transition([&router](State state) {
      if (state == State::unready) {
        std::unique_lock lock(router.mutex);
        router.routed = false;
      }
    });
    shutdown.on_stopped([&io](StopReason) { asio::post(io, [&io] { io.stop(); }); });
    driver.start();
    accept(acceptor, shutdown);
    std::thread server([&io] { io.run(); });
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back(client, acceptor.local_endpoint().port(), std::ref(router),
                           std::ref(tally));
    }
    // Under load: wait (with a deadline) until requests flow, then the real signal.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (tally.ok < 50 && tally.failed == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
    for (std::thread& t : clients) {
      t.join();
    }
    server.join();
    ASSERT_EQ(tally.failed, 0) << "iteration " << i << ": " << tally.first_error;
    ASSERT_EQ(shutdown.counters().stop_reason, StopReason::drained) << "iteration " << i;
    EXPECT_EQ(driver.signal(), SIGTERM);
    total_ok += tally.ok;
  }
  std::printf("sigterm loop: %d iterations, %d requests, 0 dropped\n", iterations(), total_ok);
}

}  // namespace
}  // namespace zerodrop::lifecycle
