#include "load/http2_session.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <nghttp2/nghttp2.h>

#include <boost/asio/ssl/error.hpp>
#include <fmt/format.h>

#include "http/proxy_failure.h"
#include "load/plan.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using record::Outcome;
using Slot = Http2Session::Slot;

constexpr size_t kReadBuffer = 16 * 1024;
constexpr size_t kMaxHeaderBytes = 64 * 1024;  // as the HTTP/1.1 parser's header block
constexpr size_t kMaxText = 256;               // grpc-message, GOAWAY debug data, backend
constexpr size_t kFlushAt = 32 * 1024;         // bytes gathered before one write
constexpr int32_t kStreamWindow = (1 << 24) - 1;
constexpr int32_t kConnectionWindow = (1 << 30) - 1;

std::string_view view(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

Slot* slot_of(nghttp2_session* s, int32_t id) {
  return static_cast<Slot*>(nghttp2_session_get_stream_user_data(s, id));
}

Http2Session& self_of(void* user) {
  return *static_cast<Http2Session*>(user);
}

std::optional<int> number(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() ? std::optional(value)
                                                               : std::nullopt;
}

void assign_bounded(std::string& out, std::string_view in) {
  out.assign(in.substr(0, kMaxText));
}

void note_first_byte(Slot& slot) {
  if (!slot.stream.has_first_byte) {
    slot.stream.first_byte = std::chrono::steady_clock::now();
    slot.stream.has_first_byte = true;
  }
}

int on_begin_headers(nghttp2_session* s, const nghttp2_frame* frame, void*) {
  if (Slot* slot = slot_of(s, frame->hd.stream_id)) {
    note_first_byte(*slot);
  }
  return 0;
}

// Keeps what classification needs from a response header field or trailer; a header block over
// kMaxHeaderBytes resets the stream (a protocol_error), as the HTTP/1.1 parser refuses one.
int on_header(nghttp2_session* s, const nghttp2_frame* frame, const uint8_t* name_data,
              size_t name_size, const uint8_t* value_data, size_t value_size, uint8_t, void* user) {
  Slot* slot = slot_of(s, frame->hd.stream_id);
  if (slot == nullptr || frame->hd.type != NGHTTP2_HEADERS) {
    return 0;
  }
  slot->header_bytes += name_size + value_size + 32;  // RFC 9113 §6.5.2's size of a field
  if (slot->header_bytes > kMaxHeaderBytes) {
    slot->failure = "response header block over 64 KiB";
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  std::string_view name = view(name_data, name_size);
  std::string_view value = view(value_data, value_size);
  if (name == ":status") {
    slot->status = number(value).value_or(0);
  } else if (name == "content-type") {
    assign_bounded(slot->content_type, value);
  } else if (name == "grpc-status") {
    slot->grpc_status = number(value).value_or(2);  // unparsable: UNKNOWN, as gRPC clients do
  } else if (name == "grpc-message") {
    slot->grpc_message.clear();
    percent_decode(value, slot->grpc_message, kMaxText);
  } else if (name == self_of(user).backend_header()) {
    assign_bounded(slot->backend, value);
  } else if (name == "x-zerodrop-router-error") {
    assign_bounded(slot->router_error, value);
  }
  return 0;
}

int on_data_chunk(nghttp2_session* s, uint8_t, int32_t id, const uint8_t* data, size_t size,
                  void* user) {
  if (Slot* slot = slot_of(s, id)) {
    note_first_byte(*slot);
    if (self_of(user).plan().protocol == Protocol::grpc) {
      slot->framing.feed(data, size);
    }
  }
  return 0;
}

int on_frame_recv(nghttp2_session* s, const nghttp2_frame* frame, void* user) {
  Http2Session& self = self_of(user);
  switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
      if (Slot* slot = slot_of(s, frame->hd.stream_id)) {
        slot->ended = slot->ended || (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
      }
      break;
    case NGHTTP2_GOAWAY:
      self.on_goaway(static_cast<uint32_t>(frame->goaway.last_stream_id), frame->goaway.error_code,
                     view(frame->goaway.opaque_data, frame->goaway.opaque_data_len));
      break;
    case NGHTTP2_RST_STREAM:
      if (Slot* slot = slot_of(s, frame->hd.stream_id)) {
        self.on_rst(*slot, frame->rst_stream.error_code);
      }
      break;
    case NGHTTP2_SETTINGS:
      if ((frame->hd.flags & NGHTTP2_FLAG_ACK) == 0) {
        self.on_settings(
            nghttp2_session_get_remote_settings(s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS));
      }
      break;
    default:
      break;
  }
  return 0;
}

int on_frame_send(nghttp2_session* s, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_HEADERS) {
    if (Slot* slot = slot_of(s, frame->hd.stream_id)) {
      TimePoint now = std::chrono::steady_clock::now();
      slot->stream.sent = now;
      slot->stream.has_sent = true;
      slot->stream.deadline = now + self_of(user).plan_timeout();
    }
  } else if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR) {
    // nghttp2 ends the connection itself when the server breaks the protocol.
    self_of(user).on_error_sent(fmt::format(
        "HTTP/2 connection error {}: {}", record::h2_error_name(frame->goaway.error_code),
        view(frame->goaway.opaque_data,
             std::min<size_t>(frame->goaway.opaque_data_len, kMaxText))));
  }
  return 0;
}

