#include "load/transport.h"

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "base/netns.h"
#include "load/plan.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using record::Outcome;

Outcome connect_outcome(const error_code& ec) {
  if (ec == asio::error::connection_refused) {
    return Outcome::connect_refused;
  }
  if (ec == asio::error::timed_out) {
    return Outcome::connect_timeout;
  }
  return Outcome::connect_error;
}

// "certificate verify failed (SSL routines): self-signed certificate": OpenSSL's reason, and
// the verification's when that is what failed.
std::string handshake_error(const error_code& ec, SSL* ssl) {
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    return fmt::format("TLS handshake: {}: {}", ec.message(),
                       X509_verify_cert_error_string(verify));
  }
  return fmt::format("TLS handshake: {}", ec.message());
}

// The first `n` bytes of `buffers` dropped.
Transport::Buffers advance(Transport::Buffers buffers, size_t n) {
  for (asio::const_buffer& b : buffers) {
    size_t used = std::min(n, b.size());
    b += used;
    n -= used;
  }
  return buffers;
}

}  // namespace

Transport::Transport(Worker& worker, const Plan& plan, asio::io_context& io, TransportUser& user)
    : worker_(worker), plan_(plan), io_(io), user_(user), socket_(io) {}

void Transport::open(uint32_t endpoint) {
  close();
  opening_ = true;
  local_port_ = 0;
  endpoint_ = endpoint;
  const asio::ip::tcp::endpoint& to = worker_.endpoint(endpoint_);
  const PlanEndpoint& planned = plan_.endpoints[endpoint_];
  if (planned.tls) {
    tls_ = std::make_shared<asio::ssl::stream<asio::ip::tcp::socket>>(io_, *plan_.tls);
    // OpenSSL checks the name (or address) in the certificate itself, so that a mismatch has its
    // own reason ("IP address mismatch"); SNI carries names only (RFC 6066).
    SSL* ssl = tls_->native_handle();
    const std::string& name = planned.server_name;
    if (planned.server_name_is_address) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, name.c_str());
      SSL_set1_host(ssl, name.c_str());
    }
    if (session_ && session_endpoint_ == endpoint_) {
      SSL_set_session(ssl, session_.get());
    }
  }
  error_code ec;
  if (planned.netns >= 0) {
    int fd = socket_in_namespace(planned.netns, to.protocol().family(), SOCK_STREAM);
    ec = fd < 0 ? error_code(errno, boost::system::system_category()) : error_code();
    if (fd >= 0) {
      socket().assign(to.protocol(), fd, ec);
    }
  } else {
    socket().open(to.protocol(), ec);
  }
  if (ec) {
    // Reported from the event loop, never from inside the worker's dispatch loop.
    asio::post(io_, [this, ec, g = generation_] { on_connect(ec, g); });
    return;
  }
  socket().async_connect(
      to, [this, g = generation_, keep = tls_](const error_code& e) { on_connect(e, g); });
  if (planned.netns >= 0) {
    // Bound by the connect: a refused connect keeps its source port in its record, which the
    // lab's nftables nodes join to the kernel's choice of pod (conntrack).
    error_code ignored;
    local_port_ = socket().local_endpoint(ignored).port();
  }
}

void Transport::on_connect(const error_code& ec, uint32_t generation) {
  if (generation != generation_ || !opening_) {
    return;
  }
  TimePoint now = std::chrono::steady_clock::now();
  if (ec) {
    opening_ = false;
    user_.on_open_failed(connect_outcome(ec), ec.message(), now);
    return;
  }
  worker_.on_opened();
  error_code ignored;
  local_port_ = socket().local_endpoint(ignored).port();
  socket().set_option(asio::ip::tcp::no_delay(true), ignored);
  if (tls_) {
    // The handshake counts against the connect deadline; the request is sent after it.
    tls_->async_handshake(
        asio::ssl::stream_base::client,
        [this, g = generation_, keep = tls_](const error_code& e) { on_handshake(e, g); });
    return;
  }
  socket_.non_blocking(true, ignored);
  opening_ = false;
  user_.on_open(now);
}

