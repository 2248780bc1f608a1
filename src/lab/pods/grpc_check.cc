// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pods/grpc_check.h"

#include <array>
#include <charconv>
#include <nghttp2/nghttp2.h>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "http/h2_nv.h"
#include "load/grpc.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using Tcp = asio::ip::tcp;

constexpr std::string_view kHealthPath = "/grpc.health.v1.Health/Check";
constexpr size_t kMaxBody = 64 * 1024;  // a HealthCheckResponse is 2 bytes; more is not one
constexpr auto kServingNames =
    std::to_array<std::string_view>({"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"});

// A protobuf varint at `at`, advancing it; nullopt when it runs past the end.
std::optional<uint64_t> varint(std::string_view in, size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; at < in.size() && shift < 64; shift += 7) {
    auto byte = static_cast<uint8_t>(in[at++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return value;
    }
  }
  return std::nullopt;
}

std::string_view view(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// One probe: connect, SETTINGS and the Check request, then the response's headers, message and
// trailers. Everything runs on the io_context's thread; nghttp2's callbacks reach it by `user`.
class GrpcCheck final : public Check {
public:
  GrpcCheck(asio::io_context& io, const ProbeSpec& spec, const CheckTarget& target,
            Duration timeout, Done done)
      : socket_(io),
        timer_(io),
        target_(target),
        authority_(fmt::format("{}:{}", target.ip, target.port)),
        body_(health_check_request(spec.service)),
        timeout_(timeout),
        done_(std::move(done)) {}

  ~GrpcCheck() override { nghttp2_session_del(session_); }

  void begin() {
    timer_.expires_after(timeout_);
    timer_.async_wait([self = shared()](error_code ec) {
      if (!ec) {
        self->finish(false, fmt::format("timed out after {}", format_duration(self->timeout_)));
      }
    });
    error_code ec;
    Tcp::endpoint endpoint(asio::ip::make_address(target_.ip, ec), target_.port);
    socket_.async_connect(endpoint, [self = shared()](error_code e) { self->connected(e); });
  }

  void cancel() override {
    done_ = nullptr;
    close();
  }

  // From nghttp2's callbacks.
  void on_header(std::string_view name, std::string_view value) {
    if (name == ":status") {
      std::from_chars(value.data(), value.data() + value.size(), status_);
    } else if (name == "grpc-status") {
      int code = -1;
      std::from_chars(value.data(), value.data() + value.size(), code);
      grpc_status_ = code;
    } else if (name == "grpc-message") {
      grpc_message_.clear();
      load::percent_decode(value, grpc_message_, 256);
    }
  }

  void on_data(std::string_view data) {
    if (response_.size() + data.size() <= kMaxBody) {
      response_.append(data);
    }
  }

  void on_closed(uint32_t error_code) {
    auto [ok, why] = verdict(error_code);
    finish(ok, std::move(why));
  }

  size_t send_body(uint8_t* buf, size_t length, uint32_t* flags) {
    size_t n = std::min(length, body_.size() - body_sent_);
    std::copy_n(body_.data() + body_sent_, n, buf);
    body_sent_ += n;
    if (body_sent_ == body_.size()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return n;
  }

private:
  std::shared_ptr<GrpcCheck> shared() {
    return std::static_pointer_cast<GrpcCheck>(shared_from_this());
  }

  void close() {
    timer_.cancel();
    error_code ignored;
    socket_.close(ignored);
  }

  void finish(bool ok, std::string why) {
    close();
    if (done_) {
      auto done = std::move(done_);
      done_ = nullptr;
      done(ok, std::move(why));
    }
  }

  std::pair<bool, std::string> verdict(uint32_t error_code) const {
    if (status_ != 200) {
      return {false, status_ == 0
                         ? fmt::format("stream reset ({})", nghttp2_http2_strerror(error_code))
                         : fmt::format("HTTP status {}", status_)};
    }
    if (!grpc_status_) {
      return {false, "no grpc-status in the response"};
    }
    if (*grpc_status_ != 0) {
      auto code = static_cast<size_t>(*grpc_status_);
      std::string_view name = code < load::kGrpcStatusNames.size() ? load::kGrpcStatusNames[code]
                                                                   : std::string_view("?");
      return {false, fmt::format("grpc-status {} {}: {}", code, name, grpc_message_)};
    }
    std::optional<int> serving = health_status(response_);
    if (!serving) {
      return {false, "malformed HealthCheckResponse"};
    }
    if (*serving != 1) {
      auto s = static_cast<size_t>(*serving);
      return {false,
              fmt::format("health status {}",
                          s < kServingNames.size() ? kServingNames[s] : std::string_view("?"))};
    }
    return {true, ""};
  }

  void connected(error_code ec);
  void flush();
  void read();

  Tcp::socket socket_;
  asio::steady_timer timer_;
  CheckTarget target_;
  std::string authority_;
  std::string body_;  // the framed request
  size_t body_sent_ = 0;
  Duration timeout_;
  Done done_;
  nghttp2_session* session_ = nullptr;
  std::string out_;
  std::array<uint8_t, 16 * 1024> in_{};
  bool writing_ = false;
  int status_ = 0;
  std::optional<int> grpc_status_;
  std::string grpc_message_;
  std::string response_;
};

GrpcCheck& check_of(void* user) {
  return *static_cast<GrpcCheck*>(user);
}

int on_header(nghttp2_session*, const nghttp2_frame*, const uint8_t* name, size_t name_size,
              const uint8_t* value, size_t value_size, uint8_t, void* user) {
  check_of(user).on_header(view(name, name_size), view(value, value_size));
  return 0;
}

int on_data_chunk(nghttp2_session*, uint8_t, int32_t, const uint8_t* data, size_t size,
                  void* user) {
  check_of(user).on_data(view(data, size));
  return 0;
}

int on_stream_close(nghttp2_session*, int32_t, uint32_t error_code, void* user) {
  check_of(user).on_closed(error_code);
  return 0;
}

ssize_t read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                  nghttp2_data_source*, void* user) {
  return static_cast<ssize_t>(check_of(user).send_body(buf, length, flags));
}

nghttp2_session_callbacks* callbacks() {
  static nghttp2_session_callbacks* table = [] {
    nghttp2_session_callbacks* c = nullptr;
    nghttp2_session_callbacks_new(&c);
    nghttp2_session_callbacks_set_on_header_callback(c, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(c, on_stream_close);
    return c;
  }();
  return table;
}

void GrpcCheck::connected(error_code ec) {
  if (!done_) {
    return;
  }
  if (ec) {
    finish(false, ec.message());
    return;
  }
  nghttp2_session_client_new(&session_, callbacks(), this);
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
  const nghttp2_nv nva[] = {http::h2_nv(":method", "POST"),
                            http::h2_nv(":scheme", "http"),
                            http::h2_nv(":authority", authority_),
                            http::h2_nv(":path", kHealthPath),
                            http::h2_nv("content-type", "application/grpc"),
                            http::h2_nv("te", "trailers"),
                            http::h2_nv("user-agent", "kube-probe/zerodrop-lab")};
  nghttp2_data_provider provider{};
  provider.read_callback = read_body;
  int32_t id = nghttp2_submit_request(session_, nullptr, nva, std::size(nva), &provider, nullptr);
  if (id < 0) {
    finish(false, fmt::format("HTTP/2: {}", nghttp2_strerror(id)));
    return;
  }
  flush();
  read();
}

void GrpcCheck::flush() {
  if (writing_ || !done_) {
    return;
  }
  out_.clear();
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) {
      finish(false, fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n))));
      return;
    }
    if (n == 0) {
      break;
    }
    out_.append(view(data, static_cast<size_t>(n)));
  }
  if (out_.empty()) {
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_), [self = shared()](error_code ec, size_t) {
    self->writing_ = false;
    if (ec) {
      self->finish(false, ec.message());
      return;
    }
    self->flush();
  });
}

