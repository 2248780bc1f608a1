#pragma once

// Internal to the HTTP/2 proxies (includes Asio): one h2c connection to one backend.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio.hpp>

#include "http/h2_proxy.h"

namespace zerodrop::http {

// One h2c connection (prior knowledge) from a proxy to a backend (`name`: a pod, the app),
// carrying streams of any client. Handlers never throw; a connection that ends hands each of its
// streams back to `pool` as completed or unprocessed.
class H2Upstream : public std::enable_shared_from_this<H2Upstream> {
public:
  H2Upstream(H2Pool& pool, std::string name, std::string ip, uint16_t port)
      : pool_(pool),
        name_(std::move(name)),
        ip_(std::move(ip)),
        port_(port),
        socket_(pool.io()),
        connect_timer_(pool.io()) {}

  ~H2Upstream();

  const std::string& name() const { return name_; }

  // Whether a new stream may go here: not draining, and below the backend's stream limit.
  bool takes_streams() const;
  void connect();
  void submit(const std::shared_ptr<H2Exchange>& exchange);
  void cancel(H2Exchange& exchange);

  // nghttp2 callbacks (file-local functions below).
  std::shared_ptr<H2Exchange> exchange(int32_t id) const;
  void on_goaway(int32_t last_stream_id);
  void on_stream_close(int32_t id, uint32_t error_code);

private:
  void on_connect(boost::system::error_code ec);
  void start_session();
  void send(const std::shared_ptr<H2Exchange>& exchange);
  void flush();
  void read();
  void on_read(boost::system::error_code ec, size_t n);
  void end(ProxyFailure failure);
  void close_if_drained();

  H2Pool& pool_;
  std::string name_;
  std::string ip_;
  uint16_t port_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer connect_timer_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<int32_t, std::shared_ptr<H2Exchange>> streams_;
  std::vector<std::shared_ptr<H2Exchange>> waiting_;  // until the connection is up
  std::vector<uint8_t> in_ = std::vector<uint8_t>(16 * 1024);
  std::string out_;
  std::optional<int32_t> goaway_;  // the last stream id of the backend's latest GOAWAY
  bool connected_ = false;
  bool writing_ = false;
  bool ended_ = false;
  bool receiving_ = false;  // inside nghttp2_session_mem_recv: on_read flushes after it
};

}  // namespace zerodrop::http
