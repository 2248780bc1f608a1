#include "verify/agent_watch.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <streambuf>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/exit_code.h"
#include "http/url.h"
#include "load/grpc.h"

namespace zerodrop::verify {

using Json = nlohmann::json;

namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

constexpr size_t kMaxPending = 4 << 20;    // per target, while the watcher does not answer
constexpr uint32_t kHttp2Connections = 2;  // per HTTP/2 or gRPC target

// An ostream's buffer that engine threads write whole lines into (run_agent's Stream writes each
// line under its own lock) and the reporting thread takes complete lines out of.
class LineBuffer : public std::streambuf {
public:
  // The complete lines written so far, taken out.
  std::string take_lines() {
    std::lock_guard lock(mutex_);
    size_t end = data_.rfind('\n');
    if (end == std::string::npos) {
      return {};
    }
    std::string out = data_.substr(0, end + 1);
    data_.erase(0, end + 1);
    return out;
  }

protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      std::lock_guard lock(mutex_);
      data_.push_back(static_cast<char>(c));
    }
    return traits_type::not_eof(c);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard lock(mutex_);
    data_.append(s, static_cast<size_t>(n));
    return n;
  }

private:
  std::mutex mutex_;
  std::string data_;
};

// One target's engine on its own thread.
struct Probe {
  ProbeTarget target;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  LineBuffer buffer;
  std::ostream out{&buffer};
  std::string pending;  // taken from the buffer, not yet accepted by the watcher
  std::mutex error_mutex;
  std::string error;
  std::thread thread;

  ~Probe() {
    stop.store(true);
    if (thread.joinable()) {
      thread.join();
    }
  }
};

// The engine's options: the service-link variables when this pod has them (its node's routing
// of the Service in its own namespace: $POD_NAMESPACE, when set, must be the Service's, or a
// same-named Service of the agent's namespace would be probed), else the ClusterIP URL the
// watcher named.
AgentOptions probe_options(const AgentOptions& base, const ProbeTarget& t, Probe& probe) {
  AgentOptions o = base;
  o.service = t.service;
  o.path = t.path;
  o.url = t.url;
  const char* own = std::getenv("POD_NAMESPACE");
  bool same_namespace = own == nullptr || *own == '\0' || t.svc.starts_with(std::string(own) + "/");
  if (same_namespace) {
    o.url.clear();
    try {
      o.url = agent_target(o, [](const char* name) { return std::getenv(name); });
    } catch (const Error&) {
      o.url = t.url;
    }
  }
  o.load.rate = t.rate;
  o.load.protocol = t.protocol;
  o.load.grpc_method = t.grpc_method;
  if (t.protocol != load::Protocol::http1) {
    // As a gRPC channel or a browser holds HTTP/2: kept-alive connections, a second slot so that
    // a GOAWAY's drain does not hold the next request back while the new connection opens.
    o.load.keepalive = load::Keepalive::on;
    o.load.fresh_share = 0;
    o.load.connections = kHttp2Connections;
    o.load.retry_unprocessed = load::RetryUnprocessed::once;
  }
  if (!t.host.empty()) {
    o.load.headers.emplace_back("Host", t.host);
  }
  o.duration = std::chrono::hours(24 * 365);
  o.stop = &probe.stop;
  return o;
}

void start_probe(const AgentOptions& base, Probe& probe) {
  probe.thread = std::thread([&base, &probe] {
    try {
      if (probe.target.url.empty() && probe.target.service.empty()) {
        throw Error("the watcher named neither a Service nor a URL");
      }
      run_agent(probe_options(base, probe.target, probe), probe.out);
    } catch (const std::exception& e) {
      std::lock_guard lock(probe.error_mutex);
      probe.error = e.what();
    }
    probe.done.store(true);
  });
}

