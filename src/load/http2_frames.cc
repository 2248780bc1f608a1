#include "load/http2_frames.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "load/http2_session.h"
#include "load/plan.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

using record::Outcome;
using Slot = Http2Session::Slot;

constexpr size_t kMaxHeaderBytes = 64 * 1024;  // as the HTTP/1.1 parser's header block
constexpr size_t kMaxText = 256;               // grpc-message, GOAWAY debug data, backend

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

}  // namespace

ssize_t read_http2_body(nghttp2_session* s, int32_t id, uint8_t* buf, size_t length,
                        uint32_t* flags, nghttp2_data_source*, void* user) {
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
nghttp2_session_callbacks* http2_callbacks() {
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

}  // namespace zerodrop::load
