// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <algorithm>
#include <cstring>
#include <nghttp2/nghttp2.h>

#include <fmt/format.h>

#include "http/h2_nv.h"
#include "http/h2_proxy.h"
#include "http/proxy_exchange.h"

namespace zerodrop::http {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using End = H2Exchange::End;
using Header = H2Exchange::Header;

constexpr int32_t kWindow = (1 << 30) - 1;
constexpr uint32_t kMaxStreams = 1000;  // per client connection, far above the load's --streams
constexpr std::string_view kBackendHeader = "x-pod-name";

H2Downstream& self_of(void* user) {
  return *static_cast<H2Downstream*>(user);
}

int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    self_of(user).on_begin_request(frame->hd.stream_id);
  }
  return 0;
}

// Keeps the request's fields, within kH2HeaderLimit (over it the stream is reset, as the load
// engine resets a response over its bound). Request trailers are dropped: unary RPCs have none.
int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_size,
              const uint8_t* value, size_t value_size, uint8_t, void* user) {
  std::shared_ptr<H2Exchange> ex = self_of(user).exchange(frame->hd.stream_id);
  if (!ex || frame->headers.cat != NGHTTP2_HCAT_REQUEST) {
    return 0;
  }
  ex->request_header_bytes += name_size + value_size + 32;  // RFC 9113 §6.5.2's field size
  if (ex->request_header_bytes > kH2HeaderLimit) {
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  std::string_view n(reinterpret_cast<const char*>(name), name_size);
  std::string_view v(reinterpret_cast<const char*>(value), value_size);
  if (n == "content-type" && v.starts_with("application/grpc")) {
    ex->grpc = true;
  }
  ex->request.emplace_back(n, v);
  return 0;
}

int on_data_chunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t size,
                  void* user) {
  H2Downstream& self = self_of(user);
  std::shared_ptr<H2Exchange> ex = self.exchange(id);
  if (!ex) {
    return 0;
  }
  if (ex->request_body.size() + size > kH2BodyLimit) {
    ex->cancelled = ex->completed = true;  // never dispatched; on_stream_close forgets it
    self.reset(id, NGHTTP2_ENHANCE_YOUR_CALM);
    return 0;
  }
  ex->request_body.append(reinterpret_cast<const char*>(data), size);
  return 0;
}

int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  bool request = frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA;
  if (request && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
    self_of(user).on_request_end(frame->hd.stream_id);
  }
  return 0;
}

int on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* user) {
  self_of(user).on_stream_close(id);
  return 0;
}

ssize_t read_response_body(nghttp2_session* s, int32_t id, uint8_t* buf, size_t length,
                           uint32_t* flags, nghttp2_data_source* source, void*) {
  auto* ex = static_cast<H2Exchange*>(source->ptr);
  size_t n = std::min(length, ex->response_body.size() - ex->response_relayed);
  std::memcpy(buf, ex->response_body.data() + ex->response_relayed, n);
  ex->response_relayed += n;
  if (ex->response_relayed == ex->response_body.size()) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    if (!ex->trailers.empty()) {
      *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      std::vector<nghttp2_nv> nva;
      for (const Header& h : ex->trailers) {
        nva.push_back(h2_nv(h.first, h.second));
      }
      nghttp2_submit_trailer(s, id, nva.data(), nva.size());
    }
  }
  return static_cast<ssize_t>(n);
}

nghttp2_session_callbacks* callbacks() {
  static nghttp2_session_callbacks* table = [] {
    nghttp2_session_callbacks* c = nullptr;
    nghttp2_session_callbacks_new(&c);
    nghttp2_session_callbacks_set_on_begin_headers_callback(c, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(c, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(c, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(c, on_stream_close);
    return c;
  }();
  return table;
}

}  // namespace

H2Downstream::~H2Downstream() {
  nghttp2_session_del(session_);
}

void H2Downstream::start(std::string preread) {
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_no_closed_streams(option, 1);
  nghttp2_session_server_new2(&session_, callbacks(), this, option);
  nghttp2_option_del(option);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, kMaxStreams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindow},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kWindow);
  receive(reinterpret_cast<const uint8_t*>(preread.data()), preread.size());
  if (!closed_) {
    read();
  }
}

void H2Downstream::goaway_notice() {
  if (closed_) {
    return;
  }
  // nghttp2's notice is the GOAWAY with 2^31-1 that does not yet end the session when idle.
  nghttp2_submit_shutdown_notice(session_);
  flush();
}

void H2Downstream::goaway_final() {
  if (closed_) {
    return;
  }
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
  flush();
}

std::shared_ptr<H2Exchange> H2Downstream::exchange(int32_t id) const {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

void H2Downstream::on_begin_request(int32_t id) {
  auto ex = std::make_shared<H2Exchange>(router_.io());
  ex->admission = router_.admit();
  ex->done = [weak = weak_from_this(), id](H2Exchange& done) {
    if (auto self = weak.lock()) {
      self->on_done(id, done);
    }
  };
  streams_[id] = std::move(ex);
}

void H2Downstream::on_request_end(int32_t id) {
  if (std::shared_ptr<H2Exchange> ex = exchange(id)) {
    router_.dispatch(ex);
  }
}

// The stream is over on the client's side: answered, reset by the client or by nghttp2.
void H2Downstream::on_stream_close(int32_t id) {
  auto it = streams_.find(id);
  if (it == streams_.end()) {
    return;
  }
  std::shared_ptr<H2Exchange> ex = std::move(it->second);
  streams_.erase(it);
  ex->admission.reset();
  if (!ex->completed) {
    ex->cancelled = true;
    ex->completed = true;
    ex->timer.cancel();
    router_.cancel(*ex);
  }
}

void H2Downstream::reset(int32_t id, uint32_t code) {
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, code);
}