// One POST; returns the answer's body. Throws Error when the watcher cannot be reached or
// answers other than 200.
std::string post(const http::Url& url, const std::string& target, const std::string& body) {
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(url.host, std::to_string(url.port), ec);
  if (!ec) {
    asio::connect(socket, endpoints, ec);
  }
  if (ec) {
    throw Error(
        fmt::format("cannot reach the watcher at {}:{}: {}", url.host, url.port, ec.message()));
  }
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, target, 11};
  req.set(bhttp::field::host, url.host_header);
  req.set(bhttp::field::content_type, "application/x-ndjson");
  req.set(bhttp::field::connection, "close");
  req.body() = body;
  req.prepare_payload();
  bhttp::write(socket, req, ec);
  boost::beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1 << 20);
  if (!ec) {
    bhttp::read(socket, buffer, parser, ec);
  }
  if (ec) {
    throw Error(fmt::format("the watcher at {}:{}: {}", url.host, url.port, ec.message()));
  }
  if (parser.get().result_int() != 200) {
    throw Error(fmt::format("the watcher answered {}: {}", parser.get().result_int(),
                            parser.get().body().substr(0, 200)));
  }
  return std::move(parser.get().body());
}

class Reporter {
public:
  explicit Reporter(const WatchAgentOptions& o) : o_(o), url_(http::parse_url(o.watcher)) {
    url_.target = fmt::format("/agent/v1/report?pod={}&node={}", o.base.pod, o.base.node);
  }

  // One round: what the engines wrote goes to the watcher; its targets start and stop engines.
  void round() {
    std::vector<ReportPart> parts;
    for (auto& [svc, probe] : probes_) {
      probe->pending += probe->buffer.take_lines();
      if (probe->pending.size() > kMaxPending) {
        size_t cut = probe->pending.find('\n', probe->pending.size() - kMaxPending);
        probe->pending.erase(0, cut == std::string::npos ? probe->pending.size() : cut + 1);
      }
      std::lock_guard lock(probe->error_mutex);
      parts.push_back({svc, probe->error, probe->pending});
    }
    std::string answer;
    try {
      answer = post(url_, url_.target, report_body(parts));
    } catch (const Error& e) {
      if (failures_++ % 30 == 0) {
        std::cerr << "zerodrop: verify-agent: " << e.what() << " (lines kept, retrying)\n";
      }
      return;
    }
    failures_ = 0;
    for (auto& [svc, probe] : probes_) {
      probe->pending.clear();
    }
    if (!o_.base.stop || !o_.base.stop->load()) {
      reconcile(parse_probe_targets(answer));
    }
  }

