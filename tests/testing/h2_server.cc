#include "testing/h2_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <nghttp2/nghttp2.h>
#include <stdexcept>
#include <thread>

namespace zerodrop::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kModeNames = std::to_array<std::string_view>({
    "ok",
    "grpc-status",
    "goaway-graceful",
    "goaway-single",
    "goaway-error",
    "refuse",
    "rst",
    "close-no-goaway",
    "close-mid-stream",
    "stall",
    "no-trailers",
    "wrong-content-type",
    "huge-headers",
    "garbage-frames",
    "max-streams",
});
static_assert(kModeNames.size() == static_cast<size_t>(H2Mode::max_streams) + 1);

// An empty gRPC message: the uncompressed flag and a zero length.
constexpr std::string_view kEmptyMessage("\0\0\0\0\0", 5);

nghttp2_nv nv(std::string_view name, std::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

std::optional<H2Mode> h2_mode_from_string(std::string_view name) {
  auto it = std::find(kModeNames.begin(), kModeNames.end(), name);
  if (it == kModeNames.end()) {
    return std::nullopt;
  }
  return static_cast<H2Mode>(it - kModeNames.begin());
}

std::vector<std::string_view> h2_mode_names() {
  return {kModeNames.begin(), kModeNames.end()};
}

// One accepted connection, served on its own thread.
class H2Connection {
public:
  H2Connection(int fd, const H2ServerOptions& options, std::atomic<uint64_t>& requests,
               std::atomic<uint32_t>& max_concurrent, const std::atomic<bool>& stop)
      : fd_(fd),
        options_(options),
        requests_(requests),
        max_concurrent_(max_concurrent),
        stop_(stop) {}

  ~H2Connection() {
    nghttp2_session_del(session_);
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }

  void serve();

private:
  struct Body {
    std::string data;
    size_t sent = 0;
    bool trailers = false;  // gRPC trailers follow the DATA
    bool end = true;        // END_STREAM on the last DATA (false: close_mid_stream keeps it open)
  };

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* user);
  static ssize_t read_body(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                           uint32_t* flags, nghttp2_data_source*, void* user);

  void on_request(int32_t id);
  void act(int32_t id);
  void answer(int32_t id, H2Mode mode);
  void respond(int32_t id, std::string_view status, std::string_view content_type, Body body,
               size_t extra_headers = 0);
  bool flush();
  void write_all(const uint8_t* data, size_t n);

  void close_now() { closing_ = true; }

  void linger();

  int fd_;
  const H2ServerOptions& options_;
  std::atomic<uint64_t>& requests_;
  std::atomic<uint32_t>& max_concurrent_;
  const std::atomic<bool>& stop_;
  nghttp2_session* session_ = nullptr;
  std::map<int32_t, Body> bodies_;
  std::vector<std::pair<Clock::time_point, int32_t>> due_;  // delayed answers
  uint32_t handled_ = 0;                                    // requests on this connection
  uint32_t open_ = 0;
  bool closing_ = false;
  bool drain_after_ping_ = false;
};

int H2Connection::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto& self = *static_cast<H2Connection*>(user);
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    self.max_concurrent_ = std::max(self.max_concurrent_.load(), ++self.open_);
  }
  bool request_end = (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA)
                     && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (request_end) {
    self.on_request(frame->hd.stream_id);
  }
  if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0
      && self.drain_after_ping_) {
    // The second GOAWAY of a graceful shutdown, once the client has seen the first.
    nghttp2_submit_goaway(self.session_, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(self.session_), NGHTTP2_NO_ERROR,
                          nullptr, 0);
    self.drain_after_ping_ = false;
  }
  return 0;
}

int H2Connection::on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* user) {
  auto& self = *static_cast<H2Connection*>(user);
  self.bodies_.erase(id);
  --self.open_;
  return 0;
}

