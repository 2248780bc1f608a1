#include "load/connection.h"

#include <algorithm>
#include <cstring>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "http/proxy_failure.h"
#include "load/plan.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using record::Outcome;

// Twice the longest line the parser accepts: after a parse, at most one incomplete line stays.
constexpr size_t kBufferSize = 16 * 1024;
static_assert(kBufferSize > http::ParserLimits{}.max_line + 1);

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

}  // namespace

Connection::Connection(Worker& worker, const Plan& plan, asio::io_context& io)
    : worker_(worker),
      plan_(plan),
      io_(io),
      socket_(io),
      parser_({worker.options().backend_header, http::kRouterErrorHeader}),
      buffer_(new char[kBufferSize]),
      head_(new char[plan.max_head]) {
  error_.reserve(64);
}

std::optional<TimePoint> Connection::sent() const {
  return has_sent_ ? std::optional(sent_) : std::nullopt;
}

std::optional<TimePoint> Connection::first_byte() const {
  return has_first_byte_ ? std::optional(first_byte_) : std::nullopt;
}

void Connection::start(const Request& request, TimePoint now) {
  request_ = request;
  has_sent_ = has_first_byte_ = leftover_ = false;
  error_.clear();
  parser_.reset(plan_.targets[request.target].body);
  if (state_ == State::closed) {
    open(now);
    return;
  }
  reused_ = true;
  send(now);
}

void Connection::open(TimePoint now) {
  close_socket();
  state_ = State::connecting;
  reused_ = false;
  requests_ = 0;
  local_port_ = 0;
  endpoint_ = plan_.targets[request_.target].endpoint;
  deadline_ = now + worker_.options().connect_timeout;
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
  socket().open(to.protocol(), ec);
  if (ec) {
    // Reported from the event loop, never from inside the worker's dispatch loop.
    asio::post(io_, [this, ec, g = generation_] { on_connect(ec, g); });
    return;
  }
  socket().async_connect(
      to, [this, g = generation_, keep = tls_](const error_code& e) { on_connect(e, g); });
}

void Connection::on_connect(const error_code& ec, uint32_t generation) {
  if (generation != generation_ || state_ != State::connecting) {
    return;
  }
  TimePoint now = std::chrono::steady_clock::now();
  if (ec) {
    error_ = ec.message();
    finish(connect_outcome(ec), 0, now, Reuse::no);
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
  send(now);
}

void Connection::on_handshake(const error_code& ec, uint32_t generation) {
  if (generation != generation_ || state_ != State::connecting) {
    return;
  }
  TimePoint now = std::chrono::steady_clock::now();
  if (ec) {
    error_ = handshake_error(ec, tls_->native_handle());
    finish(Outcome::connect_error, 0, now, Reuse::no);
    return;
  }
  send(now);
}

void Connection::send(TimePoint now) {
  state_ = State::busy;
  ++requests_;
  const PlanTarget& target = plan_.targets[request_.target];
  uint64_t max = worker_.options().max_requests_per_connection;
  last_ = worker_.options().keepalive == Keepalive::off || (max != 0 && requests_ >= max);
  const http::RequestTemplate& head = last_ ? target.close : target.keep_alive;
  head.write(head_.get(), request_.seq);
  head_size_ = head.size();
  written_ = 0;
  sent_ = now;
  has_sent_ = true;
  deadline_ = now + worker_.options().timeout;
  write_some();
  if (!reading_ && state_ == State::busy) {
    read();
  }
}

std::array<asio::const_buffer, 2> Connection::unsent_buffers() const {
  size_t in_head = std::min(written_, head_size_);
  size_t in_body = std::min(written_ - in_head, plan_.body.size());
  return {asio::const_buffer(head_.get() + in_head, head_size_ - in_head),
          asio::const_buffer(plan_.body.data() + in_body, plan_.body.size() - in_body)};
}

// Writes synchronously on the non-blocking socket (a request almost always fits the socket
// buffer: one syscall, no completion handler) and falls back to an async write for the rest.
void Connection::write_some() {
  if (tls_) {
    asio::async_write(
        *tls_, unsent_buffers(),
        [this, g = generation_, keep = tls_](const error_code& e, size_t) { on_write(e, g); });
    return;
  }
  error_code ec;
  size_t n = socket_.write_some(unsent_buffers(), ec);
  written_ += n;
  if (!ec && written_ == head_size_ + plan_.body.size()) {
    return;
  }
  if (!ec || ec == asio::error::would_block || ec == asio::error::try_again) {
    asio::async_write(socket_, unsent_buffers(),
                      [this, g = generation_](const error_code& e, size_t) { on_write(e, g); });
    return;
  }
  asio::post(io_, [this, ec, g = generation_] { on_write(ec, g); });
}

void Connection::on_write(const error_code& ec, uint32_t generation) {
  if (generation != generation_ || state_ != State::busy || !ec) {
    return;
  }
  fail_transport(ec, std::chrono::steady_clock::now());
}

void Connection::read() {
  reading_ = true;
  auto into = asio::buffer(buffer_.get() + filled_, kBufferSize - filled_);
  if (tls_) {
    tls_->async_read_some(into, [this, g = generation_, keep = tls_](
                                    const error_code& ec, size_t n) { on_read(ec, n, g); });
    return;
  }
  socket_.async_read_some(
      into, [this, g = generation_](const error_code& ec, size_t n) { on_read(ec, n, g); });
}

void Connection::on_read(const error_code& ec, size_t n, uint32_t generation) {
  if (generation != generation_) {
    return;
  }
  reading_ = false;
  if (state_ == State::idle) {
    // The server closed a kept-alive connection between requests (or sent bytes unasked): a
    // graceful server does this when it drains; it costs no request.
    close_socket();
    worker_.on_closed(*this, std::chrono::steady_clock::now());
    return;
  }
  TimePoint now = std::chrono::steady_clock::now();
  if (n > 0) {
    if (!has_first_byte_) {
      first_byte_ = now;
      has_first_byte_ = true;
    }
    filled_ += n;
    consume();
    if (parser_.state() != http::ResponseParser::State::incomplete) {
      respond(now, Reuse::yes);
    } else {
      read();
    }
  } else if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    // A TLS server that closes without close_notify ends a close-delimited body all the same.
    on_eof(now);
  } else if (ec) {
    fail_transport(ec, now);
  } else {
    read();
  }
}

