// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "http/h2_upstream.h"

#include <algorithm>
#include <cstring>
#include <nghttp2/nghttp2.h>

#include "http/h2_nv.h"
#include "http/proxy_exchange.h"

namespace zerodrop::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using End = H2Exchange::End;

namespace {

constexpr int32_t kWindow = (1 << 30) - 1;

H2Upstream& self_of(void* user) {
  return *static_cast<H2Upstream*>(user);
}

int on_upstream_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                       void* user) {
  std::shared_ptr<H2Exchange> ex = self_of(user).exchange(frame->hd.stream_id);
  if (!ex || frame->hd.type != NGHTTP2_HEADERS) {
    return 0;
  }
  ex->response_header_bytes += name_size + value_size + 32;  // RFC 9113 §6.5.2's field size
  if (ex->response_header_bytes > kH2HeaderLimit) {
    ex->failure = ProxyFailure::bad_response;  // nghttp2 resets the stream on this return
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  std::string n(reinterpret_cast<const char*>(name), name_size);
  std::string v(reinterpret_cast<const char*>(value), value_size);
  if (n == ":status" && !v.empty() && v[0] == '1') {
    ex->response.clear();  // an interim response: the final one follows
    return 0;
  }
  if (n == "x-zerodrop-router-error") {
    return 0;  // only the router says why it answered itself: an app cannot forge it
  }
  if (n == ":status") {
    ex->final_status = true;
    ex->response.clear();
    ex->response.emplace_back(std::move(n), std::move(v));
  } else if (ex->final_status && frame->headers.cat == NGHTTP2_HCAT_HEADERS) {
    ex->trailers.emplace_back(std::move(n), std::move(v));
  } else {
    ex->response.emplace_back(std::move(n), std::move(v));
  }
  return 0;
}

int on_upstream_data(nghttp2_session* s, uint8_t, int32_t id, const uint8_t* data, size_t size,
                     void* user) {
  std::shared_ptr<H2Exchange> ex = self_of(user).exchange(id);
  if (!ex) {
    return 0;
  }
  if (ex->response_body.size() + size > kH2BodyLimit) {
    ex->failure = ProxyFailure::body_too_large;
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    return 0;
  }
  ex->response_body.append(reinterpret_cast<const char*>(data), size);
  return 0;
}

int on_upstream_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    self_of(user).on_goaway(frame->goaway.last_stream_id);
  } else if (frame->hd.type == NGHTTP2_RST_STREAM) {
    if (std::shared_ptr<H2Exchange> ex = self_of(user).exchange(frame->hd.stream_id)) {
      ex->rst = true;
    }
  }
  return 0;
}

int on_upstream_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_HEADERS) {
    if (std::shared_ptr<H2Exchange> ex = self_of(user).exchange(frame->hd.stream_id)) {
      ex->sent = true;
    }
  }
  return 0;
}

int on_upstream_stream_close(nghttp2_session*, int32_t id, uint32_t error_code, void* user) {
  self_of(user).on_stream_close(id, error_code);
  return 0;
}

ssize_t read_request_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                          nghttp2_data_source* source, void*) {
  auto* ex = static_cast<H2Exchange*>(source->ptr);
  size_t n = std::min(length, ex->request_body.size() - ex->request_sent);
  std::memcpy(buf, ex->request_body.data() + ex->request_sent, n);
  ex->request_sent += n;
  if (ex->request_sent == ex->request_body.size()) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  }
  return static_cast<ssize_t>(n);
}