ssize_t H2Connection::read_body(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                                uint32_t* flags, nghttp2_data_source*, void* user) {
  auto& self = *static_cast<H2Connection*>(user);
  Body& body = self.bodies_[id];
  size_t n = std::min(length, body.data.size() - body.sent);
  std::copy_n(body.data.data() + body.sent, n, buf);
  body.sent += n;
  if (body.sent < body.data.size()) {
    return static_cast<ssize_t>(n);
  }
  if (!body.end) {
    self.close_now();  // close_mid_stream: the rest never comes
    return n == 0 ? ssize_t{NGHTTP2_ERR_DEFERRED} : static_cast<ssize_t>(n);
  }
  *flags |= NGHTTP2_DATA_FLAG_EOF;
  if (body.trailers) {
    *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
    std::string status =
        std::to_string(self.options_.mode == H2Mode::grpc_status ? self.options_.code : 0);
    const nghttp2_nv trailers[] = {
        nv("grpc-status", status),
        nv("grpc-message", self.options_.mode == H2Mode::grpc_status ? "boom%20here" : "")};
    nghttp2_submit_trailer(session, id, trailers, 2);
  }
  return static_cast<ssize_t>(n);
}

void H2Connection::on_request(int32_t id) {
  ++requests_;
  if (options_.delay.count() > 0) {
    due_.emplace_back(Clock::now() + options_.delay, id);
    return;
  }
  act(id);
}

void H2Connection::act(int32_t id) {
  uint32_t number = handled_++;
  answer(id, number < options_.after ? H2Mode::ok : options_.mode);
}

void H2Connection::answer(int32_t id, H2Mode mode) {
  if (closing_) {
    // Already ended (one GOAWAY per connection: a second one with a higher last stream id, for
    // a request read in the same batch, would break RFC 9113 §6.8 and fail the client's session).
    return;
  }
  bool grpc = options_.grpc == Grpc::on;
  std::string_view type = grpc ? "application/grpc" : "text/plain";
  std::string ok_body = grpc ? std::string(kEmptyMessage) : std::string("ok");
  switch (mode) {
    case H2Mode::ok:
    case H2Mode::grpc_status:
    case H2Mode::max_streams:
      respond(id, "200", type, {ok_body, 0, grpc});
      break;
    case H2Mode::goaway_graceful:
      if (!drain_after_ping_) {
        nghttp2_submit_shutdown_notice(session_);
        nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, nullptr);
        drain_after_ping_ = true;
      }
      respond(id, "200", type, {ok_body, 0, grpc});
      break;
    case H2Mode::goaway_single:
      nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, id - 2, NGHTTP2_NO_ERROR, nullptr, 0);
      close_now();
      break;
    case H2Mode::goaway_error: {
      static constexpr std::string_view kDebug = "Cancelling all calls";
      nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_INTERNAL_ERROR,
                            reinterpret_cast<const uint8_t*>(kDebug.data()), kDebug.size());
      close_now();
      break;
    }
    case H2Mode::refuse:
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
      break;
    case H2Mode::rst:
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                static_cast<uint32_t>(options_.code));
      break;
    case H2Mode::close_no_goaway:
      ::shutdown(fd_, SHUT_RDWR);
      closing_ = true;
      break;
    case H2Mode::close_mid_stream:
      respond(id, "200", type, {std::string(1000, 'x'), 0, false, false});
      break;
    case H2Mode::stall:
      break;
    case H2Mode::no_trailers:
      respond(id, "200", "application/grpc", {ok_body, 0, false});
      break;
    case H2Mode::wrong_content_type:
      respond(id, "200", "text/html", {ok_body, 0, true});
      break;
    case H2Mode::huge_headers:
      respond(id, "200", type, {ok_body, 0, grpc}, 100);
      break;
    case H2Mode::garbage_frames: {
      static constexpr uint8_t kDataOnStream0[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 'x'};
      flush();
      write_all(kDataOnStream0, sizeof kDataOnStream0);
      break;
    }
  }
}

void H2Connection::respond(int32_t id, std::string_view status, std::string_view content_type,
                           Body body, size_t extra_headers) {
  bodies_[id] = std::move(body);
  std::vector<nghttp2_nv> headers = {nv(":status", status), nv("content-type", content_type),
                                     nv("x-pod-name", options_.name)};
  static const std::string kFiller(1000, 'h');
  std::vector<std::string> names;
  for (size_t i = 0; i < extra_headers; ++i) {
    names.push_back("x-filler-" + std::to_string(i));
  }
  for (const std::string& name : names) {
    headers.push_back(nv(name, kFiller));
  }
  nghttp2_data_provider provider{};
  provider.read_callback = read_body;
  nghttp2_submit_response(session_, id, headers.data(), headers.size(), &provider);
}

