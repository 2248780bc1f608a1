#include "verify/agent.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "base/error.h"
#include "base/exit_code.h"
#include "base/version.h"

namespace zerodrop::verify {

using record::Micros;

using Json = nlohmann::json;  // not `json`: other files of the unity build name variables so

namespace {

// "my-svc" -> "MY_SVC", as kubelet names a Service's link variables.
std::string link_name(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

int64_t wall_us(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// The stream on stdout: numbered lines, whole lines only, flushed as they are written (verify
// reads them live through the log follow).
class Stream {
public:
  explicit Stream(std::ostream& out) : out_(out) {}

  void line(Json j) {
    std::lock_guard lock(mutex_);
    j["n"] = n_++;
    out_ << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n' << std::flush;
  }

  // A req line: the request in requests.ndjson's form under "r".
  void request(const record::RequestRecord& r) {
    std::ostringstream text;
    record::write_ndjson(text, r);
    std::string body = text.str();
    body.pop_back();  // its '\n'
    std::lock_guard lock(mutex_);
    out_ << R"({"k":"req","n":)" << n_++ << R"(,"r":)" << body << "}\n" << std::flush;
  }

  // A bucket line.
  void bucket(const BackendBucket& b) {
    Json j = to_json(b);
    j["k"] = "bucket";
    line(std::move(j));
  }

  uint64_t lines() const {
    std::lock_guard lock(mutex_);
    return n_;
  }

private:
  std::ostream& out_;
  mutable std::mutex mutex_;
  uint64_t n_ = 0;
};

// The fresh engine's request numbers start here, apart from the kept-alive engine's.
constexpr uint64_t kFreshSeq = 1'000'000'000;

// What the stream carries of each finished request: the request itself (every one, or the
// failed ones) and, in the compact form, its share of a bucket, written once settled.
class Records {
public:
  Records(Stream& stream, AgentRecords mode, Duration timeout)
      : stream_(stream), mode_(mode), bucketer_(timeout + std::chrono::seconds(1)) {}

  void add(const record::RequestRecord& r) {
    if (mode_ == AgentRecords::all || r.failed) {
      stream_.request(r);
    }
    if (mode_ == AgentRecords::all) {
      return;
    }
    std::vector<BackendBucket> settled;
    {
      std::lock_guard lock(mutex_);
      bucketer_.add(r);
      now_ = std::max(now_, r.done);
      settled = bucketer_.take(now_);
    }
    for (const BackendBucket& b : settled) {
      stream_.bucket(b);
    }
  }

  // The load has ended: every bucket still open.
  void finish() {
    std::lock_guard lock(mutex_);
    for (const BackendBucket& b : bucketer_.take_all()) {
      stream_.bucket(b);
    }
  }

private:
  Stream& stream_;
  AgentRecords mode_;
  std::mutex mutex_;
  Bucketer bucketer_;
  Micros now_{0};
};

// The load's engines. With keep-alive and a fresh share, the new connections run as an engine
// of their own beside the kept-alive pool: closing pool connections would end the long-lived
// ones a stale keep-alive needs. The fresh engine starts once the main one has, and its records
// move onto the main engine's t = 0 (onto_main_clock).
struct Engines {
  load::Options main;
  load::Options fresh;
  bool split = false;
};

Engines split_engines(const load::Options& load, const std::string& target, Duration duration) {
  Engines e;
  e.main = load;
  e.main.targets = {{"GET", target}};
  e.main.duration = duration;
  e.split = load.keepalive == load::Keepalive::on && load.fresh_share > 0;
  if (e.split) {
    e.fresh = e.main;
    e.fresh.keepalive = load::Keepalive::off;
    e.fresh.fresh_share = e.main.fresh_share = 0;
    e.fresh.rate = load.rate * load.fresh_share;
    e.main.rate = load.rate - e.fresh.rate;
  }
  return e;
}

// A fresh-engine record on the main engine's clock, numbered apart from its requests.
record::RequestRecord onto_main_clock(const record::RequestRecord& r, Micros shift) {
  record::RequestRecord moved = r;
  moved.seq += kFreshSeq;
  moved.intended += shift;
  moved.done += shift;
  for (auto* t : {&moved.sent, &moved.first_byte}) {
    if (*t) {
      **t += shift;
    }
  }
  return moved;
}

// A failure on a reused connection names no backend; under kube-proxy a connection keeps its
// backend for life, so it is the one that last answered on it (keyed by the source port). The
// load's threads record concurrently.
class ReusedBackends {
public:
  // The backend to name for `r`, when it names none and its connection has answered before.
  std::optional<std::string> backend_for(const record::RequestRecord& r) {
    std::lock_guard lock(mutex_);
    std::string& last = answered_by_[r.local_port];
    if (r.connection == record::Connection::fresh || !r.backend.empty()) {
      last = r.backend;
    }
    if (!r.backend.empty() || last.empty()) {
      return std::nullopt;
    }
    return last;
  }

private:
  std::unordered_map<uint16_t, std::string> answered_by_;
  std::mutex mutex_;
};

// The stream's first line: who sends what, and the wall time of the load's t = 0.
Json hello_line(const AgentOptions& o, const std::string& target,
                std::chrono::steady_clock::time_point start) {
  auto wall = std::chrono::system_clock::now()
              - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                  std::chrono::steady_clock::now() - start);
  return {{"k", "hello"},
          {"pod", o.pod},
          {"node", o.node},
          {"index", o.index},
          {"count", o.count},
          {"target", target},
          {"rate", o.load.rate},
          {"records", o.records == AgentRecords::all ? "all" : "failed"},
          {"wall_us", wall_us(wall)},
          {"version", std::string(base::version())}};
}

void add(load::Summary& s, const load::Summary& more) {
  s.requests += more.requests;
  s.ok += more.ok;
  s.failed += more.failed;
  s.late += more.late;
  s.unsent += more.unsent;
}

}  // namespace

std::string agent_target(const AgentOptions& o,
                         const std::function<const char*(const char*)>& env) {
  if (!o.url.empty()) {
    return o.url;
  }
  if (o.service.empty()) {
    throw Error("verify-agent needs --url or --service");
  }
  std::string_view text = o.service;
  std::string name = link_name(text.substr(0, text.find(':')));
  std::string port_name =
      text.find(':') == std::string_view::npos ? "" : link_name(text.substr(text.find(':') + 1));
  std::string host_var = name + "_SERVICE_HOST";
  std::string port_var = name + "_SERVICE_PORT" + (port_name.empty() ? "" : "_" + port_name);
  const char* host = env(host_var.c_str());
  const char* port = env(port_var.c_str());
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    throw Error(
        fmt::format("verify-agent: ${} and ${} are not set: the pod was started before "
                    "Service {} existed, or enableServiceLinks is false; give --url",
                    host_var, port_var, o.service));
  }
  bool v6 = std::string_view(host).find(':') != std::string_view::npos;
  return fmt::format("http://{}{}{}:{}{}", v6 ? "[" : "", host, v6 ? "]" : "", port, o.path);
}

int run_agent(const AgentOptions& o, std::ostream& out) {
  std::string target = agent_target(o, [](const char* name) { return std::getenv(name); });
  Engines engines = split_engines(o.load, target, o.duration);
  Stream stream(out);
  Records records(stream, o.records, engines.main.timeout);
  ReusedBackends reused;
  std::chrono::steady_clock::time_point main_start;
  std::atomic<int64_t> fresh_shift_us{0};
  std::thread fresh_thread;
  load::Summary fresh_summary;
  std::exception_ptr fresh_error;
  load::Hooks hooks;
  load::Hooks fresh_hooks;
  hooks.stop = fresh_hooks.stop = o.stop;
  hooks.on_start = [&](std::chrono::steady_clock::time_point start) {
    main_start = start;
    stream.line(hello_line(o, target, start));
    if (engines.split) {
      fresh_thread = std::thread([&] {
        try {
          fresh_summary = load::run(engines.fresh, fresh_hooks);
        } catch (...) {
          fresh_error = std::current_exception();
        }
      });
    }
  };
  fresh_hooks.on_start = [&](std::chrono::steady_clock::time_point start) {
    fresh_shift_us = std::chrono::duration_cast<Micros>(start - main_start).count();
  };
  hooks.on_record = [&](const record::RequestRecord& r) {
    if (std::optional<std::string> backend = reused.backend_for(r)) {
      record::RequestRecord named = r;
      named.backend = std::move(*backend);
      records.add(named);
    } else {
      records.add(r);
    }
  };
  fresh_hooks.on_record = [&](const record::RequestRecord& r) {
    hooks.on_record(onto_main_clock(r, Micros(fresh_shift_us.load())));
  };
  load::Summary s = load::run(engines.main, hooks);
  if (fresh_thread.joinable()) {
    fresh_thread.join();
  }
  if (fresh_error) {
    std::rethrow_exception(fresh_error);
  }
  records.finish();
  add(s, fresh_summary);
  stream.line({{"k", "summary"},
               {"requests", s.requests},
               {"ok", s.ok},
               {"failed", s.failed},
               {"late", s.late},
               {"unsent", s.unsent},
               {"interrupted", s.interrupted}});
  stream.line({{"k", "bye"}, {"lines", stream.lines() + 1}});
  return to_int(ExitCode::ok);
}

std::optional<AgentLine> parse_agent_line(std::string_view text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("k") || !j["k"].is_string()
      || !j.contains("n") || !j["n"].is_number_unsigned()) {
    return std::nullopt;
  }
  AgentLine line;
  line.kind = j["k"].get<std::string>();
  line.n = j["n"].get<uint64_t>();
  if (line.kind == "req") {
    if (!j.contains("r") || !j["r"].is_object()) {
      throw Error(fmt::format("agent line {}: a req line without its request", line.n));
    }
    line.request = record::read_request(j["r"]);
  } else if (line.kind == "bucket") {
    try {
      line.bucket = bucket_from_json(j);
    } catch (const Error& e) {
      throw Error(fmt::format("agent line {}: {}", line.n, e.what()));
    }
  }
  line.body = std::move(j);
  return line;
}

}  // namespace zerodrop::verify
