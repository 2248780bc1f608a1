#include "load/http2_session.h"

#include <algorithm>
#include <nghttp2/nghttp2.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <fmt/format.h>

#include "base/text.h"
#include "http/h2_nv.h"
#include "http/proxy_failure.h"
#include "load/http2_frames.h"
#include "load/plan.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using record::Outcome;

constexpr size_t kReadBuffer = 16 * 1024;
constexpr size_t kFlushAt = 32 * 1024;  // bytes gathered before one write
constexpr int32_t kStreamWindow = (1 << 24) - 1;
constexpr int32_t kConnectionWindow = (1 << 30) - 1;

}  // namespace

Http2Session::Http2Session(Worker& worker, const Plan& plan, asio::io_context& io)
    : worker_(worker),
      plan_(plan),
      io_(io),
      transport_(worker, plan, io, *this),
      slots_(plan.streams),
      buffer_(new uint8_t[kReadBuffer]) {
  for (uint32_t i = plan.streams; i > 0; --i) {
    free_.push_back(i - 1);
  }
  backend_header_ = ascii_lower(worker.options().backend_header);
  out_.reserve(2 * kFlushAt);
}

Http2Session::~Http2Session() {
  nghttp2_session_del(session_);
}

std::chrono::nanoseconds Http2Session::plan_timeout() const {
  return worker_.options().timeout;
}

// A fresh nghttp2 client session: no closed streams kept (memory flat in the request count),
// no push, large windows (flow control is not what the run measures). The header list bound is
// enforced on receipt (on_header), not advertised: nghttp2 servers would then refuse to send.
void Http2Session::reset_session() {
  nghttp2_session_del(session_);
  session_ = nullptr;
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_no_closed_streams(option, 1);
  nghttp2_option_set_peer_max_concurrent_streams(option, plan_.streams);
  nghttp2_session_client_new2(&session_, http2_callbacks(), this, option);
  nghttp2_option_del(option);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
}

void Http2Session::start(const Request& request, TimePoint now) {
  Slot& slot = slots_[free_.back()];
  free_.pop_back();
  slot.clear();  // strings keep their capacity: no allocation per request once warm
  slot.stream.begin(request);
  slot.in_use = true;
  ++active_;
  if (state_ == State::closed) {
    endpoint_ = plan_.targets[request.target].endpoint;
    target_ = request.target;
    slot.stream.deadline = now + worker_.options().connect_timeout;
    open(now);
    submit(slot, now);
    return;
  }
  slot.stream.deadline = now + worker_.options().timeout;
  submit(slot, now);
  flush_soon();
  if (active_ >= capacity_) {
    state_ = State::busy;
  }
}

void Http2Session::open(TimePoint) {
  close_connection();
  reset_session();
  state_ = State::connecting;
  conn_ = worker_.next_connection_number();
  goaway_.reset();
  connection_error_.clear();
  streams_opened_ = 0;
  capacity_ = 1;
  settings_ = draining_ = connected_ = false;
  transport_.open(endpoint_);
}

// Queues the request's HEADERS (and DATA) in nghttp2; they go out at the next flush.
void Http2Session::submit(Slot& slot, TimePoint now) {
  thread_local std::vector<nghttp2_nv> nva;
  const PlanTarget& target = plan_.targets[slot.stream.request.target];
  nva.clear();
  auto add = [](std::string_view name, std::string_view value) {
    nva.push_back(http::h2_nv(name, value));
  };
  for (const auto& [name, value] : target.h2_headers) {
    add(name, value);
  }
  char seq[24];
  auto end = fmt::format_to(seq, "{}", slot.stream.request.seq);
  add("x-zerodrop-seq", std::string_view(seq, static_cast<size_t>(end - seq)));
  nghttp2_data_provider body{};
  body.read_callback = read_http2_body;
  bool has_body = !plan_.body.empty() && target.body == http::BodyAllowed::yes;
  int32_t id = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(),
                                      has_body ? &body : nullptr, &slot);
  slot.reused = streams_opened_ > 0;
  ++streams_opened_;
  if (id < 0) {
    // Only when the stream ids of a connection are used up (2^31): no more streams on it.
    slot.stream.error = fmt::format("HTTP/2: {}", nghttp2_strerror(id));
    draining_ = true;
    finish(slot, Outcome::protocol_error, now);
    return;
  }
  slot.id = id;
}

