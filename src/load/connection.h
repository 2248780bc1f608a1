#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>

#include "http/response_parser.h"
#include "record/outcome.h"

namespace zerodrop::load {

class Worker;
struct Plan;
using TimePoint = std::chrono::steady_clock::time_point;

// One request the pacer hands to a connection.
struct Request {
  uint64_t seq = 0;
  uint32_t target = 0;
  TimePoint intended;
};

// One client connection slot: opens a TCP connection to a target's endpoint (and a TLS session on
// it for https), sends requests one at a time, parses responses into a fixed per-connection buffer
// and classifies each outcome. Raw Asio sockets, not Beast streams: the plain hot path (send,
// read, parse) allocates nothing. I/O handlers never throw: every error becomes the request's
// outcome. Used only from its worker's thread; it reports to the worker, which owns it.
class Connection {
public:
  enum class State : uint8_t { closed, connecting, idle, busy };

  Connection(Worker& worker, const Plan& plan, boost::asio::io_context& io);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends `request` now: on this kept-alive connection when idle, else after opening one.
  void start(const Request& request, TimePoint now);
  // Ends the request in flight with `timeout` / `connect_timeout` if its deadline has passed.
  void expire_if_due(TimePoint now);
  // Closes the socket without recording anything (idle connections at the end of the run).
  void close();

  State state() const { return state_; }

  uint32_t endpoint() const { return endpoint_; }

  const Request& request() const { return request_; }

  bool reused() const { return reused_; }

  bool responded() const { return parser_.state() == http::ResponseParser::State::done; }

  std::optional<TimePoint> sent() const;
  std::optional<TimePoint> first_byte() const;

  uint16_t local_port() const { return local_port_; }

  std::string_view backend() const { return parser_.captured(0); }

  // Why the lab's router answered itself (http::kRouterErrorHeader), empty for an app's answer.
  std::string_view router_error() const { return parser_.captured(1); }

  std::string_view error() const { return error_; }

  bool in_idle_list = false;  // the worker's bookkeeping of its free lists
  bool in_closed_list = false;

private:
  enum class Reuse { yes, no };

  void open(TimePoint now);
  void on_connect(const boost::system::error_code& ec, uint32_t generation);
  void on_handshake(const boost::system::error_code& ec, uint32_t generation);
  void send(TimePoint now);
  void write_some();
  void on_write(const boost::system::error_code& ec, uint32_t generation);
  void read();
  void on_read(const boost::system::error_code& ec, size_t n, uint32_t generation);
  void consume();
  void respond(TimePoint now, Reuse reuse);
  void on_eof(TimePoint now);
  void fail_transport(const boost::system::error_code& ec, TimePoint now);
  void finish(record::Outcome outcome, int status, TimePoint now, Reuse reuse);
  void close_socket();
  std::array<boost::asio::const_buffer, 2> unsent_buffers() const;

  boost::asio::ip::tcp::socket& socket() { return tls_ ? tls_->next_layer() : socket_; }

  Worker& worker_;
  const Plan& plan_;
  boost::asio::io_context& io_;
  boost::asio::ip::tcp::socket socket_;  // plain http
  // https: a stream per TCP connection, owning its socket. Every pending operation holds a
  // reference, so a stream closed under one lives until the operation has been cancelled.
  std::shared_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
  // https: the last resumable TLS session of this slot and its endpoint, offered at the next
  // handshake to the same endpoint (as wrk, curl and browsers resume: no certificate exchange).
  std::unique_ptr<SSL_SESSION, void (*)(SSL_SESSION*)> session_{nullptr, SSL_SESSION_free};
  uint32_t session_endpoint_ = 0;
  http::ResponseParser parser_;
  std::unique_ptr<char[]> buffer_;  // received bytes not yet parsed (an incomplete line at most)
  std::unique_ptr<char[]> head_;    // the request head being sent, seq patched in
  std::string error_;
  Request request_;
  TimePoint sent_{};
  TimePoint first_byte_{};
  TimePoint deadline_{};
  size_t filled_ = 0;
  size_t head_size_ = 0;
  size_t written_ = 0;
  uint64_t requests_ = 0;    // sent on this TCP connection
  uint32_t generation_ = 0;  // bumped at every close: handlers of an older socket are ignored
  uint32_t endpoint_ = 0;
  uint16_t local_port_ = 0;
  State state_ = State::closed;
  bool reused_ = false;
  bool has_sent_ = false;
  bool has_first_byte_ = false;
  bool reading_ = false;
  bool last_ = false;      // this request carries Connection: close
  bool leftover_ = false;  // the server sent bytes after the response: do not reuse
};

}  // namespace zerodrop::load
