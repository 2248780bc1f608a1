// zerodrop verify deploy/NAME: flags -> verify::Options, then verify::run(); the run ends in
// report::finish_run, handed to the engine as a function.
#include <unistd.h>

#include <filesystem>
#include <fstream>
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
#include "cli/load_flags.h"
#include "cli/stop_signals.h"
#include "load/input.h"
#include "report/report.h"
#include "verify/verify.h"

namespace zerodrop::cli {
namespace verify_command {
namespace {

struct Flags {
  std::string deployment;
  std::string namespace_name;
  std::string context;
  std::string kubeconfig;
  std::string kubectl;
  std::string service;
  std::vector<std::string> urls;
  std::vector<std::string> action{"restart"};
  LoadFlags load{.rate = "50", .keepalive = false, .timeout = "5s"};
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
  std::string agent_records = "failed";
  bool keep = false;
  std::string junit;
  bool dry_run = false;
  bool cleanup = false;
};

constexpr const char* kFooter = R"(
What it does, in order (nothing is changed until the preflight passes):
  1. starts 'kubectl proxy --unix-socket' in a private folder (your kubeconfig's auth, exec
     plugins included; no TCP port; the proxy dies with zerodrop, even on SIGKILL)
  2. preflight: the API answers and serves discovery.k8s.io/v1; one SelfSubjectAccessReview per
     permission (one error lists all that are missing); the Deployment exists; one Service selects
     its pods (or --service); the live Deployment is audited and findings print as warnings
  3. creates the run's anchor ConfigMap, then the agents, owned by it: an Indexed Job, one pod
     per node (--agents), each running
     'zerodrop verify-agent' from --agent-image and loading the Service through its node's
     routing; verify follows each agent's log (pods/log) and waits until all are loading
  4. watches the Deployment, its Pods, the Service's EndpointSlices and the namespace's Events,
     each change stamped when received, while the agents (and any --url load from this machine)
     run
  5. after --warmup, restarts the Deployment (kubectl rollout restart's patch) or sets an
     image (--action set-image C=IMG), or with --action watch waits for a rollout someone else
     starts
  6. waits until no old pod is left and the EndpointSlices hold only new pods, then --tail
  7. deletes the agents' Job and the anchor (also on Ctrl-C or an error; --keep keeps them;
     --cleanup removes what a crashed run left), merges their
     records (router node/NAME), estimates when each node stopped routing to each deleted pod
     (propagation.ndjson), diagnoses every failed request and names the hole

Examples:
  zerodrop verify deploy/web -n shop --rate 100
  zerodrop verify deploy/web -n shop --agents none --url https://shop.example/
  kubectl zerodrop verify deploy/web --context staging --url http://127.0.0.1:8080/
  zerodrop verify deploy/web --action watch --url http://10.0.0.5/   # then: kubectl apply ...
  zerodrop verify deploy/web -n shop --print-rbac | kubectl apply -f -
  zerodrop verify deploy/web -n shop --dry-run          # the plan and the objects, as YAML
  zerodrop verify deploy/web -n shop --junit zerodrop.xml --action set-image app=web:v2
  zerodrop verify --cleanup -n shop                     # after a crashed run

What the API cannot show is inferred and said so: the stop signal is the
deletion seen plus the preStop delay; a failed new connection without a backend name is given
to the only pod terminating at the time, else left unexplained.
Exit codes: 0 no failure beyond --max-failures, 1 requests failed (holes named), 2 usage,
setup error or a rollout that did not complete, 130 interrupted. See docs/verify.md.)";

constexpr LoadFlagSet kVerifyLoadFlags{
    .flags = LoadFlag::header | LoadFlag::backend_header | LoadFlag::ok_status,
    .rate =
        "requests per second of the agents together (split evenly), and of the --url load "
        "from here",
    .keepalive =
        "reuse connections / a new connection per request (default; what routers "
        "re-route)",
    .fresh_name = "--fresh",
    .fresh =
        "with --keepalive: the share of requests that close their connection, so the next "
        "opens a new one (new connections bound each node's update)",
};

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
                 "restart (patch like kubectl rollout restart), set-image CONTAINER=IMAGE (like "
                 "kubectl set image) or watch (wait for someone else's rollout)")
      ->expected(1, 2)
      ->capture_default_str();
  add_load_flags(app, f.load, kVerifyLoadFlags);
  app.add_option("--warmup", f.warmup, "load before the restart")->capture_default_str();
  app.add_option("--tail", f.tail, "load after the rollout completed")->capture_default_str();
  app.add_option("--rollout-timeout", f.rollout_timeout, "give up (exit 2) after this long")
      ->capture_default_str();
  app.add_option("--out", f.out, "run folder (default: a new one under /tmp)");
  app.add_option("--max-failures", f.max_failures, "failures allowed before exit code 1")
      ->capture_default_str();
  app.add_option("--junit", f.junit,
                 "also write a JUnit XML (a testcase per hole and one for the run) for CI");
  app.add_flag("--dry-run", f.dry_run,
               "run the preflight (reads only), print the plan and every object verify would "
               "create as YAML, create nothing");
  app.add_flag("--cleanup", f.cleanup,
               "remove what crashed runs left in the namespace (their anchor ConfigMaps and what "
               "those own), say each, and exit");
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
  app.add_option("--agent-records", f.agent_records,
                 "what each agent streams: failed (per backend 100 ms counts, and every failed "
                 "request in full) or all (every request in full: debugging, lab comparisons)")
      ->capture_default_str();
  app.add_flag("--keep", f.keep,
               "leave the run's anchor ConfigMap and the agents' Job it owns (its pods run on "
               "until its deadline) for inspection");
  app.footer(kFooter);
}

