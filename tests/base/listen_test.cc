#include "base/listen.h"

#include <fcntl.h>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop {
namespace {

TEST(OpenListener, ListensOnAFreePortClosedOnExec) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor = open_listener(io, "127.0.0.1", 0, "--listen");
  EXPECT_TRUE(acceptor.is_open());
  EXPECT_NE(acceptor.local_endpoint().port(), 0);
  // A child process (a pod, the app) must not inherit it and keep it accepting.
  EXPECT_TRUE(::fcntl(acceptor.native_handle(), F_GETFD) & FD_CLOEXEC);
}

TEST(OpenListener, ErrorsNameWhatWasListening) {
  boost::asio::io_context io;
  try {
    open_listener(io, "localhost", 0, "router node-1");
    FAIL() << "a host name is not an IP address";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "router node-1: expected an IP address, got 'localhost'");
  }
  boost::asio::ip::tcp::acceptor taken = open_listener(io, "127.0.0.1", 0, "first");
  uint16_t port = taken.local_endpoint().port();  // still listening
  try {
    open_listener(io, "127.0.0.1", port, "--ready-port");
    FAIL() << "port " << port << " is taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--ready-port: cannot listen on 127.0.0.1:"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zerodrop
