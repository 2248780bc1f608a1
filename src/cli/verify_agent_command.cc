// zerodrop verify-agent: one load pod of zerodrop verify (hidden; verify creates it as an
// Indexed Job). Flags -> verify::AgentOptions, then verify::run_agent() writing to stdout.

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/duration.h"
#include "base/parse.h"
#include "cli/command.h"
#include "cli/load_flags.h"
#include "cli/stop_signals.h"
#include "load/input.h"
#include "verify/agent.h"
#include "verify/agent_watch.h"

namespace zerodrop::cli {
namespace verify_agent_command {
namespace {

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

struct Flags {
  std::string url;
  std::string service;
  std::string path = "/";
  LoadFlags load{.rate = "50", .keepalive = false, .timeout = "5s"};
  std::string duration = "30m";
  std::string pod = env_or("POD_NAME", "");
  std::string node = env_or("NODE_NAME", "");
  std::string index = env_or("JOB_COMPLETION_INDEX", "0");
  std::string count = "1";
  std::string records = "failed";
  std::string watcher;
};

constexpr LoadFlagSet kAgentLoadFlags{
    .flags = LoadFlag::header | LoadFlag::backend_header,
    .rate = "this agent's requests per second",
    .keepalive = "reuse connections / a new connection per request (default)",
    .fresh_name = "--fresh",
    .fresh =
        "with --keepalive: the share of requests that close their connection, so the next "
        "one opens a new one",
};

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("--watcher", f.watcher,
                 "http://HOST:PORT of zerodrop watch: report to it every second and probe the "
                 "Services it names (its DaemonSet's agents)");
  app.add_option("--url", f.url, "the target URL (default: the --service's)");
  app.add_option("--service", f.service,
                 "NAME[:PORTNAME]: load http://$NAME_SERVICE_HOST:$NAME_SERVICE_PORT (the "
                 "Service as this pod's node routes it)");
  app.add_option("--path", f.path, "path for --service")->capture_default_str();
  add_load_flags(app, f.load, kAgentLoadFlags);
  app.add_option("--duration", f.duration, "stop after this long even if not told to")
      ->capture_default_str();
  app.add_option("--pod", f.pod, "this pod's name (default $POD_NAME)");
  app.add_option("--node", f.node, "this pod's node (default $NODE_NAME)");
  app.add_option("--index", f.index, "this agent's index (default $JOB_COMPLETION_INDEX)");
  app.add_option("--count", f.count, "how many agents share the load")->capture_default_str();
  app.add_option("--records", f.records,
                 "failed: a line per backend per 100 ms and one per failed request; all: one "
                 "line per request")
      ->capture_default_str();
  app.footer(R"(
Started by 'zerodrop verify' as an Indexed Job, one pod per node. Writes one JSON object a line
on stdout (hello, bucket per backend per 100 ms, req per failed request or with --records all per
request, summary, bye), which verify follows through the API's pods/log. SIGTERM (the Job's
deletion) ends the load; in-flight requests finish first.
With --watcher (zerodrop watch's DaemonSet): POSTs the same lines, one part per Service, to
URL/agent/v1/report every second and probes the Services the answer names.)");
}

int run_agent(const Flags& f) {
  verify::AgentOptions o;
  o.url = f.url;
  o.service = f.service;
  o.path = f.path;
  apply_load_flags(f.load, o.load);
  o.duration = parse_duration(f.duration, "--duration");
  o.pod = f.pod;
  o.node = f.node;
  o.index = static_cast<int>(parse_integer(f.index, "--index", 0, 100000));
  o.count = static_cast<int>(parse_integer(f.count, "--count", 1, 100000));
  o.records = verify::parse_agent_records(f.records, "--records");
  o.stop = catch_stop_signals(SecondSignal::stops);
  if (!f.watcher.empty()) {
    return verify::run_watch_agent({f.watcher, o});
  }
  return verify::run_agent(o, std::cout);
}

}  // namespace
}  // namespace verify_agent_command

Runner setup_verify_agent(CLI::App& app) {
  using namespace verify_agent_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_agent(*flags);
  };
}

}  // namespace zerodrop::cli
