// zerodrop lab: flags -> lab::Options -> lab::run() -> diagnose -> report.
#include <limits.h>
#include <unistd.h>

#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/delay_distribution.h"
#include "base/duration.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/int_or_percent.h"
#include "base/parse.h"
#include "base/subprocess.h"
#include "cli/command.h"
#include "diagnose/diagnose.h"
#include "kube/rollout.h"
#include "lab/demo.h"
#include "lab/lab.h"
#include "lab/manifest.h"
#include "lab/runs.h"
#include "load/grpc.h"
#include "load/input.h"
#include "record/run_folder.h"
#include "report/report.h"

namespace zerodrop::cli {
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
  zerodrop lab --action scale-down 1 --no-keepalive -- python3 -m http.server {port} --bind {ip}
  zerodrop lab --db postgres --migrate 'psql -v ON_ERROR_STOP=1 -f V2.sql' --migrate-at before \
      --to './app --app-version 2' -- ./app --app-version 1     # the schema race
  zerodrop lab --demo)";

// Flag values as text, converted with base/parse.h so that errors name the flag.
struct Flags {
  std::vector<std::string> command;
  std::string manifest, container;
  std::string replicas = "3", max_surge = "25%", max_unavailable = "25%", min_ready = "0s";
  std::string prestop = "none", grace = "30s", stop_signal = "TERM", port = "0";
  std::string readiness = "tcp", readiness_period = "1s", readiness_timeout = "1s";
  std::string readiness_delay = "0s", readiness_success = "1", readiness_failure = "3";
  std::string liveness = "none", liveness_period = "1s", liveness_timeout = "1s";
  std::string liveness_delay = "0s", liveness_failure = "3";
  std::string nodes = "3", propagation = "1s", seed = "1", dataplane = "l4", retries = "0";
  std::string ingress;
  std::vector<std::string> action = {"restart"};
  std::string rate = "200", connections = "64", method = "GET", path = "/", timeout = "10s";
  bool no_keepalive = false;
  bool keepalive = false;
  std::string fresh_share = "50%";
  bool client_retry = false;
  std::string runs = "1";
  std::string warmup = "2s", tail = "3s", ready_timeout = "30s", out, pid_namespace = "auto";
  bool demo = false;
  std::string router_only, listen = "127.0.0.1:0", backend;
  std::vector<std::string> kube_api;  // given: serve the API; one value: the address
  std::vector<std::string> kube_api_deny;
  std::string to, to_file, db = "none", migrate, migrate_at = "before";
  bool http2 = false;
  std::string grpc, body_file, streams = "100";
};

