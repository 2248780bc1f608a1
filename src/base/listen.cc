// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "base/listen.h"

#include <fcntl.h>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

tcp::acceptor open_listener(asio::io_context& io, const std::string& host, uint16_t port,
                            std::string_view what) {
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) {
    throw Error(fmt::format("{}: expected an IP address, got '{}'", what, host));
  }
  tcp::endpoint endpoint(address, port);
  tcp::acceptor acceptor(io);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    // Not inherited by child processes (Asio opens sockets without SOCK_CLOEXEC): an app or pod
    // holding the listener open would keep it accepting after its owner closed it.
    ::fcntl(acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  }
  if (!ec) {
    acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    throw Error(fmt::format("{}: cannot listen on {}:{}: {}", what, host, port, ec.message()));
  }
  return acceptor;
}

uint16_t pick_free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

}  // namespace zerodrop