void Http2Session::Slot::clear() {
  id = 0;
  status = 0;
  rst.reset();
  grpc_status.reset();
  grpc_message.clear();
  content_type.clear();
  backend.clear();
  router_error.clear();
  failure.clear();
  framing.reset();
  header_bytes = body_sent = 0;
  in_use = reused = ended = false;
}

void Http2Session::on_open(TimePoint now) {
  connected_ = true;
  state_ = State::busy;  // idle once the server's SETTINGS say how many streams it takes
  flush();
  read();
  after_io(now);
}

void Http2Session::on_open_failed(Outcome outcome, std::string_view error, TimePoint now) {
  for (Slot& slot : slots_) {
    if (slot.in_use) {
      slot.stream.error = error;
      finish(slot, outcome, now);
    }
  }
  close_connection();
  worker_.on_closed(*this, now);
}

// Hands nghttp2's pending frames to the transport, gathered into one write: synchronous for
// plain connections as long as the socket takes them, else one asynchronous write at a time.
void Http2Session::flush() {
  if (writing_ || !connected_ || session_ == nullptr) {
    return;
  }
  while (true) {
    out_.clear();
    while (out_.size() < kFlushAt) {
      const uint8_t* data = nullptr;
      ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) {
        connection_error_ = fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n)));
        break;
      }
      if (n == 0) {
        break;
      }
      out_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    if (out_.empty()) {
      return;
    }
    if (!transport_.send({asio::buffer(out_), asio::const_buffer()})) {
      writing_ = true;
      return;
    }
  }
}

// Writes the requests started by the current handler together, once it returns: a worker
// dispatches many at a time (after a read that closed many streams, or a pacer tick), and one
// write per request would cost a syscall each and make the server read them one by one.
void Http2Session::flush_soon() {
  if (flush_posted_) {
    return;
  }
  flush_posted_ = true;
  asio::post(io_, [this] {
    flush_posted_ = false;
    flush();
  });
}

void Http2Session::on_written(const error_code& ec) {
  writing_ = false;
  TimePoint now = std::chrono::steady_clock::now();
  if (ec) {
    end_connection(ec.message(), Outcome::reset_before_response, Outcome::reset_during_response,
                   now);
    return;
  }
  flush();
}

void Http2Session::read() {
  transport_.read(asio::buffer(buffer_.get(), kReadBuffer));
}

void Http2Session::on_read(const error_code& ec, size_t n) {
  TimePoint now = std::chrono::steady_clock::now();
  if (n > 0) {
    ssize_t used = nghttp2_session_mem_recv(session_, buffer_.get(), n);
    if (used < 0) {
      connection_error_ = fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(used)));
    }
    flush();
    bool done = !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_);
    if (used < 0 || done) {
      end_connection("the connection ended", Outcome::protocol_error, Outcome::protocol_error, now);
      return;
    }
    read();
    after_io(now);
  } else if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    end_connection("connection closed by the server", Outcome::closed_before_response,
                   Outcome::truncated_response, now);
  } else if (ec) {
    end_connection(ec.message(), Outcome::reset_before_response, Outcome::reset_during_response,
                   now);
  } else {
    read();
  }
}

// After frames were handled: a draining connection with nothing left in flight says GOAWAY
// itself and closes; otherwise the session tells the worker whether it takes requests.
void Http2Session::after_io(TimePoint now) {
  if (draining_ && active_ == 0) {
    close();
    worker_.on_closed(*this, now);
    return;
  }
  if (!draining_ && settings_ && active_ < capacity_) {
    state_ = State::idle;
    worker_.on_idle(*this, now);
  } else {
    state_ = State::busy;
  }
}

// The connection ended under its streams (EOF, reset, or a protocol error nghttp2 answered with
// its own GOAWAY): each stream still open gets a class, by what the connection said before.
void Http2Session::end_connection(std::string_view why, Outcome before, Outcome during,
                                  TimePoint now) {
  if (!goaway_ && connection_error_.empty()) {
    ++worker_.tally().h2.closed_without_goaway;
  }
  record::CloseKind closed = !connection_error_.empty() ? record::CloseKind::protocol_error
                             : before == Outcome::closed_before_response ? record::CloseKind::eof
                                                                         : record::CloseKind::reset;
  if (settings_) {  // before the server's SETTINGS, a refusal (the router's), not a close
    report_connection(record::EventKind::connection_closed, closed, active_);
  }
  for (Slot& slot : slots_) {
    if (!slot.in_use) {
      continue;
    }
    Outcome outcome = slot.stream.has_first_byte ? during : before;
    slot.stream.error = why;
    if (!connection_error_.empty()) {
      outcome = Outcome::protocol_error;
      slot.stream.error = connection_error_;
    } else if (goaway_ && static_cast<uint32_t>(slot.id) > goaway_->last_stream_id) {
      outcome = Outcome::goaway_unprocessed;
    }
    finish(slot, outcome, now);
  }
  close_connection();
  worker_.on_closed(*this, now);
}

