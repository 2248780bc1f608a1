// zerodrop verify-agent: one load pod of zerodrop verify (hidden; verify creates it as an
// Indexed Job). Flags -> verify::AgentOptions, then verify::run_agent() writing to stdout.
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/duration.h"
#include "base/parse.h"
#include "cli/command.h"
#include "load/input.h"
#include "verify/agent.h"

namespace zerodrop::cli {
namespace {

std::atomic<bool> agent_stopped{false};

extern "C" void on_agent_stop(int) {
  agent_stopped.store(true);
}

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

struct Flags {
  std::string url;
  std::string service;
  std::string path = "/";
  std::string rate = "50";
  bool keepalive = false;
  std::string fresh = "0%";
  std::vector<std::string> headers;
  std::string timeout = "5s";
  std::string backend_header = "X-Pod-Name";
  std::string duration = "30m";
  std::string pod = env_or("POD_NAME", "");
  std::string node = env_or("NODE_NAME", "");
  std::string index = env_or("JOB_COMPLETION_INDEX", "0");
  std::string count = "1";
};

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("--url", f.url, "the target URL (default: the --service's)");
  app.add_option("--service", f.service,
                 "NAME[:PORTNAME]: load http://$NAME_SERVICE_HOST:$NAME_SERVICE_PORT (the "
                 "Service as this pod's node routes it)");
  app.add_option("--path", f.path, "path for --service")->capture_default_str();
  app.add_option("--rate", f.rate, "this agent's requests per second")->capture_default_str();
  app.add_flag("--keepalive,!--no-keepalive", f.keepalive,
               "reuse connections / a new connection per request (default)");
  app.add_option("--fresh", f.fresh,
                 "with --keepalive: the share of requests that close their connection, so the "
                 "next one opens a new one")
      ->capture_default_str();
  app.add_option("-H,--header", f.headers, "'Name: value' request header (repeatable)");
  app.add_option("--timeout", f.timeout, "time allowed for a whole response")
      ->capture_default_str();
  app.add_option("--backend-header", f.backend_header, "response header naming the pod")
      ->capture_default_str();
  app.add_option("--duration", f.duration, "stop after this long even if not told to")
      ->capture_default_str();
  app.add_option("--pod", f.pod, "this pod's name (default $POD_NAME)");
  app.add_option("--node", f.node, "this pod's node (default $NODE_NAME)");
  app.add_option("--index", f.index, "this agent's index (default $JOB_COMPLETION_INDEX)");
  app.add_option("--count", f.count, "how many agents share the load")->capture_default_str();
  app.footer(R"(
Started by 'zerodrop verify' as an Indexed Job, one pod per node. Writes one JSON object a line
on stdout (hello, req for every request, summary, bye), which verify follows through the API's
pods/log. SIGTERM (the Job's deletion) ends the load; in-flight requests finish first.)");
}

int run_agent(const Flags& f) {
  verify::AgentOptions o;
  o.url = f.url;
  o.service = f.service;
  o.path = f.path;
  o.load.rate = parse_number(f.rate, "--rate");
  o.load.keepalive = f.keepalive ? load::Keepalive::on : load::Keepalive::off;
  o.load.fresh_share = parse_share(f.fresh, "--fresh");
  for (const std::string& h : f.headers) {
    o.load.headers.push_back(load::parse_header(h));
  }
  o.load.timeout = parse_duration(f.timeout, "--timeout");
  o.load.backend_header = f.backend_header;
  o.duration = parse_duration(f.duration, "--duration");
  o.pod = f.pod;
  o.node = f.node;
  o.index = static_cast<int>(parse_integer(f.index, "--index", 0, 100000));
  o.count = static_cast<int>(parse_integer(f.count, "--count", 1, 100000));
  o.stop = &agent_stopped;

  struct sigaction action {};

  action.sa_handler = on_agent_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return verify::run_agent(o, std::cout);
}

}  // namespace

Runner setup_verify_agent(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_agent(*flags);
  };
}

}  // namespace zerodrop::cli
