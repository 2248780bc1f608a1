#pragma once

// A fake HTTP/1.1 server on a unix socket, for the unit tests of clients that speak to the
// Kubernetes API through `kubectl proxy`'s socket (verify's ApiClient and what builds on it): one
// request per connection, handed whole (its body read up to Content-Length) to the test's
// handler, whose answer is written as it is, then the connection is closed. Header-only: the
// tests that use it link nothing more.

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

namespace zerodrop::testing {

struct UnixRequest {
  std::string method;
  std::string target;  // path and query, as sent
  std::string body;
};

// An answer with Content-Length (`reason` is only the status line's text).
inline std::string http_answer(int status, const std::string& body,
                               const std::string& reason = "X") {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// An answer whose body ends where the connection closes, as a watch stream's does.
inline std::string close_delimited(int status, const std::string& reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nConnection: close\r\n\r\n"
         + body;
}

class UnixHttpServer {
public:
  using Handler = std::function<std::string(const UnixRequest&)>;

  // Listens on a socket named after `name` in the test's temporary folder. `before_close` (if
  // any) runs after the answer is sent and before the close: a test holds a watch open there.
  // Every handler call is on the server's one thread.
  explicit UnixHttpServer(const std::string& name, Handler handler,
                          std::function<void()> before_close = {})
      : handler_(std::move(handler)), before_close_(std::move(before_close)) {
    path_ = std::filesystem::path(::testing::TempDir())
            / (name + "-" + std::to_string(::getpid()) + ".sock");
    std::filesystem::remove(path_);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    thread_ = std::thread([this] { serve(); });
  }

  ~UnixHttpServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    std::filesystem::remove(path_);
  }

  UnixHttpServer(const UnixHttpServer&) = delete;
  UnixHttpServer& operator=(const UnixHttpServer&) = delete;

  std::string path() const { return path_; }

private:
  // The request's head and its Content-Length body; what a client sent before closing early.
  static UnixRequest read_request(int c) {
    std::string request;
    char buf[4096];
    size_t length = 0;
    size_t head_end = std::string::npos;
    while (head_end == std::string::npos || request.size() < head_end + 4 + length) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) {
        break;
      }
      request.append(buf, static_cast<size_t>(n));
      head_end = request.find("\r\n\r\n");
      size_t cl = request.find("Content-Length: ");
      if (cl != std::string::npos && cl < head_end) {
        length = std::stoul(request.substr(cl + 16));
      }
    }
    UnixRequest out;
    out.method = request.substr(0, request.find(' '));
    size_t start = request.find(' ') + 1;
    out.target = request.substr(start, request.find(' ', start) - start);
    if (head_end != std::string::npos) {
      out.body = request.substr(head_end + 4);
    }
    return out;
  }

  void serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        return;
      }
      std::string answer = handler_(read_request(c));
      // MSG_NOSIGNAL: a client that already closed gets no SIGPIPE into the test process.
      [[maybe_unused]] ssize_t written = ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      if (before_close_) {
        before_close_();
      }
      ::close(c);
    }
  }

  Handler handler_;
  std::function<void()> before_close_;
  std::string path_;
  int fd_ = -1;
  std::thread thread_;
};

}  // namespace zerodrop::testing
