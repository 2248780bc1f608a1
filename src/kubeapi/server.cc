// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "kubeapi/server.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <list>
#include <mutex>
#include <random>
#include <thread>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"
#include "kubeapi/api.h"
#include "kubeapi/certificate.h"

namespace zerodrop::kubeapi {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = asio::ssl::stream<tcp::socket&>;

bool send(TlsStream& socket, std::string_view data) {
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(data.data(), data.size()), ec);
  return !ec;
}

bool send_chunk(TlsStream& socket, std::string_view data) {
  return data.empty() || send(socket, fmt::format("{:x}\r\n{}\r\n", data.size(), data));
}

bool send_stream_head(TlsStream& socket, std::string_view content_type) {
  return send(socket, fmt::format("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nCache-Control: "
                                  "no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n",
                                  content_type));
}

// Streams a watch: the initial objects when no resourceVersion was given, then every change,
// bookmarks when asked, until the timeout, the client leaves or the server stops.
void stream_watch(TlsStream& socket, Api& api, const WatchStream& w) {
  Store& store = api.store();
  if (!send_stream_head(socket, "application/json")) {
    return;
  }
  uint64_t rv = w.since.value_or(0);
  bool first = true;  // a Table's column definitions come with the first event only
  auto send_event = [&](const std::string& type, const nlohmann::json& object) {
    std::string line = api.watch_line(w, type, object, first);
    first = false;
    return send_chunk(socket, line);
  };
  if (!w.since) {
    Store::List list = store.list(w.type->store_key);
    for (const auto& object : list.items) {
      if (api.selected(w, object) && !send_event("ADDED", object)) {
        return;
      }
    }
    rv = list.rv;
  }
  auto deadline = Clock::now() + w.timeout;
  auto bookmark = Clock::now() + api.options().bookmark_interval;
  while (!store.closed() && Clock::now() < deadline) {
    uint64_t now_rv = store.resource_version();
    std::optional<std::vector<WatchEvent>> events = store.since(w.type->store_key, rv);
    if (!events) {
      send_chunk(socket, api.expired_line(rv, now_rv));
      break;
    }
    for (const WatchEvent& e : *events) {
      if (api.selected(w, e.object) && !send_event(e.type, e.object)) {
        return;
      }
      rv = std::max(rv, e.rv);
    }
    rv = std::max(rv, std::min(now_rv, store.resource_version()));
    if (w.bookmarks && Clock::now() >= bookmark) {
      nlohmann::json mark = {{"kind", w.type->kind},
                             {"apiVersion", w.type->api_version()},
                             {"metadata", {{"resourceVersion", std::to_string(rv)}}}};
      if (!send_chunk(socket, api.watch_line(w, "BOOKMARK", mark))) {
        return;
      }
      bookmark = Clock::now() + api.options().bookmark_interval;
    }
    store.wait_past(rv, std::min(deadline, w.bookmarks ? bookmark : deadline));
  }
  send(socket, "0\r\n\r\n");
}

// Streams a pod's log file; when following, what the pod writes next until it is gone.
void stream_log(TlsStream& socket, Api& api, const LogStream& l) {
  if (!send_stream_head(socket, "text/plain")) {
    return;
  }
  std::ifstream file(l.path, std::ios::binary);
  std::string chunk(64 * 1024, '\0');
  bool drained = false;
  for (;;) {
    file.clear();
    file.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    std::streamsize n = file.gcount();
    if (n > 0 && !send_chunk(socket, std::string_view(chunk.data(), static_cast<size_t>(n)))) {
      return;
    }
    if (n > 0) {
      continue;
    }
    if (!l.follow || api.store().closed() || drained) {
      break;
    }
    // A follow ends with the container: once the pod is gone or has finished (a Job's pod),
    // one more read takes what it wrote last.
    std::optional<nlohmann::json> pod = api.store().get("pods", l.pod);
    std::string phase = pod ? (*pod)["status"].value("phase", "") : "";
    if (!pod || phase == "Succeeded" || phase == "Failed") {
      drained = true;
      continue;
    }
    // Poll the file; the store wakes the wait early when the pod changes or the server stops.
    api.store().wait_past(api.store().resource_version(),
                          Clock::now() + std::chrono::milliseconds(100));
  }
  send(socket, "0\r\n\r\n");
}

// Serves one connection until the client closes it, a stream ends or the server stops.
void serve(TlsStream& socket, Api& api) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(8 * 1024 * 1024);
    boost::system::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec) {
      return;
    }
    const auto& req = parser.get();
    HttpRequest request{std::string(req.method_string()),
                        std::string(req.target()),
                        req.body(),
                        std::string(req[http::field::authorization]),
                        std::string(req[http::field::content_type]),
                        std::string(req[http::field::accept])};
    Reply reply = api.handle(request);
    if (auto* w = std::get_if<WatchStream>(&reply)) {
      return stream_watch(socket, api, *w);
    }
    if (auto* l = std::get_if<LogStream>(&reply)) {
      return stream_log(socket, api, *l);
    }
    const HttpResponse& r = std::get<HttpResponse>(reply);
    http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::cache_control, "no-cache, private");
    res.keep_alive(req.keep_alive());
    res.body() = r.body;
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !req.keep_alive()) {
      return;
    }
  }
}

