// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>

#include <array>
#include <memory>

#include "lab/routers/router_core.h"
#include "lab/routers/socket_trace.h"

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

SocketAddress socket_address(const boost::asio::ip::tcp::endpoint& e) {
  return {htonl(e.address().to_v4().to_uint()), e.port()};
}

enum class Direction { up, down };  // up: client to backend; down: backend to client

// One client connection, bound to one backend for its whole life (conntrack). Records what
// became of the backend connection (RouterCore::connection_fate) before passing it on to the
// client, so that a request's record finds it when the client sees the failure.
class L4Session : public std::enable_shared_from_this<L4Session> {
public:
  L4Session(RouterCore& router, tcp::socket client)
      : router_(router), client_(std::move(client)), backend_(router.io()), timer_(router.io()) {}

  void start() {
    error_code ec;
    client_port_ = client_.remote_endpoint(ec).port();
    const Endpoint* endpoint = router_.choose();
    if (endpoint == nullptr) {
      router_.refused("", "no usable endpoint");  // kube-proxy REJECTs: the client gets a reset
      router_.remember_client(client_port_, "");
      router_.connection_fate(client_port_, record::BackendFate::refused);
      reset_after_first_bytes();
      return;
    }
    router_.remember_client(client_port_, endpoint->pod);
    tcp::endpoint to(asio::ip::make_address(endpoint->ip, ec), endpoint->port);
    pod_ = endpoint->pod;
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
      router_.connection_fate(client_port_, record::BackendFate::refused);
      reset_after_first_bytes();
      return;
    }
    error_code ignored;
    client_.set_option(tcp::no_delay(true), ignored);
    backend_.set_option(tcp::no_delay(true), ignored);
    tcp::endpoint router_end = backend_.local_endpoint(ec);
    tcp::endpoint pod_end = backend_.remote_endpoint(ec);
    if (!ec && router_end.address().is_v4() && pod_end.address().is_v4()) {
      ends_ = {socket_address(pod_end), socket_address(router_end)};
    }
    pump(Direction::up);
    pump(Direction::down);
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

  // The pod ended the backend connection: closed (EOF) or reset, while a request was pending on
  // it or not.
  void backend_ended(record::BackendFate seen) {
    router_.connection_fate(client_port_, judge(seen));
  }

  // Whether the pod ended the connection under a pending request or closed it as idle. The
  // kernel's account, where the router has it, is exact: the pod's exit ended it (the request was
  // in flight), or the pod's own close did: with a reset, the request sat unread in its socket
  // (it took the connection for idle); with a FIN, the request had arrived and been read (every
  // byte acknowledged) or it arrived after the close. Else by timing (kIdleCloseRace).
  record::BackendFate judge(record::BackendFate seen) {
    using record::BackendFate;
    if (!pending_since_) {
      return BackendFate::idle_closed;
    }
    SocketTrace* trace = router_.options().socket_trace;
    std::optional<SocketClose> close =
        trace != nullptr && ends_ ? trace->close_of(ends_->first, ends_->second) : std::nullopt;
    if (!close) {
      return router_.now() - *pending_since_ < kIdleCloseRace ? BackendFate::idle_closed : seen;
    }
    return fate_of_close(*close, seen, request_acknowledged());
  }

  // Every byte written to the pod was acknowledged by its kernel (nothing queued or unacked).
  bool request_acknowledged() {
    int queued = 0;
    return !writing_up_ && ::ioctl(backend_.native_handle(), SIOCOUTQ, &queued) == 0 && queued == 0;
  }

  // Copies one direction until EOF (then half-closes the other side) or an error (then resets
  // both, as a reset crosses conntrack).
  void pump(Direction d) {
    tcp::socket& from = d == Direction::up ? client_ : backend_;
    std::array<char, 16384>& buffer = d == Direction::up ? up_ : down_;
    from.async_read_some(
        asio::buffer(buffer),
        [self = shared_from_this(), d](error_code ec, size_t n) { self->on_read(d, ec, n); });
  }

  void on_read(Direction d, error_code ec, size_t n) {
    if (aborted_) {
      return;
    }
    tcp::socket& to = d == Direction::up ? backend_ : client_;
    if (!ec) {
      if (d == Direction::up && backend_gone_) {
        abort();  // the pod reset the connection before the client spoke: the request is reset
        return;
      }
      client_spoke_ = client_spoke_ || d == Direction::up;
      if (d == Direction::up && !pending_since_) {
        pending_since_ = router_.now();
      } else if (d == Direction::down) {
        pending_since_.reset();  // the pod answers: nothing waits on it until the next request
      }
      std::array<char, 16384>& buffer = d == Direction::up ? up_ : down_;
      writing_up_ = writing_up_ || d == Direction::up;
      asio::async_write(to, asio::buffer(buffer.data(), n),
                        [self = shared_from_this(), d](error_code e, size_t) {
                          self->writing_up_ = self->writing_up_ && d != Direction::up;
                          if (e && d == Direction::up && !self->aborted_) {
                            self->backend_ended(record::BackendFate::reset);
                          }
                          if (e) {
                            self->abort();
                          } else {
                            self->pump(d);
                          }
                        });
      return;
    }
    if (ec == asio::error::eof) {
      if (d == Direction::down) {
        backend_ended(record::BackendFate::closed);
      }
      error_code ignored;
      to.shutdown(tcp::socket::shutdown_send, ignored);
      (d == Direction::up ? up_done_ : down_done_) = true;
      if (up_done_ && down_done_) {
        client_.close(ignored);
        backend_.close(ignored);
      }
      return;
    }
    if (d == Direction::down) {
      backend_ended(record::BackendFate::reset);
      if (!client_spoke_) {
        reset_when_client_speaks();
        return;
      }
    }
    abort();
  }

  // The pod reset a connection the client has not written to: a client whose connect completion
  // runs late (a busy machine) would see a failed connect, with no source port in its record to
  // join on. As for a refusal, the client's request is reset instead (or the connection after 1 s).
  void reset_when_client_speaks() {
    backend_gone_ = true;
    reset(backend_);
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](error_code e) {
      if (!e) {
        self->abort();
      }
    });
  }

  void abort() {
    aborted_ = true;
    timer_.cancel();
    reset(client_);
    reset(backend_);
  }

  RouterCore& router_;
  tcp::socket client_;
  tcp::socket backend_;
  asio::steady_timer timer_;
  std::string pod_;
  uint16_t client_port_ = 0;
  std::optional<Clock::time_point> pending_since_;  // client bytes forwarded, no answer since
  bool timed_out_ = false;
  bool aborted_ = false;       // this session reset both sides: later errors are its own doing
  bool client_spoke_ = false;  // the client has written to this connection
  bool backend_gone_ = false;  // the pod reset it before the client spoke
  bool writing_up_ = false;    // client bytes not yet all handed to the kernel
  // The backend connection's two ends (the pod's, the router's), for the kernel's account.
  std::optional<std::pair<SocketAddress, SocketAddress>> ends_;
  bool up_done_ = false;
  bool down_done_ = false;
  std::array<char, 16384> up_{};
  std::array<char, 16384> down_{};
};

class L4Router final : public RouterCore {
public:
  L4Router(const RouterOptions& options, Recorder* recorder)
      : RouterCore(options, Balance::random, recorder) {}

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