void H2Downstream::on_done(int32_t id, H2Exchange& exchange) {
  if (closed_ || exchange.cancelled) {
    return;
  }
  switch (exchange.end) {
    case End::answered:
      relay(id, exchange);
      break;
    case End::failed:
      fail(id, exchange);
      break;
    case End::refused:
      reset(id, NGHTTP2_REFUSED_STREAM);  // no pod processed it: the client may resend it
      break;
  }
  flush();
}

// The backend's response as it sent it (the proxy's own header dropped on receipt), naming the
// pod when the router chose one and the pod did not name itself.
void H2Downstream::relay(int32_t id, H2Exchange& ex) {
  std::vector<nghttp2_nv> nva;
  bool named = ex.tried.empty();
  for (const Header& h : ex.response) {
    nva.push_back(h2_nv(h.first, h.second));
    named = named || h.first == kBackendHeader;
  }
  if (!named) {
    nva.push_back(h2_nv(kBackendHeader, ex.tried.back()));
  }
  ex.response_relayed = 0;
  nghttp2_data_provider body{};
  body.source.ptr = &ex;
  body.read_callback = read_response_body;
  bool has_body = !ex.response_body.empty() || !ex.trailers.empty();
  nghttp2_submit_response(session_, id, nva.data(), nva.size(), has_body ? &body : nullptr);
}

// The router's own answer, saying why (the load records the header as router_error): a gRPC
// request gets a trailers-only response with grpc-status UNAVAILABLE (DEADLINE_EXCEEDED for a
// timeout), any other the ingress's 502/503/504.
void H2Downstream::fail(int32_t id, H2Exchange& ex) {
  std::string pod = ex.tried.empty() ? "" : ex.tried.back();
  std::string_view why = http::to_string(ex.failure);
  int status = static_cast<int>(http::gateway_status(ex.failure));
  bool timeout = ex.failure == ProxyFailure::upstream_timeout;
  std::string code = std::to_string(!ex.grpc ? status : timeout ? 4 : 14);
  std::string message =
      fmt::format("{}: {}{}", router_.who(), why, pod.empty() ? "" : " at " + pod);
  std::string status_text = ex.grpc ? "200" : code;  // nva points into it: it outlives the call
  std::vector<nghttp2_nv> nva;
  nva.push_back(h2_nv(":status", status_text));
  if (ex.grpc) {
    nva.push_back(h2_nv("content-type", "application/grpc"));
    nva.push_back(h2_nv("grpc-status", code));
    nva.push_back(h2_nv("grpc-message", message));
  } else {
    nva.push_back(h2_nv("content-type", "text/plain"));
  }
  if (!pod.empty()) {
    nva.push_back(h2_nv(kBackendHeader, pod));
  }
  nva.push_back(h2_nv("x-zerodrop-router-error", why));
  ex.response_body = ex.grpc ? "" : message + "\n";
  ex.trailers.clear();
  ex.response_relayed = 0;
  nghttp2_data_provider body{};
  body.source.ptr = &ex;
  body.read_callback = read_response_body;
  nghttp2_submit_response(session_, id, nva.data(), nva.size(), ex.grpc ? nullptr : &body);
}

void H2Downstream::receive(const uint8_t* data, size_t n) {
  // A client that breaks the protocol gets nghttp2's GOAWAY, and flush closes the connection
  // once it is written (nghttp2 then wants neither to read nor to write); a fatal error (not
  // even the preface) ends it at once.
  receiving_ = true;  // nghttp2 must not be asked for frames from within its own callbacks
  ssize_t used = nghttp2_session_mem_recv(session_, data, n);
  receiving_ = false;
  if (used < 0 && nghttp2_is_fatal(static_cast<int>(used))) {
    close();
    return;
  }
  flush();
}

void H2Downstream::flush() {
  if (writing_ || closed_ || receiving_) {
    return;
  }
  out_.clear();
  while (true) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) {
      break;
    }
    out_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  if (out_.empty()) {
    if (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_)) {
      close();
    }
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_),
                    [self = shared_from_this()](error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->close();
                        return;
                      }
                      self->flush();
                    });
}

void H2Downstream::read() {
  socket_.async_read_some(asio::buffer(in_), [self = shared_from_this()](error_code ec, size_t n) {
    if (ec || self->closed_) {
      self->close();
      return;
    }
    self->receive(self->in_.data(), n);
    if (!self->closed_) {
      self->read();
    }
  });
}

// The client went away (or broke the protocol): every stream still in flight is cancelled.
void H2Downstream::close() {
  if (closed_) {
    return;
  }
  closed_ = true;
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  socket_.close(ignored);
  std::unordered_map<int32_t, std::shared_ptr<H2Exchange>> streams = std::move(streams_);
  streams_.clear();
  for (auto& [id, ex] : streams) {
    ex->admission.reset();
    ex->cancelled = ex->completed = true;
    ex->timer.cancel();
    router_.cancel(*ex);
  }
  if (on_closed_) {
    std::function<void()> fn = std::move(on_closed_);
    fn();
  }
}

std::shared_ptr<H2Downstream> serve_h2(H2Router& router, tcp::socket client, std::string preread) {
  auto session = std::make_shared<H2Downstream>(router, std::move(client));
  session->start(std::move(preread));
  return session;
}

}  // namespace zerodrop::http