class ServerImpl final : public Server {
public:
  ServerImpl(const Listen& listen, Api& api)
      : tls_(asio::ssl::context::tls_server), acceptor_(io_), api_(api) {
    certificate_ = make_certificate(listen.host);
    tls_.use_certificate_chain(asio::buffer(certificate_.cert_pem));
    tls_.use_private_key(asio::buffer(certificate_.key_pem), asio::ssl::context::pem);
    boost::system::error_code ec;
    tcp::endpoint at(asio::ip::make_address(listen.host), listen.port);
    acceptor_.open(at.protocol(), ec);
    if (!ec) {
      acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
      acceptor_.bind(at, ec);
    }
    if (!ec) {
      acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
      throw Error(fmt::format("--kube-api: cannot listen on {}:{}: {}", listen.host, listen.port,
                              ec.message()));
    }
    host_ = listen.host;
    thread_ = std::thread([this] { accept_loop(); });
  }

  ~ServerImpl() override {
    stopping_ = true;
    api_.store().close();  // ends every watch and log follow
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    thread_.join();
    std::lock_guard lock(mutex_);
    for (Connection& c : connections_) {
      ::shutdown(c.socket->native_handle(), SHUT_RDWR);
    }
    for (Connection& c : connections_) {
      c.thread.join();
    }
  }

  uint16_t port() const override { return acceptor_.local_endpoint().port(); }

  std::string url() const override {
    bool v6 = host_.find(':') != std::string::npos;
    return fmt::format("https://{}{}{}:{}", v6 ? "[" : "", host_, v6 ? "]" : "", port());
  }

  const std::string& ca_pem() const override { return certificate_.cert_pem; }

private:
  struct Connection {
    std::unique_ptr<tcp::socket> socket;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void accept_loop() {
    while (!stopping_) {
      auto socket = std::make_unique<tcp::socket>(io_);
      boost::system::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec || stopping_) {
        return;  // shut down by the destructor
      }
      std::lock_guard lock(mutex_);
      reap();
      auto done = std::make_shared<std::atomic<bool>>(false);
      tcp::socket* raw = socket.get();
      std::thread thread([this, raw, done] {
        TlsStream tls(*raw, tls_);
        boost::system::error_code handshake;
        tls.handshake(asio::ssl::stream_base::server, handshake);
        if (!handshake) {
          serve(tls, api_);
        }
        ::shutdown(raw->native_handle(), SHUT_RDWR);
        *done = true;
      });
      connections_.push_back({std::move(socket), std::move(thread), done});
    }
  }

  // Joins the threads of connections that ended. Called with mutex_ held.
  void reap() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (*it->done) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }

  asio::io_context io_;
  Certificate certificate_;
  asio::ssl::context tls_;
  tcp::acceptor acceptor_;
  Api& api_;
  std::string host_;
  std::thread thread_;
  std::mutex mutex_;
  std::list<Connection> connections_;
  std::atomic<bool> stopping_{false};
};

}  // namespace

Listen parse_listen(const std::string& text) {
  Listen l;
  std::string host = text;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    host = text.substr(1, close == std::string::npos ? close : close - 1);
    port = close != std::string::npos && close + 1 < text.size() && text[close + 1] == ':'
               ? text.substr(close + 2)
               : "";
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    host = text.substr(0, text.find(':'));
    port = text.substr(text.find(':') + 1);
  } else if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    host = "";
    port = text;
  }
  if (host.empty() || host == "localhost") {
    host = "127.0.0.1";
  }
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) {
    throw Error(fmt::format("--kube-api: '{}' is not an IP address", text));
  }
  if (!address.is_loopback()) {
    throw Error(
        fmt::format("--kube-api: {} is not a loopback address; the lab's API listens "
                    "only on 127.0.0.0/8 or ::1",
                    host));
  }
  l.host = address.to_string();
  l.port = port.empty() ? 0 : static_cast<uint16_t>(parse_integer(port, "--kube-api", 0, 65535));
  return l;
}

std::unique_ptr<Server> Server::start(const Listen& listen, Api& api) {
  return std::make_unique<ServerImpl>(listen, api);
}

void write_kubeconfig(const std::string& path, const std::string& url, const std::string& ca_pem,
                      const std::string& token) {
  std::ofstream out(path, std::ios::trunc);
  ::chmod(path.c_str(), 0600);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: zerodrop-lab\n  cluster:\n"
      << "    server: " << url << "\n    certificate-authority-data: " << base64(ca_pem)
      << "\ncontexts:\n- name: zerodrop-lab\n  context:\n"
      << "    cluster: zerodrop-lab\n    user: zerodrop-lab\n    namespace: default\n"
      << "current-context: zerodrop-lab\nusers:\n- name: zerodrop-lab\n  user:\n"
      << "    token: " << token << "\n";
  if (!out.flush()) {
    throw Error(fmt::format("cannot write the kubeconfig '{}'", path));
  }
}

std::string make_token() {
  std::random_device random;  // /dev/urandom on Linux
  std::string token;
  for (int i = 0; i < 4; ++i) {
    token += fmt::format("{:08x}", random());
  }
  return token;
}

}  // namespace zerodrop::kubeapi