void add_flags(CLI::App& app, Flags& f) {
  app.add_option("-f,--file", f.manifest,
                 "read replicas, strategy, preStop, grace, probes and "
                 "port from the first workload of this manifest; flags override it");
  app.add_option("--container", f.container,
                 "the manifest's container (default: the first that is not a native sidecar)");
  app.add_option("--replicas", f.replicas, "pods")->capture_default_str();
  app.add_option("--max-surge", f.max_surge, "extra pods during the rollout (N or %, rounded up)")
      ->capture_default_str();
  app.add_option("--max-unavailable", f.max_unavailable,
                 "pods that may be unavailable (N or %, rounded down)")
      ->capture_default_str();
  app.add_option("--min-ready", f.min_ready, "minReadySeconds (duration)")->capture_default_str();
  app.add_option("--prestop", f.prestop, "none | sleep:DURATION | exec:'cmd args' | http:/path")
      ->capture_default_str();
  app.add_option("--grace", f.grace, "terminationGracePeriodSeconds (duration)")
      ->capture_default_str();
  app.add_option("--stop-signal", f.stop_signal, "signal sent after preStop")
      ->capture_default_str();
  app.add_option("--port", f.port,
                 "port every pod listens on, each on its own IP (0 = a free one per pod)")
      ->capture_default_str();
  app.add_option("--readiness", f.readiness, "http:/path | tcp | exec:'cmd args' | none")
      ->capture_default_str();
  app.add_option("--readiness-period", f.readiness_period, "probe period (Kubernetes: 10s)")
      ->capture_default_str();
  app.add_option("--readiness-timeout", f.readiness_timeout, "probe timeout")
      ->capture_default_str();
  app.add_option("--readiness-delay", f.readiness_delay, "initialDelaySeconds")
      ->capture_default_str();
  app.add_option("--readiness-success", f.readiness_success, "successThreshold")
      ->capture_default_str();
  app.add_option("--readiness-failure", f.readiness_failure, "failureThreshold")
      ->capture_default_str();
  app.add_option("--liveness", f.liveness, "http:/path | tcp | exec:'cmd args' | none")
      ->capture_default_str();
  app.add_option("--liveness-period", f.liveness_period, "probe period")->capture_default_str();
  app.add_option("--liveness-timeout", f.liveness_timeout, "probe timeout")->capture_default_str();
  app.add_option("--liveness-delay", f.liveness_delay, "initialDelaySeconds")
      ->capture_default_str();
  app.add_option("--liveness-failure", f.liveness_failure, "failureThreshold")
      ->capture_default_str();
  app.add_option("--nodes", f.nodes, "routers, one per node")->capture_default_str();
  app.add_option("--propagation", f.propagation, "2s | 1s..4s | p50=1s,p99=6s")
      ->capture_default_str();
  app.add_option("--seed", f.seed, "seed of the propagation delays")->capture_default_str();
  app.add_option("--dataplane", f.dataplane, "l4 (kube-proxy) | l7 (ingress)")
      ->capture_default_str();
  app.add_option("--ingress", f.ingress,
                 "nginx | haproxy: Debian's nginx or HAProxy as each node's L7 router, "
                 "reconfigured as their controllers do (implies --dataplane l7)");
  app.add_option("--retries", f.retries, "l7: retries on connect failure, idempotent methods")
      ->capture_default_str();
  app.add_option("--action", f.action, "restart | scale-down N | delete-pod | none")
      ->expected(1, 2)
      ->capture_default_str();
  app.add_option("--rate", f.rate, "requests per second over all routers")->capture_default_str();
  app.add_option("--connections", f.connections, "maximum concurrent connections")
      ->capture_default_str();
  app.add_flag("--no-keepalive", f.no_keepalive, "a new connection per request");
  app.add_flag("--keepalive", f.keepalive,
               "reuse connections; given alone, every request reuses one (--fresh-share 0%)");
  app.add_option("--fresh-share", f.fresh_share,
                 "share of requests sent with 'Connection: close', so that new connections "
                 "(which a stopping pod can refuse) mix with reused ones (which it can cut)")
      ->capture_default_str();
  app.add_flag("--client-retry", f.client_retry,
               "resend once, on a new connection, a failure a browser would resend (idempotent, "
               "reused connection, no response byte), as zerodrop load --client-retry");
  app.add_option("--runs", f.runs,
                 "repeat the rollout N times with seeds --seed, --seed+1, …; one sub-folder of "
                 "--out per run and a summary of the holes per run")
      ->capture_default_str();
  app.add_flag("--http2", f.http2,
               "HTTP/2 (h2c, prior knowledge) through the l4 routers; default 8 connections");
  app.add_option("--grpc", f.grpc,
                 "unary gRPC call SERVICE/METHOD (implies --http2 and POST), as zerodrop load");
  app.add_option("--body-file", f.body_file,
                 "the request body; with --grpc the serialized request message");
  app.add_option("--streams", f.streams, "HTTP/2: concurrent streams per connection")
      ->capture_default_str();
  app.add_option("--method", f.method, "HTTP method")->capture_default_str();
  app.add_option("--path", f.path, "request path")->capture_default_str();
  app.add_option("--timeout", f.timeout, "whole-request timeout")->capture_default_str();
  app.add_option("--warmup", f.warmup, "load before the action")->capture_default_str();
  app.add_option("--tail", f.tail, "load after the last deleted pod exited")->capture_default_str();
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
  app.add_option("--to", f.to,
                 "'COMMAND ARGS…': the rollout's new pods run this version (B) while the old "
                 "ones still run COMMAND (A); default: the same command again");
  app.add_option("--to-file", f.to_file,
                 "the new version's command, args, env, preStop and probes from the first "
                 "workload of this manifest (--to overrides its command)");
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
  for (lab::MigrateAt at :
       {lab::MigrateAt::before, lab::MigrateAt::between, lab::MigrateAt::after}) {
    if (text == lab::to_string(at)) {
      return at;
    }
  }
  throw Error(fmt::format("--migrate-at: expected before, between or after, got '{}'", text));
}

