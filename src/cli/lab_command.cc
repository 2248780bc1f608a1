// zerodrop lab: flags -> lab::Options -> lab::run() -> diagnose -> report.
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/delay_distribution.h"
#include "base/duration.h"
#include "base/enum_names.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/parse.h"
#include "base/subprocess.h"
#include "cli/command.h"
#include "cli/lab_finish.h"
#include "cli/lab_pod_flags.h"
#include "cli/lab_workloads.h"
#include "cli/load_flags.h"
#include "diagnose/diagnose.h"
#include "lab/demo.h"
#include "lab/lab.h"
#include "lab/manifest.h"
#include "lab/runs.h"
#include "load/grpc.h"
#include "load/input.h"
#include "record/run_folder.h"
#include "report/report.h"

namespace zerodrop::cli {
namespace lab_command {
namespace {

constexpr const char* kFooter = R"(
Pods run COMMAND with {port}, {ip} and {name} replaced, env PORT, POD_IP, POD_NAME set, each
on its own 127.x.y.z. preStop counts against --grace; the stop signal follows it; SIGKILL comes
max(2s, grace - whole seconds of preStop) later. Routers apply each endpoint change after their
own propagation delay and stop sending new connections at the first update that marks a pod
terminating (serving-terminating endpoints only when no ready one is left).

Durations take units: 1.5s, 300ms, 2m. Exit: 0 no request failed, 1 some failed, 2 bad input,
130 interrupted (pods killed, records written).

Examples:
  zerodrop lab -- ./server --port {port}      # each pod gets its own IP and port
  zerodrop lab --prestop sleep:5s --grace 20s --dataplane l7 -- ./server --listen {ip}:{port}
  zerodrop lab -f k8s/deploy.yaml --propagation p50=1s,p99=6s -- ./server
  zerodrop lab -f k8s/deploy.yaml             # no COMMAND: the image, in podman containers
  zerodrop lab --action scale-down 1 --no-keepalive -- python3 -m http.server {port} --bind {ip}
  zerodrop lab --db postgres --migrate 'psql -v ON_ERROR_STOP=1 -f V2.sql' --migrate-at before \
      --to './app --app-version 2' -- ./app --app-version 1     # the schema race
  sudo zerodrop lab --dataplane nftables --no-keepalive --rate 2000 --dataplane-churn 200 \
      --prestop sleep:2s -- ./server --port {port}   # kube-proxy's rewrites lose a few new
      # connects (proxy-sync-loss); add --dataplane-sync atomic and none are lost
  zerodrop lab --demo)";

// Flag values as text, converted with base/parse.h so that errors name the flag.
struct Flags {
  std::vector<std::string> command;
  LabPodFlags pod;  // -f, --container and the flags that override the manifest
  std::string nodes = "3", propagation = "1s", seed = "1", dataplane = "l4", retries = "0";
  std::string dataplane_sync = "kube-proxy", dataplane_churn = "0";
  std::string ingress;
  std::vector<std::string> action = {"restart"};
  LoadFlags load{.rate = "200", .fresh_share = "50%"};  // the shared ones, with the lab's defaults
  std::string path = "/";
  bool no_keepalive = false;
  bool keepalive = false;
  std::string runs = "1";
  std::string warmup = "2s", tail = "3s", ready_timeout = "30s", out, pid_namespace = "auto";
  bool demo = false;
  std::string router_only, listen = "127.0.0.1:0", backend;
  std::vector<std::string> kube_api;  // given: serve the API; one value: the address
  std::vector<std::string> kube_api_deny;
  std::string kube_api_seed = "0", rollouts = "1", workloads;
  std::string to, to_file, to_image, db = "none", migrate, migrate_at = "before";
  std::string runtime;
};

constexpr LoadFlagSet kLabLoadFlags{
    .flags = LoadFlag::connections | LoadFlag::client_retry | LoadFlag::method | LoadFlag::http2,
    .rate = "requests per second over all routers",
    .fresh_name = "--fresh-share",
    .fresh =
        "share of requests sent with 'Connection: close', so that new connections "
        "(which a stopping pod can refuse) mix with reused ones (which it can cut)",
};

void add_flags(CLI::App& app, Flags& f) {
  add_lab_pod_flags(app, f.pod);
  app.add_option("--nodes", f.nodes, "routers, one per node")->capture_default_str();
  app.add_option("--propagation", f.propagation, "2s | 1s..4s | p50=1s,p99=6s")
      ->capture_default_str();
  app.add_option("--seed", f.seed, "seed of the propagation delays")->capture_default_str();
  app.add_option("--dataplane", f.dataplane,
                 "l4 (kube-proxy) | l7 (ingress) | nftables | iptables (kube-proxy's rules in the "
                 "kernel, each node a network namespace; root)")
      ->capture_default_str();
  app.add_option(
         "--dataplane-sync", f.dataplane_sync,
         "nftables | iptables: how each node writes an endpoint change. kube-proxy: as "
         "kube-proxy does, the Service's chains flushed and refilled in one transaction, so "
         "a new connection whose SYN crosses the commit can get no NAT and is lost "
         "(proxy-sync-loss; docs/dataplane-sync.md) | atomic: the new chains built whole, "
         "then one plain rule pointed at them; nothing with a set that a packet may be in is "
         "replaced")
      ->capture_default_str();
  app.add_option("--dataplane-churn", f.dataplane_churn,
                 "nftables | iptables: N more syncs a second on each node, the Service's "
                 "endpoints written again in --dataplane-sync's shape, as a busier node rewrites "
                 "its rules for other changes; --ingress nginx: N more reloads a second, as a "
                 "controller reloads for other configuration changes (0: only the rollout's "
                 "changes)")
      ->capture_default_str();
  app.add_option("--ingress", f.ingress,
                 "nginx | haproxy: Debian's nginx or HAProxy as each node's L7 router, "
                 "reconfigured as their controllers do (implies --dataplane l7)");
  app.add_option("--retries", f.retries, "l7: retries on connect failure, idempotent methods")
      ->capture_default_str();
  app.add_option("--action", f.action, "restart | scale-down N | delete-pod | none")
      ->expected(1, 2)
      ->capture_default_str();
  add_load_flags(app, f.load, kLabLoadFlags);
  app.add_flag("--no-keepalive", f.no_keepalive, "a new connection per request");
  app.add_flag("--keepalive", f.keepalive,
               "reuse connections; given alone, every request reuses one (--fresh-share 0%)");
  app.add_option("--runs", f.runs,
                 "repeat the rollout N times with seeds --seed, --seed+1, …; one sub-folder of "
                 "--out per run and a summary of the holes per run")
      ->capture_default_str();
  app.add_option("--path", f.path, "request path")->capture_default_str();
  app.add_option("--warmup", f.warmup, "load before the action")->capture_default_str();
  app.add_option("--tail", f.tail,
                 "load after the last deleted pod exited, and until every router applied every "
                 "change")
      ->capture_default_str();
  app.add_option("--ready-timeout", f.ready_timeout, "wait this long for the first pods")
      ->capture_default_str();
  app.add_option("--out", f.out, "run folder (default: a new folder under $TMPDIR)");
  app.add_option("--pid-namespace", f.pid_namespace,
                 "auto: each pod's command is PID 1 of its own PID namespace, as in a container, "
                 "where the host allows it | off: a plain process group")
      ->capture_default_str();
  app.add_flag("--demo", f.demo, "naive, close-listener and graceful side by side");
  app.add_option("--router-only", f.router_only, "")->group("");  // bench/lab_overhead.sh
  app.add_option("--listen", f.listen, "")->group("");
  app.add_option("--backend", f.backend, "")->group("");
  app.add_option("--kube-api", f.kube_api,
                 "serve the run as the Kubernetes API on ADDR (loopback only; default "
                 "127.0.0.1 and a free port) and write a kubeconfig into the run folder")
      ->expected(0, 1);
  app.add_option("--kube-api-deny", f.kube_api_deny, "")->group("");  // tests: VERB/RESOURCE
  app.add_option("--kube-api-seed", f.kube_api_seed, "")->group("");  // bench: N more Deployments
  app.add_option("--rollouts", f.rollouts,
                 "with --kube-api: wait for N rollouts, each with its tail, before the run ends; "
                 "each reported in RUN/rollouts/K")
      ->capture_default_str();
  app.add_option("--workloads", f.workloads,
                 "FILE: several workloads in one --kube-api, a line each: 'NAME: FLAGS -- "
                 "COMMAND' (its Deployment and Service NAME, its run folder RUN/NAME)");
  app.add_option("--to", f.to,
                 "'COMMAND ARGS…': the rollout's new pods run this version (B) while the old "
                 "ones still run COMMAND (A); default: the same command again");
  app.add_option("--to-file", f.to_file,
                 "the new version's command, args, env, preStop and probes from the first "
                 "workload of this manifest (--to overrides its command)");
  app.add_option("--to-image", f.to_image,
                 "pods of an image: the rollout's new pods run this image (B), from the local "
                 "store");
  app.add_option("--runtime", f.runtime,
                 "podman | docker: run the manifest's image in containers (the default without "
                 "a COMMAND: the runtime installed, podman first); a COMMAND then replaces the "
                 "container's command");
  app.add_option("--db", f.db,
                 "none | postgres: a PostgreSQL 15 on loopback for every pod (DATABASE_URL, "
                 "PGHOST, PGPORT, PGUSER, PGDATABASE), stopped at the end")
      ->capture_default_str();
  app.add_option("--migrate", f.migrate,
                 "'COMMAND ARGS…': a schema migration, with the pods' database env; a failure "
                 "ends the run (exit 2)");
  app.add_option("--migrate-at", f.migrate_at,
                 "before (the rollout waits, as for a pre-upgrade hook) | between (when the "
                 "first new pod is Ready) | after (the rollout)")
      ->capture_default_str();
  app.add_option("command", f.command, "COMMAND ARGS… (after --)");
}

lab::MigrateAt parse_migrate_at(const std::string& text) {
  if (auto at = enum_from_name<lab::MigrateAt>(lab::kMigrateAtNames, text)) {
    return *at;
  }
  throw Error(fmt::format("--migrate-at: expected before, between or after, got '{}'", text));
}

// The version change, the database and the migration: --to, --to-file, --db, --migrate.
void apply_schema_flags(const CLI::App& app, const Flags& f, lab::Options& o) {
  if (!f.to.empty() || !f.to_file.empty() || !f.to_image.empty()) {
    if (o.action != lab::Action::restart) {
      throw Error("--to, --to-file: a version change is a rollout: use --action restart");
    }
    o.to = f.to_file.empty() ? o.pod : lab::new_version_of(f.to_file, f.pod.container, o.pod);
    if (!f.to.empty()) {
      std::vector<std::string> command = lab::split_command(f.to, "--to");
      if (o.to->container) {
        o.to->container->command = command;  // replaces the image's, as a manifest's would
        o.to->container->args.clear();
      } else {
        o.to->command = command;
      }
    }
    if (!f.to_image.empty()) {
      if (!o.to->container) {
        throw Error("--to-image: the pods run a command; images run with -f and no command");
      }
      o.to->container->image = f.to_image;
    }
  }
  if (f.db != "none" && f.db != "postgres") {
    throw Error(fmt::format("--db: expected none or postgres, got '{}'", f.db));
  }
  o.database = f.db == "postgres" ? lab::DatabaseKind::postgres : lab::DatabaseKind::none;
  if (f.migrate.empty()) {
    if (app.count("--migrate-at") > 0) {
      throw Error("--migrate-at: there is no --migrate to run");
    }
    return;
  }
  o.migrate = lab::MigrationSpec{lab::split_command(f.migrate, "--migrate"),
                                 parse_migrate_at(f.migrate_at)};
  if (o.migrate->at != lab::MigrateAt::before && o.action != lab::Action::restart) {
    throw Error(fmt::format("--migrate-at {}: needs a rollout (--action restart)", f.migrate_at));
  }
}

// The shared load flags, then what they mean in the lab: the load speaks HTTP/2 through the l4
// routers (TCP proxies, so frames pass unchanged) or the l7 routers (which speak HTTP/2 on both
// sides); the real ingresses are configured for HTTP/1.1 only.
void apply_load(const CLI::App& app, const Flags& f, lab::Options& o) {
  const LoadFlags& l = f.load;
  if (o.ingress != lab::Ingress::none && (!l.grpc.empty() || l.http2)) {
    throw Error(
        fmt::format("--ingress {} {}: the lab configures the ingress for HTTP/1.1 only; "
                    "HTTP/2 routing is planned",
                    f.ingress, l.grpc.empty() ? "--http2" : "--grpc"));
  }
  apply_load_flags(l, o.load);
  o.load.keepalive = f.no_keepalive && !f.keepalive ? load::Keepalive::off : load::Keepalive::on;
  // An explicit --keepalive (without --fresh-share) means what it meant before the mixed default:
  // every request on a kept-alive connection.
  if (app.count("--keepalive") > 0 && app.count("--fresh-share") == 0) {
    o.load.fresh_share = 0;
  }
  o.method = o.load.protocol == load::Protocol::grpc ? "POST" : l.method;
  if (o.load.protocol != load::Protocol::http1) {
    o.load.fresh_share = 0;  // `Connection: close` does not exist in HTTP/2
  }
}

void apply_action(const Flags& f, lab::Options& o) {
  std::string verb = f.action.at(0);
  std::string count = f.action.size() > 1 ? f.action[1] : "";
  if (size_t sep = verb.find_first_of(":="); sep != std::string::npos) {
    count = verb.substr(sep + 1);
    verb = verb.substr(0, sep);
  }
  if (verb == "restart" && count.empty()) {
    o.action = lab::Action::restart;
  } else if (verb == "delete-pod" && count.empty()) {
    o.action = lab::Action::delete_pod;
  } else if (verb == "none" && count.empty()) {
    o.action = lab::Action::none;
  } else if (verb == "scale-down" && !count.empty()) {
    o.action = lab::Action::scale_down;
    o.scale_to = int_flag(count, "--action scale-down", 0, o.replicas);
  } else {
    throw Error(
        fmt::format("--action: expected restart, scale-down N, delete-pod or none, got '{}'",
                    fmt::join(f.action, " ")));
  }
}

// --ingress: a real ingress is an L7 router, so it implies --dataplane l7 and refuses l4.
void apply_ingress(const CLI::App& app, const Flags& f, lab::Options& o) {
  if (app.count("--ingress") == 0) {
    return;
  }
  if (f.ingress != "nginx" && f.ingress != "haproxy") {
    throw Error(fmt::format("--ingress: expected nginx or haproxy, got '{}'", f.ingress));
  }
  if (app.count("--dataplane") > 0 && o.dataplane != lab::Dataplane::l7) {
    throw Error(fmt::format("--ingress {}: an ingress routes HTTP; not with --dataplane {}",
                            f.ingress, f.dataplane));
  }
  o.dataplane = lab::Dataplane::l7;
  o.ingress = f.ingress == "nginx" ? lab::Ingress::nginx : lab::Ingress::haproxy;
  lab::ingress_binary(o.ingress);  // missing: its name and the setup command, before any pod
}

// Without a COMMAND (or with --runtime): the manifest's image in containers of the runtime.
void apply_container(const Flags& f, lab::Options& o) {
  if (f.pod.manifest.empty()) {
    throw Error(f.runtime.empty() ? "no command: give the server to run after --, e.g. "
                                    "'zerodrop lab -- ./server --port {port}', or the manifest "
                                    "whose image to run (-f)"
                                  : "--runtime: give the manifest whose image to run (-f)");
  }
  lab::RuntimeKind kind =
      f.runtime.empty() ? lab::find_runtime() : lab::parse_runtime(f.runtime, "--runtime");
  lab::run_image(f.pod.manifest, f.pod.container, kind, o);
  if (!f.command.empty()) {
    o.pod.container->command = f.command;
    o.pod.container->args.clear();
  }
}

// --dataplane-sync and --dataplane-churn: for the kernel's dataplanes only, but --dataplane-churn
// also reloads --ingress nginx.
void apply_dataplane_sync(const CLI::App& app, const Flags& f, lab::Options& o) {
  auto sync = lab::dataplane_sync_from_string(f.dataplane_sync);
  if (!sync) {
    throw Error(
        fmt::format("--dataplane-sync: expected kube-proxy or atomic, got '{}'", f.dataplane_sync));
  }
  o.dataplane_sync = *sync;
  o.dataplane_churn = int_flag(f.dataplane_churn, "--dataplane-churn", 0, 10'000);
  for (const char* flag : {"--dataplane-sync", "--dataplane-churn"}) {
    bool reloads =
        flag == std::string_view("--dataplane-churn") && o.ingress == lab::Ingress::nginx;
    if (app.count(flag) > 0 && !lab::in_kernel(o.dataplane) && !reloads) {
      throw Error(
          fmt::format("{}: the kernel's dataplanes write rules (and --ingress nginx reloads); add "
                      "--dataplane nftables or --dataplane iptables (not {})",
                      flag, lab::to_string(o.dataplane)));
    }
  }
}

lab::Options to_options(const CLI::App& app, const Flags& f) {
  lab::Options o;
  o.pod.readiness = lab::parse_probe("tcp", "--readiness");
  if (!f.pod.manifest.empty()) {
    lab::apply_manifest(f.pod.manifest, f.pod.container, o);
  }
  if (f.command.empty() || !f.runtime.empty()) {
    apply_container(f, o);
  } else {
    o.pod.command = f.command;
  }
  apply_lab_pod_flags(app, f.pod, o);
  o.nodes = int_flag(f.nodes, "--nodes", 1, 64);
  o.propagation = parse_delay_distribution(f.propagation, "--propagation");
  o.seed = static_cast<uint64_t>(parse_integer(f.seed, "--seed", 0, INT64_MAX));
  if (f.dataplane != "l4" && f.dataplane != "l7" && f.dataplane != "nftables"
      && f.dataplane != "iptables") {
    throw Error(
        fmt::format("--dataplane: expected l4, l7, nftables or iptables, got '{}'", f.dataplane));
  }
  o.dataplane = f.dataplane == "l4"         ? lab::Dataplane::l4
                : f.dataplane == "l7"       ? lab::Dataplane::l7
                : f.dataplane == "nftables" ? lab::Dataplane::nftables
                                            : lab::Dataplane::iptables;
  apply_ingress(app, f, o);
  apply_dataplane_sync(app, f, o);
  o.retries = int_flag(f.retries, "--retries", 0, 100);
  apply_action(f, o);
  apply_load(app, f, o);
  o.path = f.path.empty() || f.path[0] != '/' ? "/" + f.path : f.path;
  o.warmup = parse_duration(f.warmup, "--warmup");
  o.tail = parse_duration(f.tail, "--tail");
  o.ready_timeout = parse_duration(f.ready_timeout, "--ready-timeout");
  o.out_dir = f.out;
  if (f.pid_namespace != "auto" && f.pid_namespace != "off") {
    throw Error(fmt::format("--pid-namespace: expected auto or off, got '{}'", f.pid_namespace));
  }
  if (f.pid_namespace == "off") {
    o.isolation = Isolation::process_group;
  }
  o.live = ::isatty(STDERR_FILENO) != 0;
  if (app.count("--kube-api") > 0) {
    o.kube_api = lab::KubeApiOptions{};
    o.kube_api->listen = f.kube_api.empty() ? "" : f.kube_api.front();
    o.kube_api->deny = {f.kube_api_deny.begin(), f.kube_api_deny.end()};
    o.kube_api->seed_deployments = int_flag(f.kube_api_seed, "--kube-api-seed", 0, 100000);
  } else if (o.action == lab::Action::none) {
    throw Error("--action none: only a client of --kube-api can act then; add --kube-api");
  }
  if (lab::in_kernel(o.dataplane)) {
    if (o.kube_api) {
      throw Error(
          fmt::format("--kube-api with --dataplane {}: the API's clients would reach the nodes "
                      "from outside their namespaces; use --dataplane l4 or l7",
                      lab::to_string(o.dataplane)));
    }
    // root, the rules' tool, nf_tables, conntrack: the missing one named, before any pod
    if (o.dataplane == lab::Dataplane::nftables) {
      lab::check_nftables();
    } else {
      lab::check_iptables();
    }
  }
  apply_schema_flags(app, f, o);
  o.rollouts = int_flag(f.rollouts, "--rollouts", 1, 1000);
  if (o.rollouts > 1 && !o.kube_api) {
    throw Error("--rollouts: the rollouts after the first are a client's; add --kube-api");
  }
  return o;
}

// --workloads FILE: each line as `zerodrop lab --kube-api --action none LINE`, sharing this
// command line's --kube-api, --kube-api-deny, --kube-api-seed, --rollouts and --out.
int run_lab_workloads(const CLI::App& app, const Flags& f) {
  if (app.count("--kube-api") == 0 || !f.command.empty()) {
    throw Error("--workloads: give --kube-api, and each workload's command in the file");
  }
  lab::KubeApiOptions api;
  api.listen = f.kube_api.empty() ? "" : f.kube_api.front();
  api.deny = {f.kube_api_deny.begin(), f.kube_api_deny.end()};
  api.seed_deployments = int_flag(f.kube_api_seed, "--kube-api-seed", 0, 100000);
  auto parse = [](const std::string& args) {
    CLI::App line{"workload"};
    Flags wf;
    add_flags(line, wf);
    line.parse("--kube-api --action none " + args, false);
    return to_options(line, wf);
  };
  return run_workload_file(f.workloads, parse, api, int_flag(f.rollouts, "--rollouts", 1, 1000),
                           f.out, std::cout, finish_lab_run);
}

int run_lab(const CLI::App& app, const Flags& f) {
  if (!f.router_only.empty()) {
    lab::Ingress ingress = f.router_only == "nginx"     ? lab::Ingress::nginx
                           : f.router_only == "haproxy" ? lab::Ingress::haproxy
                                                        : lab::Ingress::none;
    lab::run_router_only(f.router_only == "l4" ? lab::Dataplane::l4 : lab::Dataplane::l7, ingress,
                         f.listen, f.backend);
    return to_int(ExitCode::ok);
  }
  if (f.demo) {
    std::string out = f.out.empty() ? new_temp_folder("zerodrop-demo").value_or("/tmp") : f.out;
    return lab::run_demo(lab_own_dir() + "/examples", out, std::cout, finish_lab_run);
  }
  if (!f.workloads.empty()) {
    return run_lab_workloads(app, f);
  }
  lab::Options options = to_options(app, f);
  int runs = int_flag(f.runs, "--runs", 1, 1000);
  if (runs > 1) {
    if (options.kube_api) {
      throw Error("--runs: not with --kube-api (one API per run)");
    }
    std::optional<std::string> root = f.out.empty() ? new_temp_folder("zerodrop-lab-runs") : f.out;
    if (!root) {
      throw Error("--runs: cannot create a folder like /tmp/zerodrop-lab-runs-XXXXXX");
    }
    return lab::run_repeated(options, runs, *root, std::cout, finish_lab_run);
  }
  auto run_dir = std::make_shared<std::string>();
  options.on_run_dir = [run_dir](const std::string& dir) {
    *run_dir = dir;
    std::cerr << "zerodrop lab: run folder " << dir << "\n";
  };
  if (app.count("--rollouts") > 0) {  // each rollout's own report, as it ends
    options.on_rollout = [run_dir](int index, const record::RunRecord& rollout) {
      write_rollout(*run_dir, "the workload", index, rollout, std::cout);
    };
  }
  options.on_kube_api = [](const std::string& url, const std::string& kubeconfig) {
    std::cerr << "zerodrop lab: Kubernetes API at " << url << " (deployment web); "
              << "export KUBECONFIG=" << kubeconfig << "\n";
  };
  lab::Result result = lab::run(options);
  diagnose::Diagnosis diagnosis =
      finish_lab_run(record::RunFolder(result.out_dir), result.run, std::cout);
  if (result.agents) {
    finish_agents(result.out_dir, *result.agents);
  }
  std::cout << "run folder: " << result.out_dir << "\n";
  if (result.interrupted) {
    return to_int(ExitCode::interrupted);
  }
  return to_int(diagnosis.verdict == diagnose::Verdict::pass ? ExitCode::ok : ExitCode::failed);
}

}  // namespace
}  // namespace lab_command

Runner setup_lab(CLI::App& app) {
  using namespace lab_command;
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  app.footer(kFooter);
  return [&app, flags]() -> int {
    return run_lab(app, *flags);
  };
}

}  // namespace zerodrop::cli
