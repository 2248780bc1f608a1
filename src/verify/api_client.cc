#include "verify/api_client.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::verify {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using Socket = asio::local::stream_protocol::socket;

http::verb verb_of(Method method) {
  switch (method) {
    case Method::get:
      return http::verb::get;
    case Method::post:
      return http::verb::post;
    case Method::put:
      return http::verb::put;
    case Method::patch:
      return http::verb::patch;
    case Method::remove:
      return http::verb::delete_;
  }
  return http::verb::get;
}

[[noreturn]] void unreachable(const boost::system::error_code& ec) {
  throw Error(fmt::format("cannot reach the API server through kubectl proxy: {}", ec.message()));
}

// kubectl proxy accepts only local Host headers (its default --accept-hosts).
http::request<http::string_body> make_request(Method method, const std::string& target,
                                              const std::string& body,
                                              std::string_view content_type) {
  http::request<http::string_body> req{verb_of(method), target, 11};
  req.set(http::field::host, "localhost");
  req.set(http::field::user_agent, "zerodrop-verify");
  req.set(http::field::accept, "application/json");
  if (method != Method::get) {
    req.set(http::field::content_type, content_type);
    req.body() = body;
    req.prepare_payload();
  }
  return req;
}

void connect(Socket& socket, const std::string& path) {
  boost::system::error_code ec;
  socket.connect(asio::local::stream_protocol::endpoint(path), ec);
  if (ec) {
    unreachable(ec);
  }
}

}  // namespace

void Cancel::cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  if (fd_ >= 0) {
    ::shutdown(fd_, SHUT_RDWR);  // the reader's blocked recv returns; the socket stays owned
  }
}

bool Cancel::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

bool Cancel::attach(int fd) {
  std::lock_guard lock(mutex_);
  fd_ = fd;
  return !cancelled_;
}

void Cancel::detach() {
  std::lock_guard lock(mutex_);
  fd_ = -1;
}

ApiResponse ApiClient::request(Method method, const std::string& target, const std::string& body,
                               std::string_view content_type) const {
  asio::io_context io;
  Socket socket(io);
  connect(socket, socket_path_);
  boost::system::error_code ec;
  http::write(socket, make_request(method, target, body, content_type), ec);
  if (ec) {
    unreachable(ec);
  }
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);  // a namespace's pods or events: large, never unbounded
  http::read(socket, buffer, parser, ec);
  if (ec) {
    unreachable(ec);
  }
  return {static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

ApiResponse ApiClient::stream(const std::string& target,
                              const std::function<bool(std::string_view)>& on_data,
                              Cancel& cancel) const {
  asio::io_context io;
  Socket socket(io);
  connect(socket, socket_path_);
  if (!cancel.attach(socket.native_handle())) {
    return {0, {}};
  }

  struct Detach {
    Cancel& c;

    ~Detach() { c.detach(); }
  } detach{cancel};

  boost::system::error_code ec;
  http::write(socket, make_request(Method::get, target, {}, {}), ec);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);  // a watch streams for as long as it lasts
  if (!ec) {
    http::read_header(socket, buffer, parser, ec);
  }
  if (ec) {
    if (cancel.cancelled()) {
      return {0, {}};
    }
    unreachable(ec);
  }
  ApiResponse response{static_cast<int>(parser.get().result_int()), {}};
  std::array<char, 16384> data{};
  bool keep = true;
  while (!parser.is_done()) {
    parser.get().body().data = data.data();
    parser.get().body().size = data.size();
    // read_some, not read: read would wait until the buffer is full, holding events back.
    http::read_some(socket, buffer, parser, ec);
    if (ec && ec != http::error::need_buffer) {
      break;  // the server or a cancel ended the stream: the caller resumes or stops
    }
    std::string_view piece(data.data(), data.size() - parser.get().body().size);
    if (!response.ok()) {
      response.body.append(piece.substr(0, 65536 - std::min<size_t>(response.body.size(), 65536)));
    } else if (keep && !piece.empty()) {
      keep = on_data(piece);
    }
    if (!keep) {
      break;
    }
  }
  return response;
}

std::string error_text(const ApiResponse& response) {
  auto json = nlohmann::json::parse(response.body, nullptr, false);
  if (json.is_object() && json.contains("message") && json["message"].is_string()) {
    return json["message"].get<std::string>();
  }
  std::string line = response.body.substr(0, response.body.find('\n'));
  if (line.empty()) {
    return fmt::format("HTTP {}", response.status);
  }
  return line.size() > 300 ? line.substr(0, 300) + "…" : line;
}

std::string rfc3339_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string query_escape(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace zerodrop::verify