nghttp2_session_callbacks* upstream_callbacks() {
  static nghttp2_session_callbacks* table = [] {
    nghttp2_session_callbacks* c = nullptr;
    nghttp2_session_callbacks_new(&c);
    nghttp2_session_callbacks_set_on_header_callback(c, on_upstream_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c, on_upstream_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(c, on_upstream_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(c, on_upstream_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(c, on_upstream_stream_close);
    return c;
  }();
  return table;
}

}  // namespace

void H2Exchange::reset_attempt() {
  upstream.reset();
  upstream_stream = 0;
  request_sent = 0;
  sent = final_status = rst = false;
  response.clear();
  trailers.clear();
  response_body.clear();
  response_header_bytes = 0;
}

void complete_exchange(H2Exchange& exchange, H2Exchange::End end, ProxyFailure failure) {
  if (exchange.completed) {
    return;
  }
  exchange.completed = true;
  exchange.end = end;
  exchange.failure = failure;
  exchange.timer.cancel();
  if (exchange.done) {
    exchange.done(exchange);
  }
}

H2Upstream::~H2Upstream() {
  nghttp2_session_del(session_);
}

bool H2Upstream::takes_streams() const {
  if (ended_ || goaway_) {
    return false;
  }
  size_t limit = session_ == nullptr ? 100  // RFC 9113's recommended minimum, until SETTINGS
                                     : nghttp2_session_get_remote_settings(
                                         session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  return streams_.size() + waiting_.size() < limit;
}

std::shared_ptr<H2Exchange> H2Upstream::exchange(int32_t id) const {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

void H2Upstream::connect() {
  error_code bad;
  tcp::endpoint to(asio::ip::make_address(ip_, bad), port_);
  connect_timer_.expires_after(pool_.connect_timeout());
  connect_timer_.async_wait([weak = weak_from_this()](error_code ec) {
    auto self = weak.lock();
    if (!ec && self && !self->connected_) {
      error_code ignored;
      self->socket_.close(ignored);  // the connect completes with operation_aborted
    }
  });
  socket_.async_connect(to, [self = shared_from_this()](error_code ec) { self->on_connect(ec); });
}

void H2Upstream::on_connect(error_code ec) {
  bool timed_out = ec == asio::error::operation_aborted;
  connect_timer_.cancel();
  if (ec) {
    ended_ = true;
    pool_.forget(*this);
    ProxyFailure failure = timed_out ? ProxyFailure::connect_timeout : connect_failure(ec);
    std::vector<std::shared_ptr<H2Exchange>> waiting = std::move(waiting_);
    std::string why = timed_out ? "connect timed out" : ec.message();
    for (const std::shared_ptr<H2Exchange>& ex : waiting) {
      pool_.connect_failed(name_, why, ex, failure);
    }
    return;
  }
  connected_ = true;
  socket_.set_option(tcp::no_delay(true), ec);
  start_session();
  std::vector<std::shared_ptr<H2Exchange>> waiting = std::move(waiting_);
  for (const std::shared_ptr<H2Exchange>& ex : waiting) {
    send(ex);
  }
  flush();
  read();
}

// A client session as the load engine's: no closed streams kept, no push, large windows.
void H2Upstream::start_session() {
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_no_closed_streams(option, 1);
  nghttp2_session_client_new2(&session_, upstream_callbacks(), this, option);
  nghttp2_option_del(option);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindow},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kWindow);
}

void H2Upstream::submit(const std::shared_ptr<H2Exchange>& exchange) {
  exchange->upstream = weak_from_this();
  if (!connected_) {
    waiting_.push_back(exchange);
    return;
  }
  send(exchange);
  flush();
}

void H2Upstream::send(const std::shared_ptr<H2Exchange>& ex) {
  std::vector<nghttp2_nv> nva;
  nva.reserve(ex->request.size());
  for (const H2Exchange::Header& h : ex->request) {
    nva.push_back(h2_nv(h.first, h.second));
  }
  nghttp2_data_provider body{};
  body.source.ptr = ex.get();
  body.read_callback = read_request_body;
  int32_t id = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(),
                                      ex->request_body.empty() ? nullptr : &body, nullptr);
  if (id < 0) {
    // Stream ids used up (2^31) on this connection: nothing was sent, another one takes it.
    goaway_ = 0;
    pool_.unprocessed(ex);
    return;
  }
  ex->upstream_stream = id;
  streams_[id] = ex;
}

void H2Upstream::cancel(H2Exchange& exchange) {
  auto self = shared_from_this();  // close_if_drained may drop the pool's reference
  auto it = streams_.find(exchange.upstream_stream);
  if (it == streams_.end() || it->second.get() != &exchange || session_ == nullptr) {
    std::erase_if(waiting_, [&](const auto& w) { return w.get() == &exchange; });
    return;
  }
  streams_.erase(it);
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, exchange.upstream_stream, NGHTTP2_CANCEL);
  flush();
  close_if_drained();
}

