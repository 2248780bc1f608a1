// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/listen.h"
#include "base/subprocess.h"
#include "http/proxy_failure.h"
#include "lab/data/migration.h"
#include "lab/recording/recorder.h"
#include "lab/routers/ingress.h"
#include "lab/routers/ingress_io.h"
#include "lab/routers/ingress_logs.h"
#include "lab/routers/router_core.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr Duration kIngressStartTimeout = 10s;  // the program's first answer on its control socket
constexpr auto kReloadPollInterval = 2ms;       // while waiting for a reload to finish
constexpr size_t kMaxSocketPath = 100;          // sockaddr_un's sun_path, with room to spare

// One ingress program: started in its folder, then told of each new set of usable endpoints.
class Driver {
public:
  virtual ~Driver() = default;
  // Makes `usable` the program's endpoints; returns once the program really routes by them.
  // False when it did not (the reason is in the controller's log).
  virtual bool apply(const std::vector<const Endpoint*>& usable, const EndpointTable& table) = 0;
  // The lines of the program's logs about `failures` (ingress_logs.h); `on_run` puts a steady
  // clock time on the run's timeline, `wall_origin` is the run's t = 0 on the Unix clock.
  virtual std::vector<RouterLogNote> notes(
      const std::vector<IngressFailure>& failures, std::chrono::microseconds wall_origin,
      const std::function<record::Micros(Clock::time_point)>& on_run) = 0;
};

// Appends one line to the controller's log (DIR/controller.log): what was asked and answered.
class ControllerLog {
public:
  explicit ControllerLog(const std::string& dir) : out_(dir + "/controller.log", std::ios::app) {}

  void line(const std::string& text) { out_ << text << '\n' << std::flush; }

private:
  std::ofstream out_;
};

// The processes `pid` forked (an nginx master's workers).
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/children", pid, pid));
  std::vector<pid_t> out;
  for (pid_t child = 0; in >> child;) {
    out.push_back(child);
  }
  return out;
}

// Whether an old nginx worker no longer accepts: it is gone, or has set its title to "worker
// process is shutting down", which nginx does just before it closes its listening sockets.
bool stopped_accepting(pid_t worker) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", worker));
  std::string title;
  std::getline(in, title, '\0');
  return !in || title.find("shutting down") != std::string::npos;
}

// Fails the start with the program's own last words when it exited or never answered.
[[noreturn]] void not_started(Ingress ingress, Subprocess& process, const std::string& log) {
  std::optional<ExitStatus> status = process.try_wait();
  throw Error(fmt::format("--ingress {}: {}: {} (log {})", to_string(ingress),
                          status ? status->describe() : "no answer on its control socket",
                          last_line(log), log));
}

// Polls the control socket (`path`, or 127.0.0.1:`port`) until `done` holds for its answer to
// `request`, `process` exits or `limit` passes.
bool wait_answer(const std::string& path, uint16_t port, const std::string& request,
                 Subprocess& process, const std::function<bool(const std::string&)>& done,
                 Duration limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline && !process.try_wait()) {
    std::optional<std::string> answer = exchange_once(path, port, request);
    if (answer && done(*answer)) {
      return true;
    }
    std::this_thread::sleep_for(kReloadPollInterval);
  }
  return false;
}

// nginx as ingress-nginx reloads it: the whole config rewritten, SIGHUP to the master, which
// starts new workers and tells the old ones to finish their connections and exit. The change is
// applied when a request on the control port is answered with the new generation (only the new
// workers know it) and every old worker has stopped accepting; until then an old worker still
// takes new connections and routes them by the old list. The control port is on loopback, so no
// socket file outlives a killed lab.
class NginxDriver final : public Driver {
public:
  NginxDriver(const IngressSettings& settings, const std::string& binary)
      : settings_(settings), log_(settings.dir) {
    write_file(conf(), nginx_config(settings_, {}, generation_));
    std::string error_log = settings_.dir + "/error.log";
    process_.emplace(Subprocess::spawn(
        {{binary, "-p", settings_.dir, "-e", error_log, "-c", conf()}, {}, error_log, error_log}));
    if (!wait_generation(kIngressStartTimeout)) {
      not_started(Ingress::nginx, *process_, error_log);
    }
  }