// The version change, the database and the migration: --to, --to-file, --db, --migrate.
void apply_schema_flags(const CLI::App& app, const Flags& f, lab::Options& o) {
  if (!f.to.empty() || !f.to_file.empty()) {
    if (o.action != lab::Action::restart) {
      throw Error("--to, --to-file: a version change is a rollout: use --action restart");
    }
    o.to = f.to_file.empty() ? o.pod : lab::new_version_of(f.to_file, f.container, o.pod);
    if (!f.to.empty()) {
      o.to->command = lab::split_command(f.to, "--to");
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

Duration dur(const std::string& text, const char* what) {
  return parse_duration(text, what);
}

int integer(const std::string& text, const char* what, int64_t min, int64_t max) {
  return static_cast<int>(parse_integer(text, what, min, max));
}

// Applies `flag` only when given on the command line, so that a manifest's values stay.
template <typename F>
void given(const CLI::App& app, const char* flag, F apply) {
  if (app.count(flag) > 0) {
    apply();
  }
}

void apply_probe_flags(const CLI::App& app, const Flags& f, lab::Options& o) {
  lab::ProbeSpec& r = o.pod.readiness;
  given(app, "--readiness", [&] { r = lab::parse_probe(f.readiness, "--readiness"); });
  given(app, "--readiness-period",
        [&] { r.period = dur(f.readiness_period, "--readiness-period"); });
  given(app, "--readiness-timeout",
        [&] { r.timeout = dur(f.readiness_timeout, "--readiness-timeout"); });
  given(app, "--readiness-delay",
        [&] { r.initial_delay = dur(f.readiness_delay, "--readiness-delay"); });
  given(app, "--readiness-success", [&] {
    r.success_threshold = integer(f.readiness_success, "--readiness-success", 1, 1000);
  });
  given(app, "--readiness-failure", [&] {
    r.failure_threshold = integer(f.readiness_failure, "--readiness-failure", 1, 1000);
  });
  lab::ProbeSpec& l = o.pod.liveness;
  given(app, "--liveness", [&] { l = lab::parse_probe(f.liveness, "--liveness"); });
  given(app, "--liveness-period", [&] { l.period = dur(f.liveness_period, "--liveness-period"); });
  given(app, "--liveness-timeout",
        [&] { l.timeout = dur(f.liveness_timeout, "--liveness-timeout"); });
  given(app, "--liveness-delay",
        [&] { l.initial_delay = dur(f.liveness_delay, "--liveness-delay"); });
  given(app, "--liveness-failure",
        [&] { l.failure_threshold = integer(f.liveness_failure, "--liveness-failure", 1, 1000); });
}

// --http2, --grpc, --body-file, --streams: the lab's load speaks HTTP/2 through the l4 routers
// (TCP proxies, so frames pass unchanged); the l7 router parses HTTP/1.1 only.
void apply_http2_flags(const CLI::App& app, const Flags& f, lab::Options& o) {
  if (!f.body_file.empty()) {
    o.load.body = load::read_file(f.body_file, "--body-file");
  }
  if (f.grpc.empty() && !f.http2) {
    return;
  }
  const char* flag = f.grpc.empty() ? "--http2" : "--grpc";
  if (o.ingress != lab::Ingress::none) {
    throw Error(
        fmt::format("--ingress {} {}: the lab configures the ingress for HTTP/1.1 only; "
                    "HTTP/2 routing is planned",
                    f.ingress, flag));
  }
  if (o.dataplane == lab::Dataplane::l7) {
    throw Error(fmt::format(
        "--dataplane l7 {}: the l7 router speaks HTTP/1.1; HTTP/2 routing is planned", flag));
  }
  o.load.protocol = f.grpc.empty() ? load::Protocol::http2 : load::Protocol::grpc;
  if (!f.grpc.empty()) {
    if (app.count("--method") > 0) {
      throw Error("--method: a gRPC call is always a POST; leave --method out with --grpc");
    }
    load::grpc_path(f.grpc);  // throws, naming --grpc, on a malformed name
    o.load.grpc_method = f.grpc;
    o.method = "POST";
  }
  if (app.count("--connections") == 0) {
    o.load.connections = 8;  // each one is pinned to a pod by the l4 router
  }
  o.load.fresh_share = 0;  // `Connection: close` does not exist in HTTP/2
  o.load.streams = static_cast<uint32_t>(integer(f.streams, "--streams", 1, 100000));
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
    o.scale_to = integer(count, "--action scale-down", 0, o.replicas);
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
  if (app.count("--dataplane") > 0 && o.dataplane == lab::Dataplane::l4) {
    throw Error(
        fmt::format("--ingress {}: an ingress routes HTTP; not with --dataplane l4", f.ingress));
  }
  o.dataplane = lab::Dataplane::l7;
  o.ingress = f.ingress == "nginx" ? lab::Ingress::nginx : lab::Ingress::haproxy;
  lab::ingress_binary(o.ingress);  // missing: its name and the setup command, before any pod
}

lab::Options to_options(const CLI::App& app, const Flags& f) {
  lab::Options o;
  o.pod.readiness = lab::parse_probe("tcp", "--readiness");
  if (!f.manifest.empty()) {
    lab::apply_manifest(f.manifest, f.container, o);
  }
  if (f.command.empty()) {
    throw Error(
        "no command: give the server to run after --, e.g. "
        "'zerodrop lab -- ./server --port {port}'");
  }
  o.pod.command = f.command;
  given(app, "--replicas", [&] { o.replicas = integer(f.replicas, "--replicas", 1, 1000); });
  given(app, "--max-surge", [&] { o.max_surge = IntOrPercent::parse(f.max_surge, "--max-surge"); });
  given(app, "--max-unavailable",
        [&] { o.max_unavailable = IntOrPercent::parse(f.max_unavailable, "--max-unavailable"); });
  // A manifest's own both-zero is refused with its file:line; here a flag made it so.
  if (auto why = kube::invalid_limits(o.max_surge, o.max_unavailable)) {
    throw Error("--max-surge, --max-unavailable: " + *why);
  }
  given(app, "--min-ready", [&] { o.min_ready = dur(f.min_ready, "--min-ready"); });
  given(app, "--prestop", [&] { o.pod.prestop = lab::parse_hook(f.prestop, "--prestop"); });
  given(app, "--grace", [&] { o.pod.grace = dur(f.grace, "--grace"); });
  given(app, "--port",
        [&] { o.pod.port = static_cast<uint16_t>(integer(f.port, "--port", 0, 65535)); });
  std::optional<int> signal = signal_from_name(f.stop_signal);
  if (!signal) {
    throw Error(fmt::format("--stop-signal: unknown signal '{}'", f.stop_signal));
  }
  o.pod.stop_signal = *signal;
  apply_probe_flags(app, f, o);
  o.nodes = integer(f.nodes, "--nodes", 1, 64);
  o.propagation = parse_delay_distribution(f.propagation, "--propagation");
  o.seed = static_cast<uint64_t>(parse_integer(f.seed, "--seed", 0, INT64_MAX));
  if (f.dataplane != "l4" && f.dataplane != "l7") {
    throw Error(fmt::format("--dataplane: expected l4 or l7, got '{}'", f.dataplane));
  }
  o.dataplane = f.dataplane == "l4" ? lab::Dataplane::l4 : lab::Dataplane::l7;
  apply_ingress(app, f, o);
  o.retries = integer(f.retries, "--retries", 0, 100);
  apply_action(f, o);
  o.load.rate = parse_number(f.rate, "--rate");
  o.load.connections = static_cast<uint32_t>(integer(f.connections, "--connections", 1, 100000));
  o.load.keepalive = f.no_keepalive && !f.keepalive ? load::Keepalive::off : load::Keepalive::on;
  // An explicit --keepalive (without --fresh-share) means what it meant before the mixed default:
  // every request on a kept-alive connection.
  bool keepalive_alone = app.count("--keepalive") > 0 && app.count("--fresh-share") == 0;
  o.load.fresh_share = keepalive_alone ? 0 : parse_share(f.fresh_share, "--fresh-share");
  o.load.client_retry = f.client_retry ? load::ClientRetry::once : load::ClientRetry::off;
  o.load.timeout = dur(f.timeout, "--timeout");
  o.method = f.method;
  o.path = f.path.empty() || f.path[0] != '/' ? "/" + f.path : f.path;
  o.warmup = dur(f.warmup, "--warmup");
  o.tail = dur(f.tail, "--tail");
  o.ready_timeout = dur(f.ready_timeout, "--ready-timeout");
  apply_http2_flags(app, f, o);
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
  } else if (o.action == lab::Action::none) {
    throw Error("--action none: only a client of --kube-api can act then; add --kube-api");
  }
  apply_schema_flags(app, f, o);
  return o;
}

// The folder of this binary: the demo's example servers are in its examples/ sibling.
std::string own_dir() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  std::string exe = n > 0 ? std::string(path, static_cast<size_t>(n)) : ".";
  return exe.substr(0, exe.rfind('/'));
}

// Every lab run ends the same way: diagnosis, terminal report, report files and run.json.
diagnose::Diagnosis finish(const record::RunFolder& folder, const record::RunRecord& run,
                           std::ostream& out) {
  return report::finish_run(folder, run, out, {.tty = report::is_terminal(stdout)});
}

// The requests of verify's agents in this run, diagnosed with the lab's exact record into
// RUN/agents: what verify's diagnosis of the same requests is compared with.
void finish_agents(const std::string& out_dir, const record::RunRecord& agents) {
  record::RunFolder folder(out_dir + "/agents");
  record::RunWriter writer(folder, record::Traffic::requests);
  for (const record::Event& e : agents.events) {
    writer.write(e);
  }
  for (const record::RequestRecord& r : agents.requests) {
    writer.write(r);
  }
  writer.close();
  std::ostringstream terminal;
  report::finish_run(folder, agents, terminal, {});
  std::string verdict = terminal.str().substr(0, terminal.str().find('\n'));
  std::cout << "verify's agents, diagnosed by the lab: " << verdict << " (" << folder.dir()
            << ")\n";
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
    std::string out = f.out.empty() ? "" : f.out;
    if (out.empty()) {
      char pattern[] = "/tmp/zerodrop-demo-XXXXXX";
      out = ::mkdtemp(pattern) != nullptr ? pattern : "/tmp";
    }
    return lab::run_demo(own_dir() + "/examples", out, std::cout, finish);
  }
  lab::Options options = to_options(app, f);
  int runs = integer(f.runs, "--runs", 1, 1000);
  if (runs > 1) {
    if (options.kube_api) {
      throw Error("--runs: not with --kube-api (one API per run)");
    }
    std::string root = f.out;
    if (root.empty()) {
      char pattern[] = "/tmp/zerodrop-lab-runs-XXXXXX";
      if (::mkdtemp(pattern) == nullptr) {
        throw Error("--runs: cannot create a folder like /tmp/zerodrop-lab-runs-XXXXXX");
      }
      root = pattern;
    }
    return lab::run_repeated(options, runs, root, std::cout, finish);
  }
  options.on_run_dir = [](const std::string& dir) {
    std::cerr << "zerodrop lab: run folder " << dir << "\n";
  };
  options.on_kube_api = [](const std::string& url, const std::string& kubeconfig) {
    std::cerr << "zerodrop lab: Kubernetes API at " << url << " (deployment web); "
              << "export KUBECONFIG=" << kubeconfig << "\n";
  };
  lab::Result result = lab::run(options);
  diagnose::Diagnosis diagnosis = finish(record::RunFolder(result.out_dir), result.run, std::cout);
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

Runner setup_lab(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  add_flags(app, *flags);
  app.footer(kFooter);
  return [&app, flags]() -> int {
    return run_lab(app, *flags);
  };
}

}  // namespace zerodrop::cli
