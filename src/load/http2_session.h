#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "load/grpc.h"
#include "load/session.h"
#include "load/stream.h"
#include "load/transport.h"
#include "record/run_record.h"

struct nghttp2_session;

namespace zerodrop::load {

class Worker;
struct Plan;

// An HTTP/2 session on libnghttp2 (h2c by prior knowledge, or h2 over TLS): up to --streams
// requests at once, never more than the server's SETTINGS_MAX_CONCURRENT_STREAMS (a request that
// finds every session full waits in the worker and counts late; nothing queues in nghttp2). It
// stops opening streams at a GOAWAY and reconnects lazily; a request refused unprocessed
// (REFUSED_STREAM, or above the GOAWAY's last stream id) goes back to the worker for one resend.
// Plain HTTP/2 or unary gRPC (Plan::protocol). Handlers never throw.
class Http2Session final : public Session, private TransportUser {
public:
  Http2Session(Worker& worker, const Plan& plan, boost::asio::io_context& io);
  ~Http2Session() override;

  void start(const Request& request, TimePoint now) override;
  void expire_if_due(TimePoint now) override;
  void close() override;

  uint32_t active() const override { return active_; }

  // One stream slot: the request and what its response said so far. Public for the nghttp2
  // callbacks in http2_frames.cc.
  struct Slot {
    Stream stream;
    int32_t id = 0;  // HTTP/2 stream id, 0 until submitted
    int status = 0;
    std::optional<uint32_t> rst;  // RST_STREAM code received
    std::optional<int> grpc_status;
    std::string grpc_message;
    std::string content_type;
    std::string backend;
    std::string router_error;
    std::string failure;  // why the response is malformed, empty if it is not
    GrpcFraming framing;
    size_t header_bytes = 0;
    size_t body_sent = 0;
    bool in_use = false;
    bool reused = false;
    bool ended = false;  // END_STREAM received

    // Empties the slot for a new request; strings keep their capacity.
    void clear();
  };

  // Callbacks from nghttp2 (see http2_frames.cc).
  void on_goaway(uint32_t last_stream_id, uint32_t error, std::string_view debug);
  void on_settings(uint32_t max_concurrent_streams);
  void on_stream_closed(Slot& slot, uint32_t error_code);
  void on_rst(Slot& slot, uint32_t code);

  void on_error_sent(std::string error) { connection_error_ = std::move(error); }

  const Plan& plan() const { return plan_; }

  std::chrono::nanoseconds plan_timeout() const;

  const std::string& backend_header() const { return backend_header_; }

  nghttp2_session* nghttp2() { return session_; }

private:
  void open(TimePoint now);
  void on_open(TimePoint now) override;
  void on_open_failed(record::Outcome outcome, std::string_view error, TimePoint now) override;
  void on_written(const boost::system::error_code& ec) override;
  void on_read(const boost::system::error_code& ec, size_t n) override;
  void submit(Slot& slot, TimePoint now);
  void close_connection();
  void flush();
  void flush_soon();
  void read();
  void after_io(TimePoint now);
  void end_connection(std::string_view why, record::Outcome before, record::Outcome during,
                      TimePoint now);
  void finish(Slot& slot, record::Outcome outcome, TimePoint now);
  void release(Slot& slot);
  record::Outcome classify(Slot& slot, uint32_t error_code);
  bool unprocessed(record::Outcome outcome) const;
  void reset_session();
  void report_connection(record::EventKind kind, record::CloseKind closed, uint32_t open_streams);

  Worker& worker_;
  const Plan& plan_;
  boost::asio::io_context& io_;
  Transport transport_;
  nghttp2_session* session_ = nullptr;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;         // indices of free slots
  std::unique_ptr<uint8_t[]> buffer_;  // received bytes, handed to nghttp2 at once
  std::string out_;                    // bytes from nghttp2 being written
  std::string backend_header_;         // lower-case
  std::string connection_error_;  // what our own GOAWAY said, when nghttp2 ended the connection
  record::Http2Facts facts_;      // filled per finished request: no allocation once warm
  std::optional<record::GoawayRecord> goaway_;
  uint64_t streams_opened_ = 0;  // on this connection
  uint32_t conn_ = 0;
  uint32_t target_ = 0;  // the target of the request that opened the connection
  uint32_t active_ = 0;
  uint32_t capacity_ = 1;      // streams this connection may carry at once
  bool settings_ = false;      // the server's SETTINGS arrived
  bool draining_ = false;      // a GOAWAY arrived: no new streams
  bool writing_ = false;       // an asynchronous write of out_ is in flight
  bool flush_posted_ = false;  // a flush_soon() is queued on the io_context
  bool connected_ = false;     // the transport is open
};

}  // namespace zerodrop::load