  ~NginxDriver() override {
    process_.reset();  // SIGKILL to the master and every worker (one process group)
    std::error_code ignored;
    fs::remove(settings_.dir + "/nginx.pid", ignored);
  }

  bool apply(const std::vector<const Endpoint*>& usable, const EndpointTable&) override {
    ++generation_;
    write_file(conf(), nginx_config(settings_, usable, generation_));
    std::vector<pid_t> old_workers = children_of(process_->pid());
    std::map<pid_t, Clock::time_point> running;  // each old worker's last poll still running
    for (pid_t w : old_workers) {
      running[w] = std::chrono::steady_clock::now();
    }
    ::kill(process_->pid(), SIGHUP);  // the master only: workers ignore SIGHUP anyway
    bool ok = wait_generation(kIngressApplyTimeout);
    auto deadline = std::chrono::steady_clock::now() + kIngressApplyTimeout;
    while (ok && !std::all_of(old_workers.begin(), old_workers.end(), [&](pid_t w) {
             return retired_.contains(w);
           })) {
      for (pid_t w : old_workers) {
        auto now = std::chrono::steady_clock::now();
        if (retired_.contains(w)) {
          continue;
        }
        if (stopped_accepting(w)) {
          retired_.emplace(w, std::pair{running[w], now});
        } else {
          running[w] = now;
        }
      }
      ok = std::chrono::steady_clock::now() < deadline;
      std::this_thread::sleep_for(kReloadPollInterval);
    }
    log_.line(fmt::format("generation {}: {} endpoints, reload {}", generation_, usable.size(),
                          ok ? "served by new workers" : "NOT finished (see error.log)"));
    return ok;
  }

  // The connection's last access.log line and its worker's shutdown line, for each request a
  // reload cut on a kept-alive client connection.
  std::vector<RouterLogNote> notes(
      const std::vector<IngressFailure>& failures, std::chrono::microseconds wall_origin,
      const std::function<record::Micros(Clock::time_point)>& on_run) override {
    std::vector<RetiredWorker> retired;
    for (const auto& [pid, when] : retired_) {
      retired.push_back({pid, on_run(when.first), on_run(when.second)});
    }
    std::istringstream access = read_log(settings_.dir + "/access.log");
    std::istringstream error = read_log(settings_.dir + "/error.log");
    return nginx_notes(access, error, retired, failures, wall_origin);
  }

private:
  std::string conf() const { return settings_.dir + "/nginx.conf"; }

  bool wait_generation(Duration limit) {
    std::string body = fmt::format("\r\n\r\n{}\n", generation_);
    return wait_answer(
        "", settings_.control_port, "GET / HTTP/1.0\r\n\r\n", *process_,
        [&](const std::string& answer) { return answer.ends_with(body); }, limit);
  }

  IngressSettings settings_;
  ControllerLog log_;
  uint64_t generation_ = 0;
  std::optional<Subprocess> process_;
  // Each worker a reload retired: this controller's last poll that saw it running, and its first
  // that saw it shut down.
  std::map<pid_t, std::pair<Clock::time_point, Clock::time_point>> retired_;
};

// HAProxy as the HAProxy ingress controllers run it without reloads: one runtime API command per
// server change, on one connection in prompt mode opened at the start; the socket's file is
// removed once connected, so the API is private to this lab and nothing is left on disk. A change
// is applied when the API has answered each of its commands.
class HaproxyDriver final : public Driver {
public:
  HaproxyDriver(const IngressSettings& settings, const std::string& binary)
      : settings_(settings), log_(settings.dir) {
    fs::remove(api());
    write_file(conf(), haproxy_config(settings_));
    std::string out = settings_.dir + "/haproxy.log";  // its access log and warnings
    process_.emplace(Subprocess::spawn({{binary, "-db", "-f", conf()}, {}, out, out}));
    bool up = wait_answer(
        api(), 0, "show info\n", *process_,
        [](const std::string& answer) { return answer.starts_with("Name: HAProxy"); },
        kIngressStartTimeout);
    api_ = up ? connect_to(api(), 0) : -1;
    fs::remove(api());
    if (api_ < 0 || command("prompt") != "") {
      not_started(Ingress::haproxy, *process_, out);
    }
  }

