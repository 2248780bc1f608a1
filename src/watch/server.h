#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace zerodrop::watch {

// One HTTP request and its answer, as watch's routes see them.
struct HttpRequest {
  std::string method;
  std::string target;  // path and query
  std::string body;
};

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// watch's HTTP server (/metrics, /runs/, /agent/v1/report, /healthz, /readyz): blocking Beast,
// a thread per connection (agents keep at most one each, Prometheus one), request bodies up to
// 16 MiB, idle connections closed after 60 s. The handler runs on the connection's thread.
class HttpServer {
public:
  using Handler = std::function<HttpAnswer(const HttpRequest&)>;

  // Listens on HOST:PORT (PORT 0: a free one). Throws Error naming --listen.
  HttpServer(const std::string& host, uint16_t port, Handler handler);
  ~HttpServer();  // stops accepting, ends every connection, joins
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const { return port_; }

private:
  struct Connections;
  void accept_loop();

  Handler handler_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<Connections> connections_;
  std::thread thread_;
};

// "HOST:PORT", ":PORT" or "PORT" -> host (default 0.0.0.0) and port. Throws Error naming --listen.
std::pair<std::string, uint16_t> parse_listen(const std::string& text);

}  // namespace zerodrop::watch
