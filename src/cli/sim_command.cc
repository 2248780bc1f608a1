#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/duration.h"
#include "base/enum_names.h"
#include "base/error.h"
#include "base/int_or_percent.h"
#include "base/parse.h"
#include "cli/command.h"
#include "cli/manifest_flags.h"
#include "http/idempotent.h"
#include "kube/loader.h"
#include "kube/workload.h"
#include "report/report.h"
#include "sim/invocation.h"
#include "sim/workload_options.h"

namespace zerodrop::cli {
namespace sim_command {
namespace {

constexpr const char* kFooter = R"(
Examples:
  zerodrop sim --nodes 5000 --replicas 200 --rate 50000
  zerodrop sim -f k8s/deploy.yaml --nodes 2000 --profile eks --dataplane ingress-nginx
  zerodrop sim --nodes 5000 --sweep prestop=0..30 --runs 20 --budget '0 failures in 99%'
  zerodrop sim --profile lab --nodes 3 --replicas 3 --rate 200 --out run/   # as 'zerodrop lab'
  zerodrop sim --profile my-cluster.yaml --app graceful --prestop 10

Profiles: gke (default), eks, kind, lab, or a YAML file (docs/sim.md lists its keys).
Exit: 0 when the budget is met (without --budget: no predicted failure; with --sweep: some
value meets it), 1 otherwise, 2 on bad input.)";

// Flags as text, converted with base/parse.h so errors name the flag.
struct Flags {
  std::string file, container, profile = "gke", dataplane, app = "naive", readiness = "probed";
  std::string nodes, replicas = "3", rate = "100", prestop = "0", grace = "30s";
  std::string max_surge = "25%", max_unavailable = "25%", propagation;
  std::string request_duration = "p50=20ms,p99=200ms", drain = "p50=100ms,p99=1s", warmup = "0";
  std::string seed = "1", runs = "1", sweep, budget, out, duration = "0", tail = "10s";
  std::string bucket = "1s", pod_capacity = "0", stale_check = "detects";
  std::string connection_rate = "10", connection_max_age = "60s", idle_timeout = "90s";
  std::string client_retries = "0", method = "GET", linger = "3s", readiness_period;
  std::string liveness, liveness_at_shutdown = "stops";
  std::string protocol, goaway = "graceful", grpc_backoff = "1s", proxy_sync_loss;
  std::string min_sync_period, ipvs_conn_reuse_mode = "1", sidecar, sidecar_drain;
  bool no_keepalive = false, sidecar_exit_on_zero = false;
};

double seconds(const std::string& text, const char* flag) {
  return to_seconds(parse_duration(text, flag));
}

double prestop_seconds(std::string text) {
  if (text == "none") {
    return 0;
  }
  if (text.starts_with("sleep:")) {
    text = text.substr(6);
  }
  return seconds(text, "--prestop");
}

// --liveness PERIOD,FAILURES,TIMEOUT ("10s,3,1s"): the liveness probe's periodSeconds,
// failureThreshold and timeoutSeconds.
sim::LivenessProbe liveness_flag(const std::string& text) {
  auto first = text.find(','), second = text.find(',', first == std::string::npos ? 0 : first + 1);
  if (first == std::string::npos || second == std::string::npos) {
    throw Error("--liveness: expected PERIOD,FAILURES,TIMEOUT (10s,3,1s), got '" + text + "'");
  }
  return {seconds(text.substr(0, first), "--liveness"),
          static_cast<int>(
              parse_integer(text.substr(first + 1, second - first - 1), "--liveness", 1, 1000)),
          seconds(text.substr(second + 1), "--liveness")};
}

// Reads -f into `o`. A preStop whose delay the manifest does not tell is an error unless
// --prestop says it.
void map_workload(const Flags& f, const CLI::App& app, sim::Options& o) {
  o.nodes = f.nodes.empty() ? o.profile.nodes
                            : static_cast<int>(parse_integer(f.nodes, "--nodes", 1, 100'000));
  o.replicas = static_cast<int>(parse_integer(f.replicas, "--replicas", 1, 100'000));
  o.prestop = prestop_seconds(f.prestop);
  o.grace = seconds(f.grace, "--grace");
  o.max_surge = IntOrPercent::parse(f.max_surge, "--max-surge");
  o.max_unavailable = IntOrPercent::parse(f.max_unavailable, "--max-unavailable");
  if (!f.file.empty()) {
    std::vector<kube::Object> objects = kube::load_objects(f.file);
    std::optional<kube::Workload> w = kube::first_workload_of(objects);
    if (!w) {
      throw Error(f.file + ": no Deployment, StatefulSet or other workload in it");
    }
    std::optional<std::string> unknown = sim::apply_workload(o, *w, f.container);
    if (auto protocol = sim::service_protocol(objects, *w)) {
      o.protocol = *protocol;  // --protocol, when given, overrides it (apply_traffic_flags)
    }
    if (unknown && !flag_given(app, "--prestop")) {
      throw Error(*unknown + "; give --prestop DURATION to simulate it");
    }
  }
}

// A mesh's sidecar proxy, each flag where given, over -f's proxy container.
void apply_sidecar_flags(const Flags& f, kube::SidecarProxy& proxy) {
  if (!f.sidecar.empty()) {
    constexpr std::array<std::string_view, 3> kOrders = {"none", "plain", "native"};
    auto order = enum_from_name<kube::SidecarOrder>(kOrders, f.sidecar);
    if (!order) {
      throw Error("--sidecar: expected none, plain or native, got '" + f.sidecar + "'");
    }
    proxy.order = *order;
  }
  if (!f.sidecar_drain.empty()) {
    proxy.termination_drain = parse_duration(f.sidecar_drain, "--sidecar-drain");
  }
  if (f.sidecar_exit_on_zero) {
    proxy.exit_on_zero_active_connections = true;
  }
}

// The Deployment's flags, each where given, over the manifest's values (-f) or the defaults.
void apply_workload_flags(const Flags& f, const CLI::App& app, sim::Options& o) {
  if (flag_given(app, "--replicas")) {
    o.replicas = static_cast<int>(parse_integer(f.replicas, "--replicas", 1, 100'000));
  }
  if (flag_given(app, "--prestop")) {
    o.prestop = prestop_seconds(f.prestop);
  }
  if (flag_given(app, "--grace")) {
    o.grace = seconds(f.grace, "--grace");
  }
  apply_rollout_limit_flags(app, f.max_surge, f.max_unavailable, o.max_surge, o.max_unavailable);
  if (f.readiness != "probed" && f.readiness != "lies") {
    throw Error("--readiness: expected 'probed' or 'lies', got '" + f.readiness + "'");
  }
  if (flag_given(app, "--readiness") || f.file.empty()) {
    o.readiness = f.readiness == "lies" ? sim::Readiness::lies : sim::Readiness::probed;
  }
  if (!f.liveness.empty()) {
    o.liveness = liveness_flag(f.liveness);
  }
  if (!f.readiness_period.empty()) {
    o.readiness_period = seconds(f.readiness_period, "--readiness-period");
  }
  apply_sidecar_flags(f, o.sidecar);
}

// The app, its clients and the run: flags only, no manifest says them.
void apply_traffic_flags(const Flags& f, sim::Options& o) {
  o.rate = parse_number(f.rate, "--rate");
  o.app = sim::app_from_string(f.app, "--app");
  o.linger = seconds(f.linger, "--linger");
  o.request_duration = sim::parse_distribution(f.request_duration, "--request-duration");
  o.drain = sim::parse_distribution(f.drain, "--drain");
  o.warmup = sim::parse_distribution(f.warmup, "--warmup");
  o.keepalive = f.no_keepalive ? sim::Keepalive::off : sim::Keepalive::on;
  if (f.stale_check != "detects" && f.stale_check != "none") {
    throw Error("--stale-check: expected 'detects' or 'none', got '" + f.stale_check + "'");
  }
  o.stale_check = f.stale_check == "none" ? sim::StaleCheck::none : sim::StaleCheck::detects;
  o.pod_capacity = parse_number(f.pod_capacity, "--pod-capacity");
  o.connection_rate = parse_number(f.connection_rate, "--connection-rate");
  if (o.connection_rate <= 0) {
    throw Error("--connection-rate: expected a number above 0, got '" + f.connection_rate + "'");
  }
  o.connection_max_age = seconds(f.connection_max_age, "--connection-max-age");
  o.idle_timeout = seconds(f.idle_timeout, "--idle-timeout");
  o.client_retries = static_cast<int>(parse_integer(f.client_retries, "--client-retries", 0, 10));
  if (!f.protocol.empty()) {  // else -f's Service appProtocol, else http1
    o.protocol = sim::protocol_from_string(f.protocol, "--protocol");
  }
  o.liveness_at_shutdown =
      sim::liveness_at_shutdown_from_string(f.liveness_at_shutdown, "--liveness-at-shutdown");
  o.goaway = sim::goaway_from_string(f.goaway, "--goaway");
  o.grpc_backoff = seconds(f.grpc_backoff, "--grpc-backoff");
  if (!f.proxy_sync_loss.empty()) {
    o.proxy_sync_loss = parse_number(f.proxy_sync_loss, "--proxy-sync-loss");
  }
  if (!f.min_sync_period.empty()) {
    o.min_sync_period = seconds(f.min_sync_period, "--min-sync-period");
  }
  o.ipvs_conn_reuse_mode =
      static_cast<int>(parse_integer(f.ipvs_conn_reuse_mode, "--ipvs-conn-reuse-mode", 0, 1));
  o.idempotent = http::idempotent(boost::beast::http::string_to_verb(f.method));
  o.seed = static_cast<uint64_t>(parse_integer(f.seed, "--seed", 0, INT64_MAX));
  o.duration = seconds(f.duration, "--duration");
  o.tail = seconds(f.tail, "--tail");
  o.bucket = seconds(f.bucket, "--bucket");
}

sim::Invocation to_invocation(const Flags& f, const CLI::App& app) {
  sim::Invocation inv;
  sim::Options& o = inv.options;
  o.profile = sim::load_profile(f.profile);
  o.dataplane = f.dataplane.empty() ? o.profile.dataplane
                                    : sim::dataplane_from_string(f.dataplane, "--dataplane");
  map_workload(f, app, o);
  apply_workload_flags(f, app, o);
  if (!f.propagation.empty()) {
    o.profile.propagation = sim::parse_distribution(f.propagation, "--propagation");
  }
  apply_traffic_flags(f, o);
  inv.runs = static_cast<int>(parse_integer(f.runs, "--runs", 1, 100'000));
  if (!f.sweep.empty()) {
    inv.sweep = sim::parse_sweep(f.sweep);
  }
  if (!f.budget.empty()) {
    inv.budget = sim::parse_budget(f.budget);
  }
  inv.out_dir = f.out;
  return inv;
}

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("-f,--file", f.file,
                 "Deployment/StatefulSet YAML: replicas, strategy, preStop, "
                 "grace, readiness probe (flags override it)");
  app.add_option("--container", f.container,
                 "Container of -f to model (default: the first that is not a native sidecar)");
  app.add_option("--profile", f.profile, "Cluster: gke, eks, kind, lab or a YAML file")
      ->capture_default_str();
  app.add_option("--nodes", f.nodes, "Nodes in the cluster (default: the profile's)");
  app.add_option("--replicas", f.replicas, "Replicas rolled")->capture_default_str();
  app.add_option("--rate", f.rate, "Requests per second to the service")->capture_default_str();
  app.add_option("--dataplane", f.dataplane,
                 "kube-proxy-iptables, -nftables, -ipvs, ingress-nginx or cloud-lb "
                 "(default: the profile's)");
  app.add_option("--prestop", f.prestop, "preStop sleep: 10, 10s, sleep:10 or none")
      ->capture_default_str();
  app.add_option("--grace", f.grace, "terminationGracePeriodSeconds (duration)")
      ->capture_default_str();
  app.add_option("--max-surge", f.max_surge, "Deployment maxSurge (count or %)")
      ->capture_default_str();
  app.add_option("--max-unavailable", f.max_unavailable, "Deployment maxUnavailable (count or %)")
      ->capture_default_str();
  app.add_option("--app", f.app, "App at SIGTERM: naive (exits), close-listener, graceful, linger")
      ->capture_default_str();
  app.add_option("--linger", f.linger, "--app linger: stop signal -> exit, serving meanwhile")
      ->capture_default_str();
  app.add_option("--readiness", f.readiness, "New pods' Ready: probed (truthful) or lies (tcp)")
      ->capture_default_str();
  app.add_option("--readiness-period", f.readiness_period,
                 "Readiness probe period (default: -f's, else 10s)");
  app.add_option("--warmup", f.warmup, "New pod start -> able to serve (distribution)")
      ->capture_default_str();
  app.add_option("--request-duration", f.request_duration, "Request duration (distribution)")
      ->capture_default_str();
  app.add_option("--drain", f.drain, "Stop signal -> in-flight requests done (distribution)")
      ->capture_default_str();
  app.add_option("--propagation", f.propagation,
                 "Bypass the cluster model: every router applies every change after this "
                 "(2s, 1s..3s, p50=1s,p99=6s)");
  app.add_flag("--no-keepalive", f.no_keepalive, "Clients open a connection per request");
  app.add_option("--stale-check", f.stale_check,
                 "Clients notice closed idle connections: detects or none")
      ->capture_default_str();
  app.add_option("--connection-rate", f.connection_rate, "Requests/s on one keep-alive connection")
      ->capture_default_str();
  app.add_option("--connection-max-age", f.connection_max_age,
                 "Clients close a keep-alive connection after this (0 = never)")
      ->capture_default_str();
  app.add_option("--idle-timeout", f.idle_timeout, "Keep-alive idle timeout")
      ->capture_default_str();
  app.add_option("--client-retries", f.client_retries, "Client retries of a refused connection")
      ->capture_default_str();
  app.add_option("--method", f.method, "HTTP method: an ingress retries idempotent ones")
      ->capture_default_str();
  app.add_option("--liveness", f.liveness,
                 "Liveness probe PERIOD,FAILURES,TIMEOUT (10s,3,1s; default: -f's, else none)");
  app.add_option("--liveness-at-shutdown", f.liveness_at_shutdown,
                 "The kubelet stops liveness probing at deletion (stops) or keeps probing "
                 "(probes: kubelets before 1.21, native sidecars)")
      ->capture_default_str();
  app.add_option("--protocol", f.protocol,
                 "Clients speak http1, h2 or grpc (multiplexed connections pinned until "
                 "GOAWAY); default -f's Service appProtocol, else http1");
  app.add_option("--goaway", f.goaway,
                 "h2/grpc apps that drain: graceful (double GOAWAY, streams finish) or abrupt "
                 "(streams cancelled)")
      ->capture_default_str();
  app.add_option("--grpc-backoff", f.grpc_backoff,
                 "gRPC: wait after a failed connect, its RPCs failing meanwhile")
      ->capture_default_str();
  app.add_option("--proxy-sync-loss", f.proxy_sync_loss,
                 "kube-proxy: probability per sync that a connect of that second is lost "
                 "(default: nftables 6e-7, measured; iptables 0)");
  app.add_option("--sidecar", f.sidecar,
                 "A mesh's Envoy proxy in the pod: none, plain (a regular container: stopped "
                 "with the app) or native (restartPolicy Always: stopped after it); default -f's");
  app.add_option("--sidecar-drain", f.sidecar_drain,
                 "The proxy's terminationDrainDuration: stop signal -> exit (default 5s)");
  app.add_flag(
      "--sidecar-exit-on-zero", f.sidecar_exit_on_zero,
      "The proxy exits when it has no active connection (EXIT_ON_ZERO_ACTIVE_CONNECTIONS)");
  app.add_option("--min-sync-period", f.min_sync_period,
                 "kube-proxy's minSyncPeriod: changes batched per sync (default: the profile's, "
                 "1s; IPVS 0)");
  app.add_option("--ipvs-conn-reuse-mode", f.ipvs_conn_reuse_mode,
                 "kube-proxy-ipvs: net.ipv4.vs.conn_reuse_mode, 0 (kube-proxy on kernels < 5.9) "
                 "or 1")
      ->capture_default_str();
  app.add_option("--pod-capacity", f.pod_capacity, "Requests/s one pod serves (0 = unlimited)")
      ->capture_default_str();
  app.add_option("--seed", f.seed, "Random seed (same seed, same output)")->capture_default_str();
  app.add_option("--runs", f.runs, "Rollouts simulated (seeds seed, seed+1, …)")
      ->capture_default_str();
  app.add_option("--sweep", f.sweep,
                 "Table against prestop=0..30[,step], grace=… or max-unavailable=0..N");
  app.add_option("--budget", f.budget, "Pass mark: 'N failures in P%' of the runs");
  app.add_option("--out", f.out, "Folder for events, buckets, run.json, report.json/html");
  app.add_option("--duration", f.duration, "Virtual time simulated (default: rollout + tail)")
      ->capture_default_str();
  app.add_option("--tail", f.tail, "Virtual time after the rollout completes")
      ->capture_default_str();
  app.add_option("--bucket", f.bucket, "Width of a time bucket of request counts")
      ->capture_default_str();
}

}  // namespace
}  // namespace sim_command

Runner setup_sim(CLI::App& app) {
  using namespace sim_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  app.footer(kFooter);
  return [flags, &app]() -> int {
    sim::Invocation invocation = to_invocation(*flags, app);
    invocation.finish = [](const std::optional<record::RunFolder>& folder,
                           const record::RunRecord& run, std::ostream& out) {
      report::finish_run(folder, run, out, {.tty = report::is_terminal(stdout)});
    };
    return sim::run(invocation, std::cout);
  };
}

}  // namespace zerodrop::cli