  ~HaproxyDriver() override {
    if (api_ >= 0) {
      ::close(api_);
    }
    process_.reset();
  }

  bool apply(const std::vector<const Endpoint*>& usable, const EndpointTable& table) override {
    bool ok = true;
    for (const std::string& c : haproxy_commands(servers_, usable, table)) {
      std::string answer = command(c);
      log_.line(fmt::format("{} -> {}", c, answer.empty() ? "ok" : answer));
      if (c.starts_with("del server") && answer != "Server deleted.") {
        // Connections still attached: it stays in maint, and the next change deletes it.
        servers_[c.substr(c.find('/') + 1)] = false;
      } else if (c.starts_with("add server") ? answer != "New server registered." : answer != "") {
        ok = false;
      }
    }
    return ok;
  }

  // The log line of each response HAProxy made itself, with its termination state.
  std::vector<RouterLogNote> notes(
      const std::vector<IngressFailure>& failures, std::chrono::microseconds wall_origin,
      const std::function<record::Micros(Clock::time_point)>& /*on_run*/) override {
    std::istringstream log = read_log(settings_.dir + "/haproxy.log");
    return haproxy_notes(log, failures, wall_origin);
  }

private:
  std::string conf() const { return settings_.dir + "/haproxy.cfg"; }

  std::string api() const { return settings_.dir + "/api.sock"; }

  // The API's answer to `text` without its prompt and trailing blank lines ("" when it says
  // nothing, which is how `set server` succeeds).
  std::string command(const std::string& text) {
    if (!send_all(api_, text + "\n")) {
      return "(the runtime API connection is closed)";
    }
    std::string answer = read_until(api_, "> ");
    if (answer.ends_with("> ")) {
      answer.resize(answer.size() - 2);
    }
    while (!answer.empty() && (answer.back() == '\n' || answer.back() == ' ')) {
      answer.pop_back();
    }
    return answer;
  }

  IngressSettings settings_;
  ControllerLog log_;
  std::map<std::string, bool> servers_;  // pod -> in service
  std::optional<Subprocess> process_;
  int api_ = -1;
};

// A node whose L7 router is a real ingress: the propagation schedule and endpoint table of the
// l7 router, but each due change goes to the program, and router_applied is stamped when the
// program answered that it routes by it.
class IngressRouter final : public Router {
public:
  IngressRouter(const RouterOptions& options, Recorder* recorder)
      : options_(options), recorder_(recorder), work_(asio::make_work_guard(io_)) {
    IngressSettings s;
    s.dir = options.ingress_dir;
    s.listen_host = options.listen_host;
    s.listen_port = options.listen_port;
    s.retries = options.retries;
    s.connect_timeout = options.connect_timeout;
    s.upstream_timeout = options.upstream_timeout;
    if (s.dir.size() + 16 > kMaxSocketPath) {
      throw Error(
          fmt::format("--ingress: the folder '{}' is too long for a unix socket path; "
                      "give --out a shorter one",
                      s.dir));
    }
    fs::create_directories(s.dir);
    s.listen_port = s.listen_port != 0 ? s.listen_port : pick_free_port();
    s.control_port = pick_free_port();
    port_ = s.listen_port;
    std::string binary = ingress_binary(options.ingress);
    if (options.ingress == Ingress::nginx) {
      driver_ = std::make_unique<NginxDriver>(s, binary);
    } else {
      driver_ = std::make_unique<HaproxyDriver>(s, binary);
    }
    if (options.ingress == Ingress::nginx) {
      churn();
    }
    thread_ = std::thread([this] { io_.run(); });
  }