// Connection events are rare (a few per connection), so they may allocate.
void Http2Session::report_connection(record::EventKind kind, record::CloseKind closed,
                                     uint32_t open_streams) {
  if (!worker_.hooks().on_connection_event) {
    return;
  }
  ConnectionEvent e{kind,
                    std::chrono::duration_cast<record::Micros>(std::chrono::steady_clock::now()
                                                               - worker_.run_start()),
                    worker_.endpoint(endpoint_).port(),
                    target_,
                    {conn_, transport_.local_port(), goaway_, closed, open_streams}};
  worker_.hooks().on_connection_event(e);
}

bool Http2Session::unprocessed(Outcome outcome) const {
  return outcome == Outcome::refused_stream || outcome == Outcome::goaway_unprocessed;
}

// Reports the slot's request to the worker (or hands it back for its one resend) and frees it.
void Http2Session::finish(Slot& slot, Outcome outcome, TimePoint now) {
  Request& request = slot.stream.request;
  if (unprocessed(outcome) && request.attempt == 1
      && plan_.retry_unprocessed == RetryUnprocessed::once) {
    Request again = request;
    again.attempt = 2;
    again.first_attempt = FirstAttempt{outcome, conn_, static_cast<uint32_t>(slot.id), now};
    ++worker_.tally().h2.unprocessed;
    release(slot);
    worker_.on_unprocessed(again);
    return;
  }
  Http2Counts& counts = worker_.tally().h2;
  if (slot.grpc_status) {
    int code = *slot.grpc_status;
    ++(code >= 0 && static_cast<size_t>(code) < counts.grpc_status.size()
           ? counts.grpc_status[static_cast<size_t>(code)]
           : counts.grpc_status_other);
  }
  facts_.proto = plan_.protocol == Protocol::grpc ? record::Proto::grpc : record::Proto::h2;
  facts_.conn = conn_;
  facts_.stream = static_cast<uint32_t>(std::max(slot.id, 0));
  facts_.attempts = request.attempt;
  facts_.rst = slot.rst;
  facts_.goaway = goaway_;
  facts_.grpc_status = slot.grpc_status;
  facts_.grpc_message = slot.grpc_message;
  bool responded = slot.ended && slot.status != 0 && outcome != Outcome::timeout;
  worker_.on_finished(Finished{slot.stream, outcome, slot.status, now, responded, slot.reused,
                               transport_.local_port(), slot.backend, slot.router_error, &facts_});
  release(slot);
}

void Http2Session::release(Slot& slot) {
  if (slot.id > 0 && session_ != nullptr) {
    nghttp2_session_set_stream_user_data(session_, slot.id, nullptr);
  }
  slot.in_use = false;
  --active_;
  free_.push_back(static_cast<uint32_t>(&slot - slots_.data()));
}

void Http2Session::expire_if_due(TimePoint now) {
  if (active_ == 0) {
    return;
  }
  bool expired = false;
  for (Slot& slot : slots_) {
    if (!slot.in_use || now < slot.stream.deadline) {
      continue;
    }
    expired = true;
    if (!connected_) {
      on_open_failed(Outcome::connect_timeout, "connect timed out", now);
      return;
    }
    int32_t id = slot.id;
    slot.stream.error = "no complete response within the timeout";
    finish(slot, Outcome::timeout, now);
    if (id > 0) {
      // As a gRPC client on its deadline: cancel the stream, keep the connection.
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    }
  }
  if (expired) {
    flush();
    after_io(now);
  }
}

// Closes the connection, first saying GOAWAY(NO_ERROR) as RFC 9113 §6.8 asks of an endpoint
// that ends one. Records nothing.
void Http2Session::close() {
  if (session_ != nullptr && connected_ && !writing_) {
    nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
    flush();
  }
  for (Slot& slot : slots_) {
    if (slot.in_use) {
      release(slot);  // only at the end of an interrupted run: nothing waits for them
    }
  }
  close_connection();
}

void Http2Session::close_connection() {
  transport_.close();
  nghttp2_session_del(session_);
  session_ = nullptr;
  state_ = State::closed;
  connected_ = writing_ = false;
}

}  // namespace zerodrop::load