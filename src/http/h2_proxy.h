#pragma once

// An HTTP/2 reverse proxy's two halves, shared by the lab's l7 router and `zerodrop run`'s front
// proxy (includes Asio): a client connection that opened with the h2c preface (prior knowledge)
// is served by an H2Downstream session, which hands each request stream to an H2Router; the
// router sends it over an H2Upstream (h2c) connection to one backend of its choice. Which
// backend, and what to do with a stream the backend never processed, is the router's policy.
// Everything of one proxy runs on one thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "http/proxy_failure.h"

struct nghttp2_session;

namespace zerodrop::http {

// RFC 9113 §3.4: what a client that knows the server speaks HTTP/2 sends first.
inline constexpr std::string_view kH2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Bounds of what a proxy buffers per stream: a request or response body and a header block (as
// the load engine's), so a hostile peer cannot grow it.
inline constexpr size_t kH2BodyLimit = 8 * 1024 * 1024;
inline constexpr size_t kH2HeaderLimit = 64 * 1024;

class H2Upstream;

// One request stream of a client and what became of it. Owned by the client's session while the
// stream is open there, and by the upstream connection carrying it.
struct H2Exchange {
  using Header = std::pair<std::string, std::string>;

  // How the proxy ends the client's stream.
  enum class End : uint8_t {
    answered,  // the backend's response, relayed
    failed,    // the proxy's own error response (`failure`): 502/503/504 or grpc-status
    refused,   // RST_STREAM(REFUSED_STREAM): no backend processed it, the client may resend it
  };

  explicit H2Exchange(boost::asio::io_context& io) : timer(io) {}

  // The request, as received (pseudo-header fields first).
  std::vector<Header> request;
  std::string request_body;
  size_t request_header_bytes = 0;
  bool grpc = false;  // content-type application/grpc…: the proxy answers errors in gRPC

  // The attempts: backends tried (named by the router), the last one current.
  std::vector<std::string> tried;
  std::weak_ptr<H2Upstream> upstream;
  int32_t upstream_stream = 0;
  size_t request_sent = 0;  // body bytes handed to the upstream session
  bool sent = false;        // the request's HEADERS went out to the backend

  // The backend's response, buffered whole before it is relayed.
  std::vector<Header> response;
  std::vector<Header> trailers;
  std::string response_body;
  size_t response_header_bytes = 0;
  size_t response_relayed = 0;  // body bytes handed to the client's session
  bool final_status = false;    // a non-1xx :status arrived; later fields are trailers
  bool rst = false;             // the backend reset the stream

  End end = End::answered;
  ProxyFailure failure = ProxyFailure::none;
  bool completed = false;           // `done` ran, or the client gave up
  bool cancelled = false;           // the client reset or closed the stream: nothing is relayed
  boost::asio::steady_timer timer;  // the upstream timeout
  std::function<void(H2Exchange&)> done;
  std::shared_ptr<void> admission;  // what the router holds while the client's stream is open

  // Forgets the response of a failed attempt before another one.
  void reset_attempt();
};

// Where a client session sends its request streams: the routing policy of one proxy.
class H2Router {
public:
  virtual ~H2Router() = default;

  virtual boost::asio::io_context& io() = 0;
  // Who answers when the proxy answers itself, in its error messages ("router node-1").
  virtual std::string who() const = 0;
  // Sends `exchange` to a backend; completes it (calls its `done`) when it ends.
  virtual void dispatch(const std::shared_ptr<H2Exchange>& exchange) = 0;
  // The client gave up on `exchange`: its stream upstream is reset, nothing more is done.
  virtual void cancel(H2Exchange& exchange) = 0;

  // A new client stream opened; the result is kept until it closes (an in-flight gate's ticket).
  virtual std::shared_ptr<void> admit() { return nullptr; }
};

// What an upstream connection reports to the router that owns it.
class H2Pool {
public:
  virtual ~H2Pool() = default;

  virtual boost::asio::io_context& io() = 0;
  virtual std::chrono::nanoseconds connect_timeout() const = 0;
  // The connection to `backend` failed (`why`): nothing was sent.
  virtual void connect_failed(const std::string& backend, const std::string& why,
                              const std::shared_ptr<H2Exchange>& exchange,
                              ProxyFailure failure) = 0;
  // The backend never processed `exchange` (refused, above its GOAWAY, unsent): safe to resend.
  virtual void unprocessed(const std::shared_ptr<H2Exchange>& exchange) = 0;
  virtual void complete(H2Exchange& exchange, H2Exchange::End end, ProxyFailure failure) = 0;
  // The connection ended: it takes no more streams.
  virtual void forget(const H2Upstream& upstream) = 0;
};

// Completes `exchange` once as `end`/`failure` say, calling its `done`.
void complete_exchange(H2Exchange& exchange, H2Exchange::End end, ProxyFailure failure);

// One client connection speaking h2c: a server session whose request streams go to `router`.
// Handlers never throw; a client that breaks HTTP/2 gets nghttp2's GOAWAY and the connection
// closes. Drain: goaway_notice() then, about one round trip later, goaway_final(); the
// connection closes once its last stream is answered.
class H2Downstream : public std::enable_shared_from_this<H2Downstream> {
public:
  H2Downstream(H2Router& router, boost::asio::ip::tcp::socket client)
      : router_(router), socket_(std::move(client)) {}

  ~H2Downstream();

  // Serves the connection; `preread` holds the bytes read while sniffing the preface.
  void start(std::string preread);

  // RFC 9113 §6.8's first GOAWAY: last stream id 2^31-1, "stop opening streams".
  void goaway_notice();
  // The final GOAWAY with the last stream id this session processed; streams above it are
  // refused by nghttp2, those below it finish.
  void goaway_final();

  bool closed() const { return closed_; }

  // Called once, when the connection has closed.
  void on_closed(std::function<void()> fn) { on_closed_ = std::move(fn); }

  // nghttp2 callbacks (file-local functions in h2_downstream.cc).
  std::shared_ptr<H2Exchange> exchange(int32_t id) const;
  void on_begin_request(int32_t id);
  void on_request_end(int32_t id);
  void on_stream_close(int32_t id);
  void reset(int32_t id, uint32_t code);

private:
  void on_done(int32_t id, H2Exchange& exchange);
  void relay(int32_t id, H2Exchange& exchange);
  void fail(int32_t id, H2Exchange& exchange);
  void receive(const uint8_t* data, size_t n);
  void flush();
  void read();
  void close();

  H2Router& router_;
  boost::asio::ip::tcp::socket socket_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<int32_t, std::shared_ptr<H2Exchange>> streams_;
  std::vector<uint8_t> in_ = std::vector<uint8_t>(16 * 1024);
  std::string out_;
  std::function<void()> on_closed_;
  bool writing_ = false;
  bool closed_ = false;
  bool receiving_ = false;  // inside nghttp2_session_mem_recv: receive() flushes after it
};

// Serves one client connection that began with the h2c preface; `preread` holds the bytes read
// while sniffing it.
std::shared_ptr<H2Downstream> serve_h2(H2Router& router, boost::asio::ip::tcp::socket client,
                                       std::string preread);

}  // namespace zerodrop::http