void H2Connection::write_all(const uint8_t* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd_, data, n, MSG_NOSIGNAL);
    if (w <= 0) {
      closing_ = true;
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// Sends what nghttp2 has; false once the connection is over.
bool H2Connection::flush() {
  while (true) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) {
      break;
    }
    write_all(data, static_cast<size_t>(n));
  }
  return !closing_ && (nghttp2_session_want_read(session_) || nghttp2_session_want_write(session_));
}

void H2Connection::serve() {
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_max_send_header_block_length(option, 1 << 20);  // huge_headers: 64 KiB+
  nghttp2_session_server_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  uint32_t max = options_.mode == H2Mode::max_streams ? static_cast<uint32_t>(options_.code) : 1000;
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max}};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1);
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::array<uint8_t, 16384> buffer{};
  while (!stop_ && flush()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5) > 0) {
      ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
      if (n <= 0 || nghttp2_session_mem_recv(session_, buffer.data(), static_cast<size_t>(n)) < 0) {
        break;
      }
    }
    auto now = Clock::now();
    for (size_t i = 0; i < due_.size();) {
      if (due_[i].first <= now) {
        int32_t id = due_[i].second;
        due_.erase(due_.begin() + static_cast<std::ptrdiff_t>(i));
        act(id);
      } else {
        ++i;
      }
    }
  }
  if (closing_) {
    linger();
  }
}

// A close() with bytes still unread makes the kernel send a reset, and a reset can overtake the
// frames already sent: the client's kernel drops what it had not yet read, so a client slower to
// read (an ASan build) never saw the half answer this close was there to cut. As nginx's
// lingering_close: FIN after the last frame, then read and drop what the client still sends until
// it closes too (or a second passes).
void H2Connection::linger() {
  ::shutdown(fd_, SHUT_WR);
  std::array<uint8_t, 4096> sink{};
  auto until = Clock::now() + std::chrono::seconds(1);
  while (!stop_ && Clock::now() < until) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5) > 0 && ::recv(fd_, sink.data(), sink.size(), 0) <= 0) {
      return;
    }
  }
}

struct H2Server::Impl {
  H2ServerOptions options;
  int listener = -1;
  uint16_t port = 0;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> connections{0};
  std::atomic<uint32_t> max_concurrent{0};
  std::mutex mutex;
  std::vector<std::thread> threads;
  std::thread acceptor;

  void accept_loop() {
    while (!stop) {
      pollfd p{listener, POLLIN, 0};
      if (::poll(&p, 1, 5) <= 0) {
        continue;
      }
      int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) {
        continue;
      }
      ++connections;
      std::lock_guard lock(mutex);
      threads.emplace_back([this, fd] {
        H2Connection connection(fd, options, requests, max_concurrent, stop);
        connection.serve();
      });
    }
  }
};

H2Server::H2Server(H2ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(impl_->options.port);
  inet_pton(AF_INET, impl_->options.host.c_str(), &address.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0
      || ::listen(fd, 1024) != 0) {
    ::close(fd);
    throw std::runtime_error("h2-server: cannot listen on " + impl_->options.host);
  }
  socklen_t size = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  impl_->listener = fd;
  impl_->port = ntohs(address.sin_port);
  impl_->acceptor = std::thread([this] { impl_->accept_loop(); });
}

H2Server::~H2Server() {
  impl_->stop = true;
  impl_->acceptor.join();
  std::lock_guard lock(impl_->mutex);
  for (std::thread& t : impl_->threads) {
    t.join();
  }
  ::close(impl_->listener);
}

uint16_t H2Server::port() const {
  return impl_->port;
}

std::string H2Server::url(std::string_view path) const {
  return "http://" + impl_->options.host + ":" + std::to_string(impl_->port) + std::string(path);
}

uint64_t H2Server::requests() const {
  return impl_->requests;
}

uint64_t H2Server::connections() const {
  return impl_->connections;
}

uint32_t H2Server::max_concurrent() const {
  return impl_->max_concurrent;
}

}  // namespace zerodrop::testing
