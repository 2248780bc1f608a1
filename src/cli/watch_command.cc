// zerodrop watch: flags -> watch::Options, then watch::run(); each rollout's record ends in
// report::finish_run and a JUnit file, handed to the engine as a function that returns the
// verdict.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/parse.h"
#include "cli/command.h"
#include "cli/stop_signals.h"
#include "record/hole.h"
#include "record/outcome.h"
#include "report/report.h"
#include "verify/verify.h"
#include "watch/watch.h"

namespace zerodrop::cli {
namespace watch_command {
namespace {

struct Flags {
  std::vector<std::string> namespaces;
  std::string namespace_selector;
  std::string context;
  std::string kubeconfig;
  std::string kubectl;
  std::string listen = ":8080";
  std::string out = "/var/lib/zerodrop-watch";
  std::string keep_runs = "200";
  std::string rate = "5";
  std::string budget = "0";
  std::string tail = "5s";
  std::string drain_limit = "2m";
  bool no_events = false;
  std::string ingress_service;
  bool leader_elect = false;
  std::string lease_namespace;
  std::string lease_name = "zerodrop-watch";
  std::string identity;
  std::string lease_duration = "15s";
};

constexpr const char* kFooter = R"(
What it does:
  1. starts 'kubectl proxy --unix-socket' (your kubeconfig's auth; in a cluster the pod's
     ServiceAccount), checks the namespaces exist and every permission it needs (one line names
     all that are missing)
  2. serves on --listen: /metrics (OpenMetrics), /runs/ (the run folders, read-only, with an
     index), /healthz, /readyz (200 only on the leader) and /agent/v1/report, where the agents
     of its DaemonSet ('zerodrop verify-agent --watcher http://THIS:8080') report every second
  3. hands every agent the Services in front of the watched workloads: each agent probes each
     Service through its node's routing at --rate (cut to fit --budget); outside rollouts that
     traffic is the baseline (zerodrop_watch_baseline_*)
  4. watches Deployments, StatefulSets, DaemonSets and Argo Rollouts (those the API serves): a
     new pod template (kubectl rollout restart, set image, apply) starts a measurement: the
     workload, its pods, its Service's EndpointSlices and the Events, as 'zerodrop verify'
     watches them, plus every agent's requests to the Service (updateStrategy OnDelete: not
     measured, said as an Event RolloutNotMeasured)
  5. the controller reports the end, read as 'kubectl rollout status' reads each kind (a
     Deployment's Progressing NewReplicaSetAvailable, ProgressDeadlineExceeded or spec.paused; a
     StatefulSet's revisions and partition; a DaemonSet's updated and available counts; a
     Rollout's phase and stableRS); once every deleted pod is gone and --tail has passed, the
     record is diagnosed into a run folder under --out (report.html, report.json, junit.xml,
     watch.json), counted in /metrics and said as an Event on the workload:
       RolloutClean: 0 of 3,390 requests failed; run NS.NAME.TIME
       RolloutDroppedRequests: 12 of 3,410 requests failed: deregistration-race 12; fix: ...
  A rollout already under way when watch starts (or takes the lease over) is measured from
  there and marked partial (RolloutPartial): no verdict is invented for what it did not see.
  An agent that stops reporting is counted as lost, never as dropped requests.

Examples:
  zerodrop watch -n shop --out ./runs --listen 127.0.0.1:8080
  zerodrop watch --namespace-selector zerodrop.dev/watch=true --budget 500
  kubectl apply -k deploy/k8s/watch      # in the cluster: 2 replicas, a Lease, the agents
  curl -s localhost:8080/metrics | grep zerodrop_watch_failed_requests_total
Exit codes: 0 stopped (SIGTERM/SIGINT), 1 lost the lease, 2 usage, setup or a kubectl proxy
that died. See docs/watch.md.)";

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("-n,--namespace", f.namespaces,
                 "namespace to watch (repeatable; default: every namespace)");
  app.add_option("--namespace-selector", f.namespace_selector,
                 "watch only namespaces with these labels (e.g. zerodrop.dev/watch=true)");
  app.add_option("--context", f.context, "kubeconfig context (default: the current one)");
  app.add_option("--kubeconfig", f.kubeconfig, "kubeconfig file (default: kubectl's)");
  app.add_option("--kubectl", f.kubectl, "kubectl to run (default: $KUBECTL_PATH, else PATH)");
  app.add_option("--listen", f.listen, "HOST:PORT for /metrics, /runs/ and the agents")
      ->capture_default_str();
  app.add_option("--out", f.out, "the run folders' root (a volume in the cluster)")
      ->capture_default_str();
  app.add_option("--keep-runs", f.keep_runs, "run folders kept; the oldest are removed")
      ->capture_default_str();
  app.add_option("--rate", f.rate, "requests/s of each agent to each watched Service")
      ->capture_default_str();
  app.add_option("--budget", f.budget,
                 "requests/s of all agents together, cluster-wide (0: no limit); each agent's "
                 "rate per Service is cut to fit")
      ->capture_default_str();
  app.add_option("--tail", f.tail,
                 "measure this long after the end (the record closes 8 s later: the agents "
                 "report their counts once settled)")
      ->capture_default_str();
  app.add_option("--drain-limit", f.drain_limit,
                 "after the end, wait at most this long for deleted pods to go")
      ->capture_default_str();
  app.add_flag("--no-events", f.no_events, "post no Kubernetes Events");
  app.add_option("--ingress-service", f.ingress_service,
                 "NS/NAME[:PORT] of the ingress controller's Service: where an Ingress routes to "
                 "a watched Service, the agents also probe its host through it");
  app.add_flag("--leader-elect", f.leader_elect,
               "lead only while holding a coordination.k8s.io Lease (run two replicas)");
  app.add_option(
      "--lease-namespace", f.lease_namespace,
      "the Lease's namespace (default: $POD_NAMESPACE, else the first --namespace, else default)");
  app.add_option("--lease-name", f.lease_name, "the Lease's name")->capture_default_str();
  app.add_option("--identity", f.identity, "this replica in the Lease (default: $POD_NAME)");
  app.add_option("--lease-duration", f.lease_duration,
                 "a leader that has not renewed for this long is replaced")
      ->capture_default_str();
  app.footer(kFooter);
}

// The verdict watch reports, from the diagnosis of one rollout.
watch::Verdict verdict_of(const diagnose::Diagnosis& d, const record::RunRecord& run) {
  watch::Verdict v;
  v.requests = d.totals.requests;
  v.failed = d.totals.failed;
  for (const diagnose::HoleSummary& h : d.holes) {
    v.holes.emplace_back(std::string(record::to_string(h.hole)), h.requests);
  }
  if (!d.holes.empty()) {
    v.fix = d.holes.front().fix.summary;
  }
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const diagnose::RequestDiagnosis& f : d.failures) {
    const record::RequestRecord& r = run.requests[f.index];
    ++counts[{std::string(record::to_string(f.hole)), std::string(record::to_string(r.outcome))}];
  }
  v.by_hole_class.assign(counts.begin(), counts.end());
  return v;
}

