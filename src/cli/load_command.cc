// zerodrop load: flags -> load::Options, then load::run(); SIGINT handling lives here, not in
// the engine, so that the lab can run the engine on a thread of its own.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/parse.h"
#include "cli/command.h"
#include "load/input.h"
#include "load/load.h"
#include "load/report.h"
#include "record/run_record.h"

namespace zerodrop::cli {
namespace {

// Set by SIGINT/SIGTERM; the engine polls it through Hooks::stop.
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

// The first signal asks the run to stop and print its summary; SA_RESETHAND makes a second one
// kill the process the usual way.
void install_interrupt_handler() {
  struct sigaction action {};

  action.sa_handler = on_interrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

struct Flags {
  std::string url;
  std::string rate = "100";
  std::string duration = "10s";
  std::string connections = "64";
  bool keepalive = true;
  std::string max_per_connection = "0";
  std::string method = "GET";
  std::vector<std::string> headers;
  std::string body;
  std::string body_file;
  std::string timeout = "10s";
  std::string connect_timeout = "5s";
  std::string ca_file;
  bool insecure = false;
  std::string targets;
  std::string backend_header = "X-Pod-Name";
  std::string ok_status = "200-399";
  std::string interval = "1s";
  std::string json;
  std::string records;
  std::string max_failures = "0";
  std::string threads = "1";
  std::string requests = "0";
};

constexpr const char* kFooter = R"(
Outcome classes (every request gets exactly one):
  ok, connect_refused, connect_timeout, connect_error, reset_before_response,
  closed_before_response, reset_during_response, truncated_response, timeout,
  http_502, http_503, http_504, http_5xx, http_4xx, protocol_error
Every class but ok counts as a failure; --ok-status decides which statuses are ok.

Examples:
  zerodrop load http://127.0.0.1:8080/ --rate 500 --duration 30s
  zerodrop load http://127.0.0.1:8080/api -H 'Authorization: Bearer x' --json summary.json
  zerodrop load http://127.0.0.1:8080/ --rate 0 --connections 64 --duration 10s   # throughput
  zerodrop load --targets targets.txt --records requests.ndjson --max-failures 5
  zerodrop load https://shop.example/ --cacert ca.pem   # TLS; -k skips verification

Exit codes: 0 no failure beyond --max-failures, 1 more failures, 2 usage or input error,
130 interrupted (the summary of what was sent is still printed). See docs/load.md.)";

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("url", f.url, "http:// or https:// URL to load (or use --targets)");
  app.add_option("--rate", f.rate,
                 "requests per second over all connections; 0 = as fast as "
                 "the connections allow (closed loop)")
      ->capture_default_str();
  app.add_option("-d,--duration", f.duration, "how long to send, e.g. 10s, 2m")
      ->capture_default_str();
  app.add_option("-c,--connections", f.connections, "maximum concurrent connections")
      ->capture_default_str();
  app.add_flag("--keepalive,!--no-keepalive", f.keepalive,
               "reuse connections (default) / one request per connection");
  app.add_option("--max-requests-per-connection", f.max_per_connection,
                 "close a connection after N requests; 0 = unlimited")
      ->capture_default_str();
  app.add_option("--method", f.method, "HTTP method")->capture_default_str();
  app.add_option("-H,--header", f.headers, "'Name: value' request header (repeatable)");
  app.add_option("--body", f.body, "request body");
  app.add_option("--body-file", f.body_file, "read the request body from FILE");
  app.add_option("--timeout", f.timeout, "time allowed for a whole response, from the send")
      ->capture_default_str();
  app.add_option("--connect-timeout", f.connect_timeout,
                 "time allowed for the TCP handshake (and TLS's, for https)")
      ->capture_default_str();
  app.add_option("--cacert", f.ca_file,
                 "https: trust the PEM certificates in FILE instead of the system's store");
  app.add_flag("-k,--insecure", f.insecure,
               "https: do not verify the server's certificate or name (like curl -k)");
  app.add_option("--targets", f.targets, "FILE with one 'METHOD URL' per line, used round-robin");
  app.add_option("--backend-header", f.backend_header,
                 "response header naming the backend, recorded per request")
      ->capture_default_str();
  app.add_option("--ok-status", f.ok_status, "statuses that count as ok, e.g. 200-399,404")
      ->capture_default_str();
  app.add_option("--interval", f.interval, "live line period (only on a terminal)")
      ->capture_default_str();
  app.add_option("--json", f.json, "write the summary as JSON to FILE");
  app.add_option("--records", f.records, "stream one NDJSON line per request to FILE");
  app.add_option("--max-failures", f.max_failures, "failures allowed before exit code 1")
      ->capture_default_str();
  app.add_option("--threads", f.threads, "event-loop threads")->capture_default_str();
  app.add_option("-n,--requests", f.requests, "stop after N requests; 0 = run for --duration")
      ->capture_default_str();
  app.footer(kFooter);
}

std::vector<load::Target> targets_of(const Flags& f) {
  std::vector<load::Target> targets;
  if (!f.url.empty()) {
    targets.push_back({f.method, f.url});
  }
  if (!f.targets.empty()) {
    for (load::Target& t : load::read_targets(f.targets)) {
      targets.push_back(std::move(t));
    }
  }
  if (targets.empty()) {
    throw Error("no URL to load: give a URL or --targets FILE (see 'zerodrop load --help')");
  }
  return targets;
}

load::Options options_of(const Flags& f) {
  load::Options o;
  o.targets = targets_of(f);
  o.rate = parse_number(f.rate, "--rate");
  o.duration = parse_duration(f.duration, "--duration");
  o.connections = static_cast<uint32_t>(parse_integer(f.connections, "--connections", 1, 100000));
  o.keepalive = f.keepalive ? load::Keepalive::on : load::Keepalive::off;
  o.max_requests_per_connection = static_cast<uint64_t>(
      parse_integer(f.max_per_connection, "--max-requests-per-connection", 0, INT64_MAX));
  for (const std::string& h : f.headers) {
    o.headers.push_back(load::parse_header(h));
  }
  if (!f.body.empty() && !f.body_file.empty()) {
    throw Error("--body and --body-file: give one or the other");
  }
  o.body = f.body_file.empty() ? f.body : load::read_file(f.body_file, "--body-file");
  o.timeout = parse_duration(f.timeout, "--timeout");
  o.connect_timeout = parse_duration(f.connect_timeout, "--connect-timeout");
  o.ca_file = f.ca_file;
  o.insecure = f.insecure;
  o.backend_header = f.backend_header;
  o.ok_status = load::parse_status_ranges(f.ok_status);
  o.interval = parse_duration(f.interval, "--interval");
  o.threads = static_cast<uint32_t>(parse_integer(f.threads, "--threads", 1, 256));
  o.max_requests = static_cast<uint64_t>(parse_integer(f.requests, "--requests", 0, INT64_MAX));
  return o;
}

void write_text(const std::string& path, const std::string& text, std::string_view what) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    throw Error(fmt::format("{}: cannot write {}", what, path));
  }
}

