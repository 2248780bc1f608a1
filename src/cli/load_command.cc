// zerodrop load: flags -> load::Options, then load::run(); SIGINT handling lives here, not in
// the engine, so that the lab can run the engine on a thread of its own.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/parse.h"
#include "cli/command.h"
#include "cli/load_flags.h"
#include "cli/stop_signals.h"
#include "load/grpc.h"
#include "load/input.h"
#include "load/load.h"
#include "load/report.h"
#include "record/run_folder.h"
#include "record/run_record.h"

namespace zerodrop::cli {
namespace load_command {
namespace {

// The shared load flags (load_flags.h) with load's defaults, and the flags only load has.
struct Flags {
  std::string url;
  LoadFlags load{.rate = "100"};
  std::string duration = "10s";
  std::string max_per_connection = "0";
  std::string body;
  std::string connect_timeout = "5s";
  std::string ca_file;
  bool insecure = false;
  std::string targets;
  std::string interval = "1s";
  std::string json;
  std::string records;
  std::string out;
  std::string max_failures = "0";
  std::string threads = "1";
  std::string requests = "0";
  std::string ok_grpc_status = "OK";
  bool retry_unprocessed = true;
};

constexpr const char* kFooter = R"(
Outcome classes (every request gets exactly one):
  ok, connect_refused, connect_timeout, connect_error, reset_before_response,
  closed_before_response, reset_during_response, truncated_response, timeout,
  http_502, http_503, http_504, http_5xx, http_4xx, protocol_error,
  and over HTTP/2 and gRPC: refused_stream, goaway_unprocessed, stream_reset, grpc_unavailable,
  grpc_deadline_exceeded, grpc_cancelled, grpc_internal, grpc_other
Every class but ok counts as a failure; --ok-status (and --ok-grpc-status) decide what is ok.

Examples:
  zerodrop load http://127.0.0.1:8080/ --rate 500 --duration 30s
  zerodrop load http://127.0.0.1:8080/api -H 'Authorization: Bearer x' --json summary.json
  zerodrop load http://127.0.0.1:8080/ --rate 0 --connections 64 --duration 10s   # throughput
  zerodrop load --targets targets.txt --records requests.ndjson --max-failures 5
  zerodrop load https://shop.example/ -d 5m --out run/ && zerodrop report run/   # a deploy by hand
  zerodrop load https://shop.example/ --cacert ca.pem   # TLS; -k skips verification
  zerodrop load --http2 http://127.0.0.1:8080/ --connections 8 --streams 100   # h2c
  zerodrop load --grpc helloworld.Greeter/SayHello --body-file req.bin http://127.0.0.1:50051

Exit codes: 0 no failure beyond --max-failures, 1 more failures, 2 usage or input error,
130 interrupted (the summary of what was sent is still printed). See docs/load.md.)";

constexpr LoadFlagSet kLoadFlags{
    .flags = LoadFlag::connections | LoadFlag::client_retry | LoadFlag::method | LoadFlag::header
             | LoadFlag::backend_header | LoadFlag::ok_status | LoadFlag::http2,
    .rate =
        "requests per second over all connections; 0 = as fast as the connections allow "
        "(closed loop)",
    .keepalive = "reuse connections (default) / one request per connection",
    .fresh_name = "--fresh-share",
    .fresh =
        "send this share of the requests with 'Connection: close', evenly spread, so that as "
        "many new connections open beside the kept-alive ones",
};

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("url", f.url, "http:// or https:// URL to load (or use --targets)");
  add_load_flags(app, f.load, kLoadFlags);
  app.add_option("-d,--duration", f.duration, "how long to send, e.g. 10s, 2m")
      ->capture_default_str();
  app.add_option("--max-requests-per-connection", f.max_per_connection,
                 "close a connection after N requests; 0 = unlimited")
      ->capture_default_str();
  app.add_option("--body", f.body, "request body");
  app.add_option("--connect-timeout", f.connect_timeout,
                 "time allowed for the TCP handshake (and TLS's, for https)")
      ->capture_default_str();
  app.add_option("--cacert", f.ca_file,
                 "https: trust the PEM certificates in FILE instead of the system's store");
  app.add_flag("-k,--insecure", f.insecure,
               "https: do not verify the server's certificate or name (like curl -k)");
  app.add_option("--targets", f.targets, "FILE with one 'METHOD URL' per line, used round-robin");
  app.add_option("--interval", f.interval, "live line period (only on a terminal)")
      ->capture_default_str();
  app.add_option("--json", f.json, "write the summary as JSON to FILE");
  app.add_option("--records", f.records, "stream one NDJSON line per request to FILE");
  app.add_option("--out", f.out,
                 "write a run folder (requests, the disruption, run.json) that "
                 "'zerodrop report DIR' renders");
  app.add_option("--max-failures", f.max_failures, "failures allowed before exit code 1")
      ->capture_default_str();
  app.add_option("--threads", f.threads, "event-loop threads")->capture_default_str();
  app.add_option("-n,--requests", f.requests, "stop after N requests; 0 = run for --duration")
      ->capture_default_str();
  app.add_option("--ok-grpc-status", f.ok_grpc_status,
                 "gRPC statuses that count as ok, by name or number, e.g. OK,NOT_FOUND")
      ->capture_default_str();
  app.add_flag("--retry-unprocessed,!--no-retry-unprocessed", f.retry_unprocessed,
               "HTTP/2: resend once a request refused unprocessed (REFUSED_STREAM, above a "
               "GOAWAY's last stream id), as gRPC clients do (default) / fail it");
  app.footer(kFooter);
}

std::vector<load::Target> targets_of(const Flags& f) {
  std::vector<load::Target> targets;
  if (!f.url.empty()) {
    targets.push_back({f.load.method, f.url});
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

// --http2 and --grpc beyond the shared flags: a gRPC call goes to one server, always as a POST.
void set_http2_options(const Flags& f, load::Options& o) {
  if (o.protocol == load::Protocol::grpc) {
    if (o.targets.size() != 1) {
      throw Error("--grpc: give one URL (the server), not --targets");
    }
    for (load::Target& t : o.targets) {
      t.method = "POST";
    }
  }
  if (o.protocol == load::Protocol::http1) {
    return;
  }
  o.ok_grpc_status = load::parse_grpc_statuses(f.ok_grpc_status);
  o.retry_unprocessed =
      f.retry_unprocessed ? load::RetryUnprocessed::once : load::RetryUnprocessed::never;
}

load::Options options_of(const Flags& f) {
  load::Options o;
  o.targets = targets_of(f);
  if (!f.body.empty() && !f.load.body_file.empty()) {
    throw Error("--body and --body-file: give one or the other");
  }
  o.body = f.body;
  apply_load_flags(f.load, o);
  o.duration = parse_duration(f.duration, "--duration");
  o.max_requests_per_connection = static_cast<uint64_t>(
      parse_integer(f.max_per_connection, "--max-requests-per-connection", 0, INT64_MAX));
  o.connect_timeout = parse_duration(f.connect_timeout, "--connect-timeout");
  o.ca_file = f.ca_file;
  o.insecure = f.insecure;
  o.interval = parse_duration(f.interval, "--interval");
  o.threads = static_cast<uint32_t>(parse_integer(f.threads, "--threads", 1, 256));
  o.max_requests = static_cast<uint64_t>(parse_integer(f.requests, "--requests", 0, INT64_MAX));
  set_http2_options(f, o);
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

// Streams each finished request to --records and into --out's run folder, one NDJSON line
// each, under one lock: the engine's threads call it concurrently (--threads). Nothing is kept in
// memory, so a long run stays flat.
class RecordStreams {
public:
  explicit RecordStreams(const Flags& f) {
    if (!f.records.empty()) {
      records_path_ = f.records;
      records_.open(f.records);
      if (!records_) {
        throw Error(fmt::format("--records: cannot write {}", f.records));
      }
    }
    if (!f.out.empty()) {
      folder_.emplace(record::RunFolder(f.out), record::Traffic::requests);
    }
  }

  bool empty() const { return !records_.is_open() && !folder_; }

  void write(const record::RequestRecord& r) {
    std::lock_guard lock(mutex_);
    if (records_.is_open()) {
      record::write_ndjson(records_, r);
    }
    if (folder_) {
      folder_->write(r);
    }
  }

  // Closes --records; for --out, adds the disruption and run.json, which `zerodrop report`
  // needs to draw the run. Throws Error naming a file it cannot write.
  void close(const load::Summary& summary, const Flags& f) {
    if (records_.is_open()) {
      records_.close();
      if (!records_) {
        throw Error(fmt::format("--records: cannot write {}", records_path_));
      }
    }
    if (folder_) {
      for (const record::Event& e : load::disruption_events(summary)) {
        folder_->write(e);
      }
      folder_->close();
      folder_->folder().write_run_json(run_of(summary, f));
    }
  }

private:
  static record::RunRecord run_of(const load::Summary& s, const Flags& f) {
    record::RunRecord run;
    run.engine = "load";
    run.end = std::chrono::duration_cast<record::Micros>(from_seconds(s.elapsed_s));
    std::map<std::string, std::string>& x = run.scenario.extra;
    x["url"] = f.url.empty() ? fmt::format("--targets {}", f.targets) : f.url;
    x["method"] = f.load.method;
    x["rate"] = f.load.rate;
    x["duration"] = f.duration;
    x["connections"] = f.load.connections;
    x["keepalive"] = f.load.keepalive ? "on" : "off";
    if (f.load.fresh_share != "0%") {
      x["fresh_share"] = f.load.fresh_share;
    }
    if (f.load.client_retry) {
      x["client_retry"] = "once";
    }
    x["timeout"] = f.load.timeout;
    x["ok_status"] = f.load.ok_status;
    if (!f.load.grpc.empty() || f.load.http2) {
      x["protocol"] = f.load.grpc.empty() ? "h2" : "grpc";
      x["connections"] = f.load.connections_given ? f.load.connections : "8";
      x["streams"] = f.load.streams;
      if (!f.load.grpc.empty()) {
        x["grpc"] = f.load.grpc;
        x["method"] = "POST";
      }
    }
    return run;
  }

  std::mutex mutex_;
  std::string records_path_;
  std::ofstream records_;
  std::optional<record::RunWriter> folder_;
};

int run_load(const Flags& f) {
  load::Options options = options_of(f);
  uint64_t max_failures =
      static_cast<uint64_t>(parse_integer(f.max_failures, "--max-failures", 0, INT64_MAX));
  load::check(options);  // a bad URL leaves no empty --out folder or --records file behind
  RecordStreams records(f);
  load::Hooks hooks;
  if (!records.empty()) {
    hooks.on_record = [&records](const record::RequestRecord& r) {
      records.write(r);
    };
  }
  if (isatty(STDOUT_FILENO)) {
    hooks.on_interval = [](const load::Summary& s) {
      std::fputs(load::format_interval(s).c_str(), stdout);
      std::fflush(stdout);
    };
  }
  // The first signal asks the run to stop and print its summary.
  hooks.stop = catch_stop_signals(SecondSignal::kills);

  load::Summary summary = load::run(options, hooks);

  records.close(summary, f);
  std::fputs(load::format_summary(summary).c_str(), stdout);
  if (!f.out.empty()) {
    std::printf("run folder: %s (render it with 'zerodrop report %s')\n", f.out.c_str(),
                f.out.c_str());
  }
  if (!f.json.empty()) {
    write_text(f.json, load::summary_json(summary), "--json");
  }
  if (summary.interrupted) {
    return to_int(ExitCode::interrupted);
  }
  return to_int(summary.failed > max_failures ? ExitCode::failed : ExitCode::ok);
}

}  // namespace
}  // namespace load_command

Runner setup_load(CLI::App& app) {
  using namespace load_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_load(*flags);
  };
}

}  // namespace zerodrop::cli