  ~IngressRouter() override {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  const std::string& name() const override { return options_.name; }

  uint16_t port() const override { return port_; }

  void schedule(const EndpointChange& change, Duration delay) override { due_.add(change, delay); }

  // The ingress is L7: it reports the pod of each request in the response, not per connection.
  std::optional<std::string> backend_of(uint16_t) const override { return std::nullopt; }

  std::optional<ClientConnection> connection_of(uint16_t) const override { return std::nullopt; }

  uint64_t refusals() const override { return refusals_; }

  bool settled() const override { return due_.settled(); }

  // The ingress said it could not connect to the pod it names: that backend connection was
  // refused, as the l7 router records it itself.
  void join_report(record::RequestRecord& r,
                   const std::optional<ClientConnection>& /*connection*/) const override {
    if (r.failed && r.local_port != 0) {
      std::lock_guard lock(failures_mutex_);
      failures_.push_back({r.local_port, r.sent.value_or(r.intended), r.done, r.status, r.outcome,
                           r.connection, !r.router_error.empty(), !r.backend.empty()});
    }
    auto failure = http::proxy_failure_from_string(r.router_error);
    if (r.backend.empty()
        || (failure != http::ProxyFailure::connect_refused
            && failure != http::ProxyFailure::connect_timeout)) {
      return;
    }
    r.backend_fate = record::BackendFate::refused;
    r.backend_fate_at = r.done;
    ++refusals_;
  }

  // Quotes the program's log lines about the run's failures as router-log notes. The router's
  // thread has stopped applying changes: the load is over.
  void finish() override {
    if (recorder_ == nullptr) {
      return;
    }
    std::vector<IngressFailure> failures;
    {
      std::lock_guard lock(failures_mutex_);
      failures = failures_;
    }
    auto wall_origin = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                       - recorder_->now();
    auto on_run = [this](Clock::time_point t) {
      return recorder_->since_start(t);
    };
    for (RouterLogNote& note : driver_->notes(failures, wall_origin, on_run)) {
      record::Event e;
      e.kind = record::EventKind::note;
      e.router = options_.name;
      e.detail = std::move(note.detail);
      e.t_min = note.t_min;
      recorder_->event_at(recorder_->start() + note.t, std::move(e));
    }
  }

private:
  // Every due change at once, as a controller batches what its watch delivered; each is recorded
  // as applied only once the program routes by it.
  void apply_due(const std::vector<EndpointChange>& due) {
    if (due.empty()) {
      return;
    }
    for (const EndpointChange& change : due) {
      table_.apply(change);
    }
    bool applied = driver_->apply(table_.usable(), table_);
    if (!applied || recorder_ == nullptr) {
      return;
    }
    for (const EndpointChange& change : due) {
      recorder_->event(applied_event(change, options_.name));
    }
  }

  // --dataplane-churn with nginx: one more reload every 1/N s on the router's thread (so never
  // during a change's), the same endpoints written again, as a controller reloads for other
  // configuration changes (an Ingress, a certificate); every 100th a note counts them.
  void churn() {
    if (options_.dataplane_churn <= 0) {
      return;
    }
    churn_timer_.expires_after(std::chrono::microseconds(1'000'000 / options_.dataplane_churn));
    churn_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) {
        return;
      }
      driver_->apply(table_.usable(), table_);
      if (++churned_ % 100 == 0 && recorder_ != nullptr) {
        recorder_->pod_event(
            record::EventKind::note, "",
            fmt::format("{}: {} reloads of --dataplane-churn", options_.name, churned_));
      }
      churn();
    });
  }

  RouterOptions options_;
  Recorder* recorder_;
  uint16_t port_ = 0;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer churn_timer_{io_};
  uint64_t churned_ = 0;  // the router's thread only
  SteadyClock clock_;
  DueChanges due_{io_, clock_, [this](std::vector<EndpointChange> due) {
                    apply_due(due);
                  }};
  EndpointTable table_;  // the router's thread only
  std::unique_ptr<Driver> driver_;
  mutable std::atomic<uint64_t> refusals_{0};
  mutable std::mutex failures_mutex_;
  mutable std::vector<IngressFailure> failures_;  // every failed request joined, for finish()
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Router> start_ingress(const RouterOptions& options, Recorder* recorder) {
  return std::make_unique<IngressRouter>(options, recorder);
}

}  // namespace zerodrop::lab