// Streams records to --records; one line per request, serialized under a lock (threads > 1).
class RecordFile {
public:
  explicit RecordFile(const std::string& path) : path_(path), out_(path) {
    if (!out_) {
      throw Error(fmt::format("--records: cannot write {}", path));
    }
  }

  void write(const record::RequestRecord& r) {
    std::lock_guard lock(mutex_);
    record::write_ndjson(out_, r);
  }

  void close() {
    out_.close();
    if (!out_) {
      throw Error(fmt::format("--records: cannot write {}", path_));
    }
  }

private:
  std::string path_;
  std::mutex mutex_;
  std::ofstream out_;
};

int run_load(const Flags& f) {
  load::Options options = options_of(f);
  uint64_t max_failures =
      static_cast<uint64_t>(parse_integer(f.max_failures, "--max-failures", 0, INT64_MAX));
  std::unique_ptr<RecordFile> records;
  load::Hooks hooks;
  if (!f.records.empty()) {
    records = std::make_unique<RecordFile>(f.records);
    hooks.on_record = [&records](const record::RequestRecord& r) {
      records->write(r);
    };
  }
  if (isatty(STDOUT_FILENO)) {
    hooks.on_interval = [](const load::Summary& s) {
      std::fputs(load::format_interval(s).c_str(), stdout);
      std::fflush(stdout);
    };
  }
  install_interrupt_handler();
  hooks.stop = &interrupted;

  load::Summary summary = load::run(options, hooks);

  if (records) {
    records->close();
  }
  std::fputs(load::format_summary(summary).c_str(), stdout);
  if (!f.json.empty()) {
    write_text(f.json, load::summary_json(summary), "--json");
  }
  if (summary.interrupted) {
    return to_int(ExitCode::interrupted);
  }
  return to_int(summary.failed > max_failures ? ExitCode::failed : ExitCode::ok);
}

}  // namespace

Runner setup_load(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_load(*flags);
  };
}

}  // namespace zerodrop::cli
