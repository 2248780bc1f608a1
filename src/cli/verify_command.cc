// zerodrop verify deploy/NAME: flags -> verify::Options, then verify::run(); the run ends in
// report::finish_run, handed to the engine as a function.
#include <signal.h>

#include <atomic>
#include <iostream>
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
#include "report/report.h"
#include "verify/verify.h"

namespace zerodrop::cli {
namespace {

std::atomic<bool> verify_interrupted{false};

extern "C" void on_verify_interrupt(int) {
  verify_interrupted.store(true);
}

struct Flags {
  std::string deployment;
  std::string namespace_name;
  std::string context;
  std::string kubeconfig;
  std::string kubectl;
  std::string service;
  std::vector<std::string> urls;
  std::string action = "restart";
  std::string rate = "50";
  bool keepalive = false;
  std::string fresh = "0%";
  std::vector<std::string> headers;
  std::string timeout = "5s";
  std::string backend_header = "X-Pod-Name";
  std::string ok_status = "200-399";
  std::string warmup = "5s";
  std::string tail = "5s";
  std::string rollout_timeout = "10m";
  std::string out;
  std::string max_failures = "0";
  bool print_rbac = false;
  std::string agents = "per-node";
  std::string agent_image = "zerodrop:0.1.0";
  std::string max_nodes = "25";
  std::string path = "/";
  std::string agent_ready_timeout = "60s";
  bool keep = false;
};

constexpr const char* kFooter = R"(
What it does, in order (nothing is changed until the preflight passes):
  1. starts 'kubectl proxy --unix-socket' in a private folder (your kubeconfig's auth, exec
     plugins included; no TCP port; the proxy dies with zerodrop, even on SIGKILL)
  2. preflight: the API answers and serves discovery.k8s.io/v1; one SelfSubjectAccessReview per
     permission (one error lists all that are missing); the Deployment exists; one Service selects
     its pods (or --service); the live Deployment is audited and findings print as warnings
  3. starts the agents: an Indexed Job, one pod per node (--agents), each running
     'zerodrop verify-agent' from --agent-image and loading the Service through its node's
     routing; verify follows each agent's log (pods/log) and waits until all are loading
  4. watches the Deployment, its Pods, the Service's EndpointSlices and the namespace's Events,
     each change stamped when received, while the agents (and any --url load from this machine)
     run
  5. after --warmup, restarts the Deployment (kubectl rollout restart's patch), or with
     --action watch waits for a rollout someone else starts
  6. waits until no old pod is left and the EndpointSlices hold only new pods, then --tail
  7. deletes the agents' Job (also on Ctrl-C or an error; --keep keeps it), merges their
     records (router node/NAME), estimates when each node stopped routing to each deleted pod
     (propagation.ndjson), diagnoses every failed request and names the hole

Examples:
  zerodrop verify deploy/web -n shop --rate 100
  zerodrop verify deploy/web -n shop --agents none --url https://shop.example/
  kubectl zerodrop verify deploy/web --context staging --url http://127.0.0.1:8080/
  zerodrop verify deploy/web --action watch --url http://10.0.0.5/   # then: kubectl apply ...
  zerodrop verify deploy/web -n shop --print-rbac | kubectl apply -f -

What the API cannot show is inferred and said so: the stop signal is the
deletion seen plus the preStop delay; a failed new connection without a backend name is given
to the only pod terminating at the time, else left unexplained.
Exit codes: 0 no failure beyond --max-failures, 1 requests failed (holes named), 2 usage,
setup error or a rollout that did not complete, 130 interrupted. See docs/verify.md.)";

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("DEPLOYMENT", f.deployment, "deploy/NAME: the Deployment to roll out");
  app.add_option("-n,--namespace", f.namespace_name, "namespace (default: the context's)");
  app.add_option("--context", f.context, "kubeconfig context (default: the current one)");
  app.add_option("--kubeconfig", f.kubeconfig, "kubeconfig file (default: kubectl's)");
  app.add_option("--kubectl", f.kubectl, "kubectl to run (default: $KUBECTL_PATH, else PATH)");
  app.add_option("--service", f.service,
                 "Service in front of the pods (default: the one "
                 "selecting them)");
  app.add_option("--url", f.urls,
                 "URL to load during the rollout (repeatable): an Ingress, "
                 "a load balancer, a port on a node");
  app.add_option("--action", f.action,
                 "restart (patch like kubectl rollout restart) or watch "
                 "(wait for someone else's rollout)")
      ->capture_default_str();
  app.add_option("--rate", f.rate,
                 "requests per second of the agents together (split evenly), and of the --url "
                 "load from here")
      ->capture_default_str();
  app.add_flag("--keepalive,!--no-keepalive", f.keepalive,
               "reuse connections / a new connection per request (default; what routers "
               "re-route)");
  app.add_option("--fresh", f.fresh,
                 "with --keepalive: the share of requests that close their connection, so the "
                 "next opens a new one (new connections bound each node's update)")
      ->capture_default_str();
  app.add_option("-H,--header", f.headers, "'Name: value' request header (repeatable)");
  app.add_option("--timeout", f.timeout, "time allowed for a whole response")
      ->capture_default_str();
  app.add_option("--backend-header", f.backend_header, "response header naming the pod")
      ->capture_default_str();
  app.add_option("--ok-status", f.ok_status, "statuses that count as ok")->capture_default_str();
  app.add_option("--warmup", f.warmup, "load before the restart")->capture_default_str();
  app.add_option("--tail", f.tail, "load after the rollout completed")->capture_default_str();
  app.add_option("--rollout-timeout", f.rollout_timeout, "give up (exit 2) after this long")
      ->capture_default_str();
  app.add_option("--out", f.out, "run folder (default: a new one under /tmp)");
  app.add_option("--max-failures", f.max_failures, "failures allowed before exit code 1")
      ->capture_default_str();
  app.add_flag("--print-rbac", f.print_rbac, "print the Role verify needs and exit");
  app.add_option("--agents", f.agents,
                 "per-node (one agent per node), K agents, or none (only --url from here)")
      ->capture_default_str();
  app.add_option("--agent-image", f.agent_image, "image holding /zerodrop for the agents")
      ->capture_default_str();
  app.add_option("--max-nodes", f.max_nodes, "per-node: at most this many agents")
      ->capture_default_str();
  app.add_option("--path", f.path, "path the agents request from the Service")
      ->capture_default_str();
  app.add_option("--agent-ready-timeout", f.agent_ready_timeout,
                 "give up (exit 2) when the agents are not all loading by then")
      ->capture_default_str();
  app.add_flag("--keep", f.keep,
               "leave the agents' Job (its pods run on until its deadline) for inspection");
  app.footer(kFooter);
}

verify::Options options_of(const Flags& f) {
  verify::Options o;
  o.deployment = verify::deployment_name(f.deployment);
  o.kubectl = {verify::find_kubectl(f.kubectl), f.kubeconfig, f.context};
  o.namespace_name =
      f.namespace_name.empty() ? verify::context_namespace(o.kubectl) : f.namespace_name;
  o.service = f.service;
  if (f.action != "restart" && f.action != "watch") {
    throw Error(fmt::format("--action: expected restart or watch, got '{}'", f.action));
  }
  o.action = f.action == "restart" ? verify::Action::restart : verify::Action::watch;
  if (f.agents == "none") {
    o.agents = verify::AgentMode::none;
  } else if (f.agents == "per-node") {
    o.agents = verify::AgentMode::per_node;
  } else {
    o.agents = verify::AgentMode::count;
    o.agent_count = static_cast<int>(parse_integer(f.agents, "--agents", 1, 1000));
  }
  if (f.urls.empty() && o.agents == verify::AgentMode::none) {
    throw Error("--agents none needs --url: there would be no load; see 'zerodrop verify --help'");
  }
  o.urls = f.urls;
  o.agent_image = f.agent_image;
  o.max_nodes = static_cast<int>(parse_integer(f.max_nodes, "--max-nodes", 1, 10000));
  o.agent_path = f.path;
  o.agent_ready_timeout = parse_duration(f.agent_ready_timeout, "--agent-ready-timeout");
  o.keep = f.keep;
  o.load.rate = parse_number(f.rate, "--rate");
  if (o.load.rate <= 0) {
    throw Error("--rate: verify needs an open-loop rate above 0");
  }
  o.load.keepalive = f.keepalive ? load::Keepalive::on : load::Keepalive::off;
  o.load.fresh_share = parse_share(f.fresh, "--fresh");
  if (o.load.fresh_share > 0 && !f.keepalive) {
    throw Error("--fresh: only with --keepalive (without it every request opens a connection)");
  }
  for (const std::string& h : f.headers) {
    o.load.headers.push_back(load::parse_header(h));
  }
  o.load.timeout = parse_duration(f.timeout, "--timeout");
  o.load.backend_header = f.backend_header;
  o.load.ok_status = load::parse_status_ranges(f.ok_status);
  o.warmup = parse_duration(f.warmup, "--warmup");
  o.tail = parse_duration(f.tail, "--tail");
  o.rollout_timeout = parse_duration(f.rollout_timeout, "--rollout-timeout");
  o.out = f.out;
  o.interrupted = &verify_interrupted;
  return o;
}

int run_verify(const Flags& f) {
  if (f.print_rbac) {
    std::string ns = f.namespace_name.empty() ? "NAMESPACE" : f.namespace_name;
    std::cout << verify::role_yaml(
        ns, f.action == "watch" ? verify::Action::watch : verify::Action::restart,
        f.agents == "none" ? verify::AgentMode::none : verify::AgentMode::per_node);
    return to_int(ExitCode::ok);
  }
  if (f.deployment.empty()) {
    throw Error("verify needs a Deployment: zerodrop verify deploy/NAME");
  }
  verify::Options options = options_of(f);
  uint64_t budget =
      static_cast<uint64_t>(parse_integer(f.max_failures, "--max-failures", 0, INT64_MAX));

  struct sigaction action {};

  action.sa_handler = on_verify_interrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return verify::run(options,
                     [budget](const record::RunFolder& folder, const record::RunRecord& run) {
                       report::FinishOptions finish{.tty = report::is_terminal(stdout)};
                       finish.diagnose.k8s_version = run.scenario.k8s_version.value_or("1.30");
                       diagnose::Diagnosis d = report::finish_run(folder, run, std::cout, finish);
                       std::cout << "run folder: " << folder.dir() << "\n";
                       return to_int(d.totals.failed > budget ? ExitCode::failed : ExitCode::ok);
                     });
}

}  // namespace

Runner setup_verify(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_verify(*flags);
  };
}

}  // namespace zerodrop::cli
