#pragma once
// A blocking HTTP client that sends exact bytes: what a test of a proxy needs to send requests a
// library client would not (pipelined, HTTP/1.0, hop-by-hop headers) and see the bytes that come
// back.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace zerodrop::testing {

// Sends `request` (any number of requests) on one connection to 127.0.0.1:`port` and reads until
// the server closes it or 10 s pass (a stalled exchange then fails its test instead of hanging
// it). Returns what was read, or "errno:N" when the connection failed or was reset before any
// byte; `local_port` gets the client's source port.
inline std::string raw_exchange(uint16_t port, std::string_view request,
                                uint16_t* local_port = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval wait{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    int e = errno;
    ::close(fd);
    return "errno:" + std::to_string(e);
  }
  sockaddr_in me{};
  socklen_t len = sizeof me;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len);
  if (local_port != nullptr) {
    *local_port = ntohs(me.sin_port);
  }
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0) {
      response = response.empty() ? "errno:" + std::to_string(errno) : response;
      break;
    }
    if (n == 0) {
      break;
    }
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return response;
}

// How many times `what` occurs in `text`.
inline size_t occurrences(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The request both proxies' HEAD tests send: a HEAD, then a GET on the same connection.
inline constexpr std::string_view kHeadThenGet =
    "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n"
    "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

// Checks a proxy's answer to kHeadThenGet from a server that sends "Content-Length: 2" on HEAD
// and "ok" on GET: the HEAD answer keeps the length and has no body, the GET follows intact.
inline void expect_head_then_get(const std::string& response) {
  EXPECT_EQ(occurrences(response, "HTTP/1.1 200 OK"), 2u) << response;
  size_t second = response.find("HTTP/1.1", 1);
  ASSERT_NE(second, std::string::npos) << response;
  std::string head = response.substr(0, second);
  EXPECT_NE(head.find("Content-Length: 2\r\n"), std::string::npos) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << "a body after the HEAD response: " << head;
  EXPECT_TRUE(response.ends_with("\r\n\r\nok")) << response;
}

}  // namespace zerodrop::testing
