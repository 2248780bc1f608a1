// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <netinet/tcp.h>

#include <array>
#include <memory>

#include "lab/router_core.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Closes with SO_LINGER 0: the peer gets a reset, as a client of kube-proxy does when the
// backend refuses (the SYN-ACK came from the backend, so the refusal arrives as RST).
void reset(tcp::socket& socket) {
  error_code ignored;
  if (socket.is_open()) {
    socket.set_option(asio::socket_base::linger(true, 0), ignored);
    socket.close(ignored);
  }
}

// One client connection, bound to one backend for its whole life (conntrack).
class L4Session : public std::enable_shared_from_this<L4Session> {
public:
  L4Session(RouterCore& router, tcp::socket client)
      : router_(router), client_(std::move(client)), backend_(router.io()), timer_(router.io()) {}

  void start() {
    error_code ec;
    uint16_t client_port = client_.remote_endpoint(ec).port();
    const Endpoint* endpoint = router_.choose();
    if (endpoint == nullptr) {
      router_.refused("", "no usable endpoint");  // kube-proxy REJECTs: the client gets a reset
      reset_after_first_bytes();
      return;
    }
    pod_ = endpoint->pod;
    router_.remember_client(client_port, pod_);
    tcp::endpoint to(asio::ip::make_address(endpoint->ip, ec), endpoint->port);
    timer_.expires_after(router_.options().connect_timeout);
    timer_.async_wait([self = shared_from_this()](error_code e) {
      if (!e) {
        self->timed_out_ = true;
        error_code ignored;
        self->backend_.cancel(ignored);
      }
    });
    backend_.async_connect(to, [self = shared_from_this()](error_code e) { self->connected(e); });
  }

private:
  void connected(error_code ec) {
    timer_.cancel();
    if (ec) {
      router_.refused(pod_, timed_out_ ? "connect timed out" : ec.message());
      reset_after_first_bytes();
      return;
    }
    error_code ignored;
    client_.set_option(tcp::no_delay(true), ignored);
    backend_.set_option(tcp::no_delay(true), ignored);
    pump(client_, backend_, up_, up_done_);
    pump(backend_, client_, down_, down_done_);
  }

  // The client's connect already succeeded (the router accepted it): wait for its request (or
  // 1 s), then reset, so that the client sees its request reset before any response byte and
  // the record carries the connection's source port for the join.
  void reset_after_first_bytes() {
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](error_code e) {
      if (!e) {
        reset(self->client_);
      }
    });
    client_.async_read_some(asio::buffer(up_), [self = shared_from_this()](error_code, size_t) {
      self->timer_.cancel();
      reset(self->client_);
    });
  }

  // Copies `from` to `to` until EOF (then half-closes `to`) or an error (then resets both, as a
  // reset crosses conntrack).
  void pump(tcp::socket& from, tcp::socket& to, std::array<char, 16384>& buffer, bool& done) {
    from.async_read_some(asio::buffer(buffer), [self = shared_from_this(), &from, &to, &buffer,
                                                &done](error_code ec, size_t n) {
      if (!ec) {
        asio::async_write(to, asio::buffer(buffer.data(), n),
                          [self, &from, &to, &buffer, &done](error_code e, size_t) {
                            if (e) {
                              self->abort();
                            } else {
                              self->pump(from, to, buffer, done);
                            }
                          });
        return;
      }
      if (ec == asio::error::eof) {
        error_code ignored;
        to.shutdown(tcp::socket::shutdown_send, ignored);
        done = true;
        if (self->up_done_ && self->down_done_) {
          self->client_.close(ignored);
          self->backend_.close(ignored);
        }
        return;
      }
      self->abort();
    });
  }

  void abort() {
    reset(client_);
    reset(backend_);
  }

  RouterCore& router_;
  tcp::socket client_;
  tcp::socket backend_;
  asio::steady_timer timer_;
  std::string pod_;
  bool timed_out_ = false;
  bool up_done_ = false;
  bool down_done_ = false;
  std::array<char, 16384> up_{};
  std::array<char, 16384> down_{};
};

class L4Router final : public RouterCore {
public:
  using RouterCore::RouterCore;

  ~L4Router() override { stop(); }

  void accept() override {
    acceptor().async_accept([this](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) {
        return;
      }
      if (!ec) {
        std::make_shared<L4Session>(*this, std::move(socket))->start();
      }
      accept();  // EMFILE and friends: keep accepting; the client sees the failure
    });
  }
};

}  // namespace

std::unique_ptr<Router> start_l4(const RouterOptions& options, Recorder* recorder) {
  auto router = std::make_unique<L4Router>(options, recorder);
  router->run();
  return router;
}

}  // namespace zerodrop::lab