// --action restart | watch | set-image CONTAINER=IMAGE (also set-image=CONTAINER=IMAGE).
verify::Action action_of(std::vector<std::string> words, verify::SetImage& set_image) {
  if (words.size() == 1 && words[0].rfind("set-image=", 0) == 0) {
    words = {"set-image", words[0].substr(std::string("set-image=").size())};
  }
  std::string name = words.empty() ? "" : words[0];
  if (name == "set-image") {
    std::string arg = words.size() > 1 ? words[1] : "";
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      throw Error(fmt::format("--action set-image: expected CONTAINER=IMAGE, got '{}'", arg));
    }
    set_image = {arg.substr(0, eq), arg.substr(eq + 1)};
    return verify::Action::set_image;
  }
  if (words.size() > 1 || (name != "restart" && name != "watch")) {
    std::string all;
    for (const std::string& w : words) {
      all += (all.empty() ? "" : " ") + w;
    }
    throw Error(fmt::format(
        "--action: expected restart, watch or set-image CONTAINER=IMAGE, got '{}'", all));
  }
  return name == "restart" ? verify::Action::restart : verify::Action::watch;
}

verify::Options options_of(const Flags& f) {
  verify::Options o;
  o.deployment = verify::deployment_name(f.deployment);
  o.kubectl = {verify::find_kubectl(f.kubectl), f.kubeconfig, f.context};
  o.namespace_name =
      f.namespace_name.empty() ? verify::context_namespace(o.kubectl) : f.namespace_name;
  o.service = f.service;
  o.action = action_of(f.action, o.set_image);
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
  o.agent_records = verify::parse_agent_records(f.agent_records, "--agent-records");
  o.agent_ready_timeout = parse_duration(f.agent_ready_timeout, "--agent-ready-timeout");
  o.keep = f.keep;
  apply_load_flags(f.load, o.load);
  if (o.load.rate <= 0) {
    throw Error("--rate: verify needs an open-loop rate above 0");
  }
  if (o.load.fresh_share > 0 && !f.load.keepalive) {
    throw Error("--fresh: only with --keepalive (without it every request opens a connection)");
  }
  o.warmup = parse_duration(f.warmup, "--warmup");
  o.tail = parse_duration(f.tail, "--tail");
  o.rollout_timeout = parse_duration(f.rollout_timeout, "--rollout-timeout");
  o.out = f.out;
  o.dry_run = f.dry_run;
  return o;
}

void write_junit_file(const std::string& path, const record::RunRecord& run,
                      const diagnose::Diagnosis& d, uint64_t budget) {
  std::ofstream out(path);
  report::write_junit(out, run, d, budget);
  out.close();
  if (!out) {
    throw Error(fmt::format("--junit: cannot write {}", path));
  }
}

int run_verify(const Flags& f) {
  if (f.print_rbac) {
    std::string ns = f.namespace_name.empty() ? "NAMESPACE" : f.namespace_name;
    std::cout << verify::role_yaml(
        ns,
        f.action == std::vector<std::string>{"watch"} ? verify::Action::watch
                                                      : verify::Action::restart,
        f.agents == "none" ? verify::AgentMode::none : verify::AgentMode::per_node);
    return to_int(ExitCode::ok);
  }
  if (f.cleanup) {
    verify::KubectlOptions kubectl{verify::find_kubectl(f.kubectl), f.kubeconfig, f.context};
    return verify::run_cleanup(
        kubectl, f.namespace_name.empty() ? verify::context_namespace(kubectl) : f.namespace_name);
  }
  if (f.deployment.empty()) {
    throw Error("verify needs a Deployment: zerodrop verify deploy/NAME");
  }
  verify::Options options = options_of(f);
  if (!f.junit.empty()) {  // before the run, not after a rollout that cannot be repeated
    std::string dir = std::filesystem::path(f.junit).parent_path().string();
    if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0) {
      throw Error(
          fmt::format("--junit {}: cannot write into {}", f.junit, dir.empty() ? "." : dir));
    }
  }
  uint64_t budget =
      static_cast<uint64_t>(parse_integer(f.max_failures, "--max-failures", 0, INT64_MAX));
  options.interrupted = catch_stop_signals(SecondSignal::kills);
  std::string junit = f.junit;
  return verify::run(
      options, [budget, junit](const record::RunFolder& folder, const record::RunRecord& run) {
        report::FinishOptions finish{.tty = report::is_terminal(stdout)};
        finish.diagnose.k8s_version = run.scenario.k8s_version.value_or("1.30");
        diagnose::Diagnosis d = report::finish_run(folder, run, std::cout, finish);
        std::cout << "run folder: " << folder.dir() << "\n";
        if (!junit.empty()) {
          write_junit_file(junit, run, d, budget);
        }
        return to_int(d.totals.failed > budget ? ExitCode::failed : ExitCode::ok);
      });
}

}  // namespace
}  // namespace verify_command

Runner setup_verify(CLI::App& app) {
  using namespace verify_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_verify(*flags);
  };
}

}  // namespace zerodrop::cli