void H2Upstream::flush() {
  if (writing_ || ended_ || receiving_ || session_ == nullptr) {
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
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_),
                    [self = shared_from_this()](error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->end(ProxyFailure::upstream_reset);
                        return;
                      }
                      self->flush();
                      self->close_if_drained();
                    });
}

void H2Upstream::read() {
  socket_.async_read_some(asio::buffer(in_), [self = shared_from_this()](error_code ec, size_t n) {
    self->on_read(ec, n);
  });
}

void H2Upstream::on_read(error_code ec, size_t n) {
  if (ended_) {
    return;
  }
  if (ec) {
    end(ec == asio::error::eof ? ProxyFailure::upstream_closed : ProxyFailure::upstream_reset);
    return;
  }
  receiving_ = true;  // nghttp2 must not be asked for frames from within its own callbacks
  ssize_t used = nghttp2_session_mem_recv(session_, in_.data(), n);
  receiving_ = false;
  flush();
  if (used < 0 || (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_))) {
    // Done after the backend's GOAWAY, or nghttp2 gave up on what it sent (it said
    // GOAWAY(PROTOCOL_ERROR…) itself).
    end(goaway_ && used >= 0 ? ProxyFailure::upstream_closed : ProxyFailure::bad_response);
    return;
  }
  close_if_drained();
  if (!ended_) {
    read();
  }
}

void H2Upstream::on_goaway(int32_t last_stream_id) {
  goaway_ = last_stream_id;  // nghttp2 closes the streams above it with REFUSED_STREAM
}

void H2Upstream::on_stream_close(int32_t id, uint32_t error_code) {
  auto it = streams_.find(id);
  if (it == streams_.end()) {
    return;  // cancelled, or timed out
  }
  std::shared_ptr<H2Exchange> ex = std::move(it->second);
  streams_.erase(it);
  if (ex->failure != ProxyFailure::none) {
    pool_.complete(*ex, End::failed, ex->failure);  // over a bound: the router's own limit
  } else if (error_code == NGHTTP2_NO_ERROR && ex->final_status) {
    pool_.complete(*ex, End::answered, ProxyFailure::none);
  } else if (error_code == NGHTTP2_REFUSED_STREAM || !ex->sent || (goaway_ && id > *goaway_)) {
    pool_.unprocessed(ex);  // refused by the backend, above its GOAWAY's last stream id, or unsent
  } else {
    pool_.complete(*ex, End::failed,
                   ex->rst ? ProxyFailure::upstream_reset : ProxyFailure::bad_response);
  }
}

// A GOAWAY'd connection with no stream left says GOAWAY itself and closes (RFC 9113 §6.8).
void H2Upstream::close_if_drained() {
  if (ended_ || !goaway_ || !streams_.empty() || writing_ || receiving_) {
    return;
  }
  ended_ = true;
  auto self = shared_from_this();  // the pool's reference goes
  pool_.forget(*this);
  nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
  const uint8_t* data = nullptr;
  ssize_t n = nghttp2_session_mem_send(session_, &data);
  error_code ignored;
  if (n > 0) {
    asio::write(socket_, asio::buffer(data, static_cast<size_t>(n)), ignored);
  }
  socket_.close(ignored);
}

// The connection ended under its streams: those the backend never got (not sent, or above its
// GOAWAY) go elsewhere; the others fail with `failure`.
void H2Upstream::end(ProxyFailure failure) {
  if (ended_) {
    return;
  }
  ended_ = true;
  auto self = shared_from_this();  // the pool's reference goes
  pool_.forget(*this);
  error_code ignored;
  socket_.close(ignored);
  std::unordered_map<int32_t, std::shared_ptr<H2Exchange>> streams = std::move(streams_);
  streams_.clear();
  for (auto& [id, ex] : streams) {
    if (!ex->sent || (goaway_ && id > *goaway_)) {
      pool_.unprocessed(ex);
    } else {
      pool_.complete(*ex, End::failed, failure);
    }
  }
}

}  // namespace zerodrop::http