void GrpcCheck::read() {
  socket_.async_read_some(asio::buffer(in_), [self = shared()](error_code ec, size_t n) {
    if (!self->done_) {
      return;
    }
    if (ec) {
      self->finish(false,
                   ec == asio::error::eof ? "connection closed before the response" : ec.message());
      return;
    }
    ssize_t used = nghttp2_session_mem_recv(self->session_, self->in_.data(), n);
    if (used < 0) {
      self->finish(false, fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(used))));
      return;
    }
    if (self->done_) {  // the stream has not closed yet
      self->flush();
      self->read();
    }
  });
}

}  // namespace

std::string health_check_request(std::string_view service) {
  std::string message;
  if (!service.empty()) {
    message.push_back('\x0a');  // field 1, length-delimited
    for (size_t n = service.size();; n >>= 7) {
      message.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
      if (n <= 0x7f) {
        break;
      }
    }
    message.append(service);
  }
  return load::grpc_frame(message);
}

std::optional<int> health_status(std::string_view framed) {
  if (framed.size() < 5 || framed[0] != 0) {
    return std::nullopt;
  }
  uint32_t length = 0;
  for (size_t i = 1; i < 5; ++i) {
    length = length << 8 | static_cast<uint8_t>(framed[i]);
  }
  std::string_view message = framed.substr(5);
  if (message.size() != length) {
    return std::nullopt;
  }
  int status = 0;
  for (size_t at = 0; at < message.size();) {
    std::optional<uint64_t> key = varint(message, at);
    std::optional<uint64_t> value = key ? varint(message, at) : std::nullopt;
    if (!value || (*key & 7) > 2 || (*key & 7) == 1) {
      return std::nullopt;  // only varint and length-delimited fields occur here
    }
    if ((*key & 7) == 2) {
      if (*value > message.size() - at) {
        return std::nullopt;
      }
      at += *value;
    } else if (*key >> 3 == 1) {
      status = static_cast<int>(*value);
    }
  }
  return status;
}

std::shared_ptr<Check> start_grpc_check(asio::io_context& io, const ProbeSpec& spec,
                                        const CheckTarget& target, Duration timeout,
                                        Check::Done done) {
  auto check = std::make_shared<GrpcCheck>(io, spec, target, timeout, std::move(done));
  check->begin();
  return check;
}

}  // namespace zerodrop::lab