int on_stream_close(nghttp2_session* s, int32_t id, uint32_t error_code, void* user) {
  if (Slot* slot = slot_of(s, id)) {
    self_of(user).on_stream_closed(*slot, error_code);
  }
  return 0;
}

ssize_t read_body(nghttp2_session* s, int32_t id, uint8_t* buf, size_t length, uint32_t* flags,
                  nghttp2_data_source*, void* user) {
  const std::string& body = self_of(user).plan().body;
  Slot* slot = slot_of(s, id);
  size_t from = slot ? slot->body_sent : body.size();  // a stream given up: end it
  size_t n = std::min(length, body.size() - from);
  std::memcpy(buf, body.data() + from, n);
  if (slot) {
    slot->body_sent += n;
  }
  if (from + n == body.size()) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  }
  return static_cast<ssize_t>(n);
}

// One callback table for every session: nghttp2 copies it at session creation.
nghttp2_session_callbacks* callbacks() {
  static nghttp2_session_callbacks* table = [] {
    nghttp2_session_callbacks* c = nullptr;
    nghttp2_session_callbacks_new(&c);
    nghttp2_session_callbacks_set_on_begin_headers_callback(c, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(c, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(c, on_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(c, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(c, on_stream_close);
    return c;
  }();
  return table;
}

}  // namespace

Http2Session::Http2Session(Worker& worker, const Plan& plan, asio::io_context& io)
    : worker_(worker),
      plan_(plan),
      transport_(worker, plan, io, *this),
      slots_(plan.streams),
      buffer_(new uint8_t[kReadBuffer]) {
  for (uint32_t i = plan.streams; i > 0; --i) {
    free_.push_back(i - 1);
  }
  backend_header_ = worker.options().backend_header;
  std::transform(backend_header_.begin(), backend_header_.end(), backend_header_.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
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
  nghttp2_session_client_new2(&session_, callbacks(), this, option);
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
    slot.stream.deadline = now + worker_.options().connect_timeout;
    open(now);
    submit(slot, now);
    return;
  }
  slot.stream.deadline = now + worker_.options().timeout;
  submit(slot, now);
  flush();
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
    nva.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                   reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                   value.size(), NGHTTP2_NV_FLAG_NONE});
  };
  for (const auto& [name, value] : target.h2_headers) {
    add(name, value);
  }
  char seq[24];
  auto end = fmt::format_to(seq, "{}", slot.stream.request.seq);
  add("x-zerodrop-seq", std::string_view(seq, static_cast<size_t>(end - seq)));
  nghttp2_data_provider body{};
  body.read_callback = read_body;
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

void Http2Session::on_goaway(uint32_t last_stream_id, uint32_t error, std::string_view debug) {
  auto t = std::chrono::duration_cast<record::Micros>(std::chrono::steady_clock::now()
                                                      - worker_.run_start());
  if (!goaway_) {
    goaway_.emplace();
  }
  goaway_->t = t;
  goaway_->last_stream_id = last_stream_id;
  goaway_->error = error;
  assign_bounded(goaway_->debug, debug);
  ++worker_.tally().h2.goaways[std::min<size_t>(error, Http2Counts::kCodes - 1)];
  draining_ = true;
  report_connection(record::EventKind::goaway_received, record::CloseKind::eof, active_);
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
                    {conn_, transport_.local_port(), goaway_, closed, open_streams}};
  worker_.hooks().on_connection_event(e);
}

