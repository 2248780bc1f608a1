#pragma once
// Opening a TCP listener, the one way zerodrop's servers do it. Includes Asio: for the .cc files
// of servers only.

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace zerodrop {

// A TCP listener on `host` (an IP address) and `port` (0 = any free port), with reuse_address and
// close-on-exec set. Throws Error starting with `what` (the flag or the server's name) when `host`
// is not an IP address or the address cannot be bound.
boost::asio::ip::tcp::acceptor open_listener(boost::asio::io_context& io, const std::string& host,
                                             uint16_t port, std::string_view what);

// A TCP port free on 127.0.0.1 right now (the kernel's choice; another process may take it before
// the caller binds it), for servers that must be told their port before they start.
uint16_t pick_free_port();

}  // namespace zerodrop