int run_watch(const Flags& f) {
  watch::Options o;
  o.kubectl = {verify::find_kubectl(f.kubectl), f.kubeconfig, f.context};
  o.namespaces = f.namespaces;
  o.namespace_selector = f.namespace_selector;
  o.listen = f.listen;
  o.out = f.out;
  o.keep_runs = static_cast<size_t>(parse_integer(f.keep_runs, "--keep-runs", 1, 1000000));
  o.rate = parse_number(f.rate, "--rate");
  o.budget = parse_number(f.budget, "--budget");
  if (!(o.rate > 0) || o.rate > 10000) {
    throw Error(fmt::format("--rate {}: expected requests per second above 0", f.rate));
  }
  if (!(o.budget >= 0)) {
    throw Error(fmt::format("--budget {}: expected requests per second, 0 for none", f.budget));
  }
  o.tail = parse_duration(f.tail, "--tail");
  o.drain_limit = parse_duration(f.drain_limit, "--drain-limit");
  o.events = !f.no_events;
  o.ingress_service = f.ingress_service;
  o.leader_elect = f.leader_elect;
  o.lease_namespace = f.lease_namespace;
  o.lease_name = f.lease_name;
  o.identity = f.identity;
  o.lease_duration = parse_duration(f.lease_duration, "--lease-duration");
  if (o.lease_duration < std::chrono::seconds(2)) {
    throw Error("--lease-duration: at least 2s (the replicas renew every 2 s)");
  }
  o.interrupted = catch_stop_signals(SecondSignal::kills);
  return watch::run(o, [](const record::RunFolder& folder, const record::RunRecord& run) {
    report::FinishOptions finish{.tty = false};
    finish.diagnose.k8s_version = run.scenario.k8s_version.value_or("1.30");
    std::ostringstream terminal;  // the folder holds the reports; stderr gets one line
    diagnose::Diagnosis d = report::finish_run(folder, run, terminal, finish);
    std::ofstream junit(folder.dir() + "/junit.xml");
    report::write_junit(junit, run, d, 0);
    junit.close();
    if (!junit) {
      throw Error(fmt::format("cannot write {}/junit.xml", folder.dir()));
    }
    return verdict_of(d, run);
  });
}

}  // namespace
}  // namespace watch_command

Runner setup_watch(CLI::App& app) {
  using namespace watch_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  return [flags] {
    return run_watch(*flags);
  };
}

}  // namespace zerodrop::cli
