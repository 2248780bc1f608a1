#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "http/response_parser.h"
#include "load/session.h"
#include "load/stream.h"
#include "load/transport.h"
#include "record/outcome.h"

namespace zerodrop::load {

class Worker;
struct Plan;

// An HTTP/1.1 session: sends requests one at a time on its transport, parses responses into a
// fixed per-connection buffer and classifies each outcome. The plain hot path (send, read,
// parse) allocates nothing. I/O handlers never throw: every error becomes the request's outcome.
class Http1Session final : public Session, private TransportUser {
public:
  Http1Session(Worker& worker, const Plan& plan, boost::asio::io_context& io);

  void start(const Request& request, TimePoint now) override;
  void expire_if_due(TimePoint now) override;
  void close() override;

  uint32_t active() const override { return state_ == State::busy || state_ == State::connecting; }

private:
  enum class Reuse { yes, no };

  void open(TimePoint now);
  void on_open(TimePoint now) override;
  void on_open_failed(record::Outcome outcome, std::string_view error, TimePoint now) override;
  void on_written(const boost::system::error_code& ec) override;
  void on_read(const boost::system::error_code& ec, size_t n) override;
  void send(TimePoint now);
  void read();
  void consume();
  void respond(TimePoint now, Reuse reuse);
  void on_eof(TimePoint now);
  void fail_transport(const boost::system::error_code& ec, TimePoint now);
  void finish(record::Outcome outcome, int status, TimePoint now, Reuse reuse);
  void close_socket();
  Transport::Buffers unsent_buffers() const;

  Worker& worker_;
  const Plan& plan_;
  Transport transport_;
  http::ResponseParser parser_;
  std::unique_ptr<char[]> buffer_;  // received bytes not yet parsed (an incomplete line at most)
  std::unique_ptr<char[]> head_;    // the request head being sent, seq patched in
  Stream stream_;
  size_t filled_ = 0;
  size_t head_size_ = 0;
  uint64_t requests_ = 0;  // sent on this TCP connection
  bool reused_ = false;
  bool last_ = false;      // this request carries Connection: close
  bool leftover_ = false;  // the server sent bytes after the response: do not reuse
};

}  // namespace zerodrop::load