void Http2Session::on_settings(uint32_t max_concurrent_streams) {
  settings_ = true;
  capacity_ = std::min(plan_.streams, max_concurrent_streams);
}

void Http2Session::on_rst(Slot& slot, uint32_t code) {
  slot.rst = code;
  ++worker_.tally().h2.rst_streams[std::min<size_t>(code, Http2Counts::kCodes - 1)];
}

void Http2Session::on_stream_closed(Slot& slot, uint32_t error_code) {
  finish(slot, classify(slot, error_code), std::chrono::steady_clock::now());
}

// The class of a stream nghttp2 closed with `error_code`, its error text set on the way.
Outcome Http2Session::classify(Slot& slot, uint32_t error_code) {
  std::string& error = slot.stream.error;
  if (!slot.failure.empty()) {
    error = slot.failure;
    return Outcome::protocol_error;
  }
  if (slot.rst) {
    error = fmt::format("RST_STREAM {}", record::h2_error_name(*slot.rst));
    return *slot.rst == NGHTTP2_REFUSED_STREAM ? Outcome::refused_stream : Outcome::stream_reset;
  }
  if (error_code == NGHTTP2_REFUSED_STREAM) {
    // nghttp2 closes the streams a GOAWAY left out (and requests it could not start after one).
    error = goaway_ ? fmt::format("stream {} above the GOAWAY's last stream id {}", slot.id,
                                  goaway_->last_stream_id)
                    : std::string("refused before it was sent");
    return goaway_ ? Outcome::goaway_unprocessed : Outcome::refused_stream;
  }
  if (error_code != NGHTTP2_NO_ERROR || !slot.ended || slot.status == 0) {
    // nghttp2 reset the stream itself: the response broke HTTP/2's rules.
    error = fmt::format("HTTP/2 stream error {}: malformed response",
                        record::h2_error_name(error_code));
    return Outcome::protocol_error;
  }
  if (plan_.protocol != Protocol::grpc) {
    return plan_.is_ok(slot.status) ? Outcome::ok : record::outcome_of_status(slot.status);
  }
  if (slot.status != 200) {
    return record::outcome_of_status(slot.status);  // an ingress answering, usually
  }
  if (slot.content_type.rfind("application/grpc", 0) != 0) {
    error = fmt::format("content-type '{}' is not application/grpc", slot.content_type);
    return Outcome::protocol_error;
  }
  if (!slot.grpc_status) {
    error = "no grpc-status in the trailers";
    return Outcome::protocol_error;
  }
  if (!slot.framing.complete()) {
    error = "response DATA is not a sequence of length-prefixed gRPC messages";
    return Outcome::protocol_error;
  }
  if (plan_.is_ok_grpc(*slot.grpc_status)) {
    return Outcome::ok;
  }
  int code = *slot.grpc_status;
  std::string_view name = code >= 0 && static_cast<size_t>(code) < kGrpcStatusNames.size()
                              ? kGrpcStatusNames[static_cast<size_t>(code)]
                              : "?";
  error = fmt::format("grpc-status {} {}: {}", code, name, slot.grpc_message);
  return outcome_of_grpc_status(code);
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