void Transport::on_handshake(const error_code& ec, uint32_t generation) {
  if (generation != generation_ || !opening_) {
    return;
  }
  opening_ = false;
  TimePoint now = std::chrono::steady_clock::now();
  if (ec) {
    user_.on_open_failed(Outcome::connect_error, handshake_error(ec, tls_->native_handle()), now);
    return;
  }
  if (plan_.protocol != Protocol::http1) {
    if (std::string mismatch = alpn_mismatch(); !mismatch.empty()) {
      user_.on_open_failed(Outcome::connect_error, mismatch, now);
      return;
    }
  }
  user_.on_open(now);
}

// HTTP/2 over TLS needs the server to pick "h2" by ALPN (RFC 9113 §3.2); empty when it did.
std::string Transport::alpn_mismatch() const {
  const unsigned char* chosen = nullptr;
  unsigned int size = 0;
  SSL_get0_alpn_selected(tls_->native_handle(), &chosen, &size);
  std::string_view protocol(reinterpret_cast<const char*>(chosen), chosen ? size : 0);
  if (protocol == "h2") {
    return {};
  }
  return protocol.empty() ? "ALPN: the server chose no protocol (h2 required)"
                          : fmt::format("ALPN: the server chose {} (h2 required)", protocol);
}

// Writes synchronously on the non-blocking socket (a request almost always fits the socket
// buffer: one syscall, no completion handler) and falls back to an async write for the rest.
bool Transport::send(Buffers buffers) {
  if (tls_) {
    asio::async_write(
        *tls_, buffers,
        [this, g = generation_, keep = tls_](const error_code& e, size_t) { on_write(e, g); });
    return false;
  }
  error_code ec;
  size_t n = socket_.write_some(buffers, ec);
  if (!ec && n == asio::buffer_size(buffers)) {
    return true;
  }
  if (!ec || ec == asio::error::would_block || ec == asio::error::try_again) {
    asio::async_write(socket_, advance(buffers, n),
                      [this, g = generation_](const error_code& e, size_t) { on_write(e, g); });
    return false;
  }
  asio::post(io_, [this, ec, g = generation_] { on_write(ec, g); });
  return false;
}

void Transport::on_write(const error_code& ec, uint32_t generation) {
  if (generation != generation_) {
    return;
  }
  user_.on_written(ec);
}

void Transport::read(asio::mutable_buffer into) {
  reading_ = true;
  auto done = [this, g = generation_](const error_code& ec, size_t n) {
    if (g != generation_) {
      return;
    }
    reading_ = false;
    user_.on_read(ec, n);
  };
  if (tls_) {
    tls_->async_read_some(into,
                          [done, keep = tls_](const error_code& ec, size_t n) { done(ec, n); });
    return;
  }
  socket_.async_read_some(into, done);
}

void Transport::close() {
  ++generation_;
  opening_ = false;
  reading_ = false;
  error_code ignored;
  if (tls_) {
    // TLS 1.3 tickets come after the handshake: by the close, the session is resumable or never.
    // Marked shut down, or freeing the SSL object would make its session unresumable (OpenSSL
    // drops the sessions of connections that end without close_notify).
    SSL* ssl = tls_->native_handle();
    SSL_SESSION* session = SSL_get1_session(ssl);
    if (session != nullptr && SSL_SESSION_is_resumable(session)) {
      SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
      session_.reset(session);
      session_endpoint_ = endpoint_;
    } else if (session != nullptr) {
      SSL_SESSION_free(session);
    }
    tls_->next_layer().close(ignored);  // no close_notify: the run does not wait for it
    tls_.reset();
  }
  socket_.close(ignored);
}

}  // namespace zerodrop::load