  // Stops every engine (each finishes its in-flight requests and says bye), then reports.
  void finish() {
    for (auto& [svc, probe] : probes_) {
      probe->stop.store(true);
    }
    for (auto& [svc, probe] : probes_) {
      if (probe->thread.joinable()) {
        probe->thread.join();
      }
    }
    for (int attempt = 0; attempt < 3 && !probes_.empty(); ++attempt) {
      failures_ = 1;  // quiet
      round();
      if (failures_ == 0) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }

private:
  void reconcile(const std::vector<ProbeTarget>& targets) {
    std::map<std::string, const ProbeTarget*> wanted;
    for (const ProbeTarget& t : targets) {
      wanted[t.svc] = &t;
    }
    for (auto it = probes_.begin(); it != probes_.end();) {
      auto want = wanted.find(it->first);
      bool changed = want == wanted.end() || !(*want->second == it->second->target);
      if (changed) {
        it->second->stop.store(true);
      }
      // A stopped engine leaves once it has said bye and the watcher has its lines.
      if (it->second->done.load() && it->second->pending.empty()) {
        it = probes_.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& [svc, t] : wanted) {
      if (!probes_.contains(svc)) {
        auto probe = std::make_unique<Probe>();
        probe->target = *t;
        start_probe(o_.base, *probe);
        probes_.emplace(svc, std::move(probe));
      }
    }
  }

  const WatchAgentOptions& o_;
  http::Url url_;
  std::map<std::string, std::unique_ptr<Probe>> probes_;
  uint64_t failures_ = 0;
};

}  // namespace

std::string_view protocol_name(load::Protocol protocol) {
  switch (protocol) {
    case load::Protocol::http2:
      return "http2";
    case load::Protocol::grpc:
      return "grpc";
    case load::Protocol::http1:
      break;
  }
  return "http1";
}

std::optional<load::Protocol> protocol_named(std::string_view name) {
  for (load::Protocol p : {load::Protocol::http1, load::Protocol::http2, load::Protocol::grpc}) {
    if (name == protocol_name(p)) {
      return p;
    }
  }
  return std::nullopt;
}

std::string probe_targets_json(const std::vector<ProbeTarget>& targets) {
  Json list = Json::array();
  for (const ProbeTarget& t : targets) {
    Json j = {{"svc", t.svc},   {"service", t.service}, {"url", t.url},
              {"path", t.path}, {"rate", t.rate},       {"protocol", protocol_name(t.protocol)}};
    if (t.protocol == load::Protocol::grpc) {
      j["method"] = t.grpc_method;
    }
    if (!t.host.empty()) {
      j["host"] = t.host;
    }
    list.push_back(std::move(j));
  }
  return Json{{"targets", list}}.dump();
}

std::vector<ProbeTarget> parse_probe_targets(std::string_view body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("targets") || !j["targets"].is_array()) {
    throw Error("the watcher's answer has no targets array");
  }
  std::vector<ProbeTarget> out;
  for (const Json& t : j["targets"]) {
    if (!t.is_object() || !t.contains("svc") || !t["svc"].is_string()) {
      throw Error("the watcher's answer has a target without svc");
    }
    ProbeTarget p;
    p.svc = t["svc"].get<std::string>();
    p.service = t.value("service", "");
    p.url = t.value("url", "");
    p.path = t.value("path", "/");
    p.rate = t.value("rate", 5.0);
    p.host = t.value("host", "");
    if (p.host.find_first_of("\r\n ") != std::string::npos) {
      throw Error(fmt::format("the watcher's answer gives {} a malformed host", p.svc));
    }
    if (!(p.rate > 0) || p.rate > 10000) {
      throw Error(fmt::format("the watcher's answer gives {} a rate of {}", p.svc, p.rate));
    }
    std::string protocol = t.value("protocol", "http1");
    std::optional<load::Protocol> known = protocol_named(protocol);
    if (!known) {
      throw Error(
          fmt::format("the watcher's answer gives {} protocol '{}' (this agent speaks "
                      "http1, http2, grpc)",
                      p.svc, protocol));
    }
    p.protocol = *known;
    p.grpc_method = t.value("method", "");
    if (p.protocol == load::Protocol::grpc) {
      try {
        load::grpc_path(p.grpc_method);
      } catch (const Error&) {
        throw Error(
            fmt::format("the watcher's answer gives {} gRPC method '{}'", p.svc, p.grpc_method));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string report_body(const std::vector<ReportPart>& parts) {
  std::string body;
  for (const ReportPart& p : parts) {
    Json head = {{"k", "target"}, {"svc", p.svc}};
    if (!p.error.empty()) {
      head["error"] = p.error;
    }
    body += head.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n" + p.lines;
  }
  return body;
}

std::vector<ReportPart> split_report(std::string_view body) {
  std::vector<ReportPart> parts;
  while (!body.empty()) {
    size_t end = body.find('\n');
    std::string_view line = body.substr(0, end);
    body = end == std::string_view::npos ? std::string_view{} : body.substr(end + 1);
    if (line.find(R"("k":"target")") != std::string_view::npos) {
      Json head = Json::parse(line, nullptr, false);
      if (head.is_object() && head.value("k", "") == "target" && head.contains("svc")
          && head["svc"].is_string()) {
        parts.push_back({head["svc"].get<std::string>(), head.value("error", ""), ""});
        continue;
      }
    }
    if (parts.empty()) {
      throw Error("a report that does not start with a target line");
    }
    parts.back().lines.append(line);
    parts.back().lines += '\n';
  }
  return parts;
}

int run_watch_agent(const WatchAgentOptions& o) {
  Reporter reporter(o);
  std::cerr << fmt::format("zerodrop: verify-agent: pod {} on node {} reports to {}\n", o.base.pod,
                           o.base.node, o.watcher);
  auto next = std::chrono::steady_clock::now();
  while (!o.base.stop || !o.base.stop->load()) {
    reporter.round();
    next += o.every;
    while (std::chrono::steady_clock::now() < next && (!o.base.stop || !o.base.stop->load())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  reporter.finish();
  return to_int(ExitCode::ok);
}

}  // namespace zerodrop::verify
