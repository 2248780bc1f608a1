#pragma once
// Internal to src/shim: the accept loop both of zerodrop run's servers use (the readiness
// endpoint and the front proxy).

#include <utility>

#include <boost/asio.hpp>

namespace zerodrop::shim {

// Accepts connections on `acceptor` until it is closed, handing each socket to `on_socket`. A
// failed accept (a client gone before it was accepted) skips that connection only.
template <typename OnSocket>
void accept_loop(boost::asio::ip::tcp::acceptor& acceptor, OnSocket on_socket) {
  acceptor.async_accept(
      [&acceptor, on_socket = std::move(on_socket)](boost::system::error_code ec,
                                                    boost::asio::ip::tcp::socket socket) mutable {
        if (ec == boost::asio::error::operation_aborted || !acceptor.is_open()) {
          return;
        }
        if (!ec) {
          on_socket(std::move(socket));
        }
        accept_loop(acceptor, std::move(on_socket));
      });
}

}  // namespace zerodrop::shim
