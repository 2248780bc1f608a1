#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>

#include "record/outcome.h"

namespace zerodrop::load {

class Worker;
struct Plan;
using TimePoint = std::chrono::steady_clock::time_point;

// What a Transport reports to the session that owns it, on the worker's thread. Handlers of a
// socket closed since (Transport::close) are dropped: a session never hears of an older socket.
class TransportUser {
public:
  // TCP is up, and TLS for https (with ALPN h2 when the plan speaks HTTP/2): the session sends.
  virtual void on_open(TimePoint now) = 0;
  // Connecting failed; `outcome` is a connect_* class, `error` the system's or OpenSSL's words.
  virtual void on_open_failed(record::Outcome outcome, std::string_view error, TimePoint now) = 0;
  // The asynchronous rest of a send() ended (with `ec` set if it failed).
  virtual void on_written(const boost::system::error_code& ec) = 0;
  // A read() ended with `n` bytes in its buffer, or with `ec`.
  virtual void on_read(const boost::system::error_code& ec, size_t n) = 0;

protected:
  ~TransportUser() = default;
};

// The byte pipe of one connection slot: a TCP socket, or a TLS stream on it for https, with the
// slot's last resumable TLS session. Knows nothing of HTTP. Raw Asio sockets: plain sends write
// synchronously on the non-blocking socket and allocate nothing. Used from one worker thread.
class Transport {
public:
  using Buffers = std::array<boost::asio::const_buffer, 2>;

  Transport(Worker& worker, const Plan& plan, boost::asio::io_context& io, TransportUser& user);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Closes any previous socket and connects to the plan's endpoint `endpoint`; ends in
  // on_open or on_open_failed.
  void open(uint32_t endpoint);
  // Writes `buffers`: synchronously as far as the socket takes them (plain http), the rest
  // asynchronously (always for TLS). Returns true when everything went synchronously; otherwise
  // on_written follows. The buffers must stay valid until then.
  bool send(Buffers buffers);
  // Reads some bytes into `into`; on_read follows.
  void read(boost::asio::mutable_buffer into);
  // Closes the socket; no handler of it reaches the user afterwards. Keeps a resumable TLS
  // session for the next open() to the same endpoint.
  void close();

  bool reading() const { return reading_; }

  uint16_t local_port() const { return local_port_; }

private:
  void on_connect(const boost::system::error_code& ec, uint32_t generation);
  void on_handshake(const boost::system::error_code& ec, uint32_t generation);
  void on_write(const boost::system::error_code& ec, uint32_t generation);
  std::string alpn_mismatch() const;

  boost::asio::ip::tcp::socket& socket() { return tls_ ? tls_->next_layer() : socket_; }

  Worker& worker_;
  const Plan& plan_;
  boost::asio::io_context& io_;
  TransportUser& user_;
  boost::asio::ip::tcp::socket socket_;  // plain http
  // https: a stream per TCP connection, owning its socket. Every pending operation holds a
  // reference, so a stream closed under one lives until the operation has been cancelled.
  std::shared_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
  // https: the last resumable TLS session of this slot and its endpoint, offered at the next
  // handshake to the same endpoint (as wrk, curl and browsers resume: no certificate exchange).
  std::unique_ptr<SSL_SESSION, void (*)(SSL_SESSION*)> session_{nullptr, SSL_SESSION_free};
  uint32_t session_endpoint_ = 0;
  uint32_t endpoint_ = 0;
  uint32_t generation_ = 0;  // bumped at every close: handlers of an older socket are ignored
  uint16_t local_port_ = 0;
  bool opening_ = false;
  bool reading_ = false;
};

}  // namespace zerodrop::load