void Connection::consume() {
  size_t used = parser_.feed(std::string_view(buffer_.get(), filled_));
  if (parser_.state() == http::ResponseParser::State::done) {
    leftover_ = used < filled_;
    filled_ = 0;
    return;
  }
  if (used > 0 && used < filled_) {
    std::memmove(buffer_.get(), buffer_.get() + used, filled_ - used);
  }
  filled_ -= used;
}

void Connection::respond(TimePoint now, Reuse reuse) {
  if (parser_.state() == http::ResponseParser::State::failed) {
    error_ = parser_.error();
    finish(Outcome::protocol_error, parser_.status(), now, Reuse::no);
    return;
  }
  int status = parser_.status();
  Outcome outcome = plan_.is_ok(status) ? Outcome::ok : record::outcome_of_status(status);
  bool keep = reuse == Reuse::yes && worker_.options().keepalive == Keepalive::on && !last_
              && parser_.keep_alive() && !leftover_;
  finish(outcome, status, now, keep ? Reuse::yes : Reuse::no);
}

void Connection::on_eof(TimePoint now) {
  if (parser_.finish() == http::ResponseParser::State::done) {
    respond(now, Reuse::no);  // a close-delimited body
    return;
  }
  error_ = "connection closed by the server";
  finish(parser_.started() ? Outcome::truncated_response : Outcome::closed_before_response,
         parser_.status(), now, Reuse::no);
}

void Connection::fail_transport(const error_code& ec, TimePoint now) {
  error_ = ec.message();
  finish(parser_.started() ? Outcome::reset_during_response : Outcome::reset_before_response,
         parser_.status(), now, Reuse::no);
}

void Connection::expire_if_due(TimePoint now) {
  if (now < deadline_) {
    return;
  }
  if (state_ == State::connecting) {
    error_ = "connect timed out";
    finish(Outcome::connect_timeout, 0, now, Reuse::no);
  } else if (state_ == State::busy) {
    error_ = "no complete response within the timeout";
    finish(Outcome::timeout, parser_.status(), now, Reuse::no);
  }
}

// Records the outcome, then hands the connection back to the worker, which may reuse it at once;
// nothing here touches the connection after that.
void Connection::finish(Outcome outcome, int status, TimePoint now, Reuse reuse) {
  if (reuse == Reuse::no) {
    close_socket();
  } else {
    state_ = State::idle;
  }
  worker_.on_finished(*this, outcome, status, now);
  if (reuse == Reuse::yes) {
    if (!reading_) {
      read();  // a pending read notices when the server closes the idle connection
    }
    worker_.on_idle(*this, now);
  } else {
    worker_.on_closed(*this, now);
  }
}

void Connection::close() {
  close_socket();
}

void Connection::close_socket() {
  ++generation_;
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
  state_ = State::closed;
  reading_ = false;
  filled_ = 0;
}

}  // namespace zerodrop::load
