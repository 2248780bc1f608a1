// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/lab.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/int_or_percent.h"
#include "base/parse.h"
#include "base/subprocess.h"
#include "kubeapi/objects.h"
#include "lab/control/endpoint_controller.h"
#include "lab/data/database.h"
#include "lab/job_traffic.h"
#include "lab/kernel/node_network.h"
#include "lab/pods/container_runtime.h"
#include "lab/pods/not_ready.h"
#include "lab/pods/process_watch.h"
#include "lab/recording/recorder.h"
#include "lab/recording/rollout_slice.h"
#include "lab/routers/ingress.h"
#include "lab/routers/socket_trace.h"
#include "lab/traffic.h"
#include "record/run_folder.h"

namespace zerodrop::lab {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::string make_run_dir(const std::string& wanted) {
  if (!wanted.empty()) {
    return wanted;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/zerodrop-lab-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(fmt::format("cannot create a run folder like '{}'", pattern));
  }
  return pattern;
}

// "127.B.": the pods' addresses are 127.B.C.D, B claimed once for the process (its runs share
// it), from the pid's on, so that labs running side by side do not share addresses.
std::string ip_prefix() {
  static const LoopbackClaim claim = claim_loopback_prefix(::getpid() % 200);
  return fmt::format("127.{}.", claim.b);
}

// The kernel's account of who closed the pods' connections, for the l4 and nftables routers
// (the pods' addresses: 127.X.0.0/16, or the node network's 10.B.0.0/17); a note says when the
// host does not give it (the routers then judge by timing).
std::unique_ptr<SocketTrace> start_socket_trace(const Options& o, Recorder& recorder,
                                                const NodeNetwork* network) {
  bool kernel = in_kernel(o.dataplane) && network != nullptr;
  if ((o.dataplane != Dataplane::l4 && !kernel) || o.ingress != Ingress::none) {
    return nullptr;
  }
  in_addr prefix{};
  ::inet_pton(AF_INET, ((kernel ? network->pod_prefix() : ip_prefix()) + "0.0").c_str(), &prefix);
  uint32_t mask = htonl(kernel ? 0xffff8000U : 0xffff0000U);
  std::string why;
  std::unique_ptr<SocketTrace> trace = SocketTrace::start(
      [net = prefix.s_addr & mask, mask](uint32_t ip) { return (ip & mask) == net; }, &why);
  if (!trace) {
    recorder.pod_event(record::EventKind::note, "",
                       fmt::format("whether a pod or its exit closed a connection is judged by "
                                   "timing: no kernel socket trace ({})",
                                   why));
  }
  return trace;
}

std::vector<std::unique_ptr<Router>> start_routers(const Options& o, Recorder& recorder,
                                                   SocketTrace* trace, const NodeNetwork* network) {
  std::vector<std::unique_ptr<Router>> routers;
  for (int i = 1; i <= o.nodes; ++i) {
    RouterOptions r;
    r.netns = network != nullptr ? network->netns(i) : -1;
    r.name = fmt::format("node-{}", i);
    r.dataplane = o.dataplane;
    r.dataplane_sync = o.dataplane_sync;
    r.dataplane_churn = o.dataplane_churn;
    r.retries = o.retries;
    r.ingress = o.ingress;
    r.ingress_dir = fmt::format("{}/ingress/{}", recorder.dir(), r.name);
    r.seed = o.seed * 1000 + static_cast<uint64_t>(i);
    r.socket_trace = trace;
    routers.push_back(Router::start(r, &recorder));
  }
  return routers;
}

std::vector<Router*> raw(const std::vector<std::unique_ptr<Router>>& routers) {
  std::vector<Router*> out;
  for (const auto& r : routers) {
    out.push_back(r.get());
  }
  return out;
}

// A run_until whose `done` alone ends it: centuries, and now() plus it cannot overflow.
constexpr Duration kNoLimit = Duration::max() / 2;

// Runs the control loop until `done` holds or `limit` passes; false on timeout. `done` is asked
// again after every handler (a probe's answer, a pod's exit, a kubelet timer), so the controllers
// it drives act on an event as it happens, as informers deliver it; and at least every 20 ms for
// what no handler announces (minReadySeconds passing, a client of the API acting).
bool run_until(asio::io_context& io, const std::function<bool()>& done, Duration limit) {
  auto guard = asio::make_work_guard(io);
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    io.run_one_for(20ms);
  }
  return true;
}

// The live line: once a second on a terminal.
class LiveLine {
public:
  explicit LiveLine(bool enabled) : enabled_(enabled) {}

  void update(double t, const Traffic& traffic, const DeploymentController& cluster,
              const char* phase) {
    if (!enabled_ || t < next_) {
      return;
    }
    next_ = t + 1;
    std::fprintf(stderr,
                 "\r%6.1fs  %-8s requests %-8llu failed %-6llu pods ready %d, terminating %d   ", t,
                 phase, static_cast<unsigned long long>(traffic.requests()),
                 static_cast<unsigned long long>(traffic.failed()), cluster.ready_count(),
                 cluster.terminating_count());
  }

  ~LiveLine() {
    if (enabled_ && next_ > 0) {
      std::fprintf(stderr, "\n");
    }
  }

private:
  bool enabled_;
  double next_ = 0;
};

// Carries out what clients asked through the Kubernetes API; true when there was anything.
bool act_on(const std::vector<ClientCommand>& commands, DeploymentController& cluster) {
  for (const ClientCommand& c : commands) {
    switch (c.kind) {
      case ClientCommand::Kind::restart:
        cluster.start(Action::restart, 0);
        break;
      case ClientCommand::Kind::scale:
        cluster.start(Action::scale_down, c.replicas);  // scales up as well
        break;
      case ClientCommand::Kind::delete_pod:
        cluster.delete_pod(c.pod);
        break;
    }
  }
  return !commands.empty();
}

// Whether the control loop may go on past the migration's moment (`at`): there is none at that
// moment, or it has ended well. Starts it when it is due and not yet started.
bool migration_passed(Migration* migration, MigrateAt at) {
  if (migration == nullptr || migration->at() != at) {
    return true;
  }
  if (!migration->started()) {
    migration->start();
  }
  return migration->done() && !migration->failure();
}

bool migration_failed(Migration* migration) {
  return migration != nullptr && migration->done() && migration->failure();
}

// Warm-up, the migration before the rollout, action (the lab's own, or a client's through the
// API), rollout until every deleted pod is gone (the migration between starts when a new pod is
// Ready), the migration after, tail: --tail, and at least until every router has applied every
// change (`routers_settled`: a real ingress's last reload, a change due after --tail), so that
// the record holds what each router did with the rollout. Returns early on Ctrl-C, a failed
// migration, or when the load engine stops by itself.
void drive(asio::io_context& io, const Options& o, DeploymentController& cluster, Traffic& traffic,
           Recorder& recorder, LabApi* api, Migration* migration,
           const std::function<bool()>& routers_settled, const std::function<bool()>& tail_ended,
           const bool& interrupted) {
  enum class Phase { warmup, waiting, rollout, tail };
  Phase phase = Phase::warmup;
  auto now = [] {
    return std::chrono::steady_clock::now();
  };
  auto phase_end = now() + o.warmup;
  auto give_up = phase_end;
  auto begin_rollout = [&] {
    phase = Phase::rollout;
    give_up = now() + o.ready_timeout + 30 * o.pod.grace * std::max(1, o.replicas);
  };
  LiveLine live(o.live);
  static constexpr const char* kNames[] = {"warm-up", "waiting", "rollout", "tail"};
  run_until(
      io,
      [&] {
        live.update(to_seconds(recorder.now()), traffic, cluster, kNames[static_cast<int>(phase)]);
        if (interrupted || traffic.finished() || migration_failed(migration)) {
          return true;
        }
        if (api != nullptr) {
          api->refresh(recorder.now());
          if (act_on(api->take_commands(), cluster)) {
            begin_rollout();  // a client acted: its rollout, even in the warm-up or the tail
          }
        }
        bool settled = cluster.reconcile();
        if (phase == Phase::rollout && migration != nullptr && migration->at() == MigrateAt::between
            && cluster.new_pod_ready()) {
          migration_passed(migration, MigrateAt::between);
        }
        if (phase == Phase::warmup && now() >= phase_end
            && migration_passed(migration, MigrateAt::before)) {
          cluster.start(o.action, o.scale_to);
          if (o.action == Action::none) {
            phase = Phase::waiting;
          } else {
            begin_rollout();
          }
        } else if (phase == Phase::rollout && settled
                   && migration_passed(migration, MigrateAt::between)
                   && migration_passed(migration, MigrateAt::after)) {
          phase = Phase::tail;
          phase_end = now() + o.tail;
        } else if (phase == Phase::rollout && now() > give_up) {
          recorder.pod_event(record::EventKind::note, "", "the rollout did not complete; stopping");
          return true;
        }
        // A router that never settles (an ingress that stopped answering) ends it after
        // --ready-timeout more. Then the run ends, or (--rollouts) waits for the next one.
        bool over = phase == Phase::tail && now() >= phase_end
                    && (routers_settled() || now() >= phase_end + o.ready_timeout);
        if (over && !tail_ended()) {
          phase = Phase::waiting;
          return false;
        }
        return over;
      },
      kNoLimit);  // give_up, the traffic's end, a failed migration or a signal ends it
}

// The emulated cluster as the API shows it: the Deployment's spec, the nodes' routers, and the
// wall-clock time of the recorder's t = 0.
kubeapi::ClusterInfo cluster_info(const Options& o, const kube::RolloutLimits& limits,
                                  const std::vector<std::unique_ptr<Router>>& routers,
                                  const Recorder& recorder) {
  kubeapi::ClusterInfo info;
  info.deployment = o.kube_api->deployment;
  info.pod_prefix = o.kube_api->pod_prefix;
  info.container = o.scenario.container.value_or("app");
  info.command = o.pod.command;
  info.port = o.pod.port;
  info.replicas = o.replicas;
  info.min_available = limits.replicas - limits.max_unavailable;
  info.max_surge = o.max_surge.to_string();
  info.max_unavailable = o.max_unavailable.to_string();
  info.min_ready = o.min_ready;
  info.grace = o.pod.grace;
  if (o.pod.prestop.kind == HookSpec::Kind::sleep) {
    info.prestop_sleep = o.pod.prestop.sleep;
  }
  if (o.pod.readiness.kind == ProbeSpec::Kind::http) {
    info.readiness_path = o.pod.readiness.path;
  }
  for (const auto& r : routers) {
    info.nodes.push_back({r->name(), "127.0.0.1", r->port()});
  }
  info.k8s_version = o.scenario.k8s_version.value_or("1.32");
  info.start_wall =
      std::chrono::system_clock::now()
      - std::chrono::duration_cast<std::chrono::system_clock::duration>(recorder.now());
  return info;
}

}  // namespace

// The pods' isolation: the one asked for, else the strongest the host allows. Says once, on
// stderr and in the record, when pods are not PID 1 of their own namespace.
PodSpec isolated(const Options& o, Isolation isolation, Recorder& recorder) {
  PodSpec pod = o.pod;
  pod.isolation = isolation;
  if (pod.isolation == Isolation::process_group) {
    std::string why = o.isolation ? "--pid-namespace off" : "this host allows no PID namespace";
    std::string line = fmt::format(
        "pods run as plain process groups ({}): unlike a container's PID 1, they die of a "
        "signal they have no handler for, orphans are not theirs to reap, and only their "
        "process group is killed at the end",
        why);
    std::fprintf(stderr, "zerodrop lab: %s\n", line.c_str());
    recorder.pod_event(record::EventKind::note, "", line);
  }
  return pod;
}

// With a version change, pods of revision 1 run A and the new ones B (recorded on each pod);
// B shares A's isolation and database. Without one, nullopt: every revision runs `pod`.
std::optional<PodSpec> versions(const Options& o, PodSpec& pod) {
  if (!o.to) {
    return std::nullopt;
  }
  PodSpec next = *o.to;
  next.isolation = pod.isolation;
  next.processes = pod.processes;
  next.env.insert(next.env.end(), pod.env.begin() + static_cast<long>(o.pod.env.size()),
                  pod.env.end());
  pod.version = "A";
  next.version = "B";
  return next;
}

Result run(const Options& o) {
  // The run folder, the routers (one per node) and the control plane.
  kube::RolloutLimits limits = kube::resolve_limits(o.max_surge, o.max_unavailable, o.replicas);
  Result result;
  result.out_dir = make_run_dir(o.out_dir);
  if (o.on_run_dir) {
    o.on_run_dir(result.out_dir);
  }
  // The database every pod (of both versions) and the migration share, when asked: started
  // before the run's clock, which its initdb would otherwise fill with seconds of nothing.
  Isolation isolation = o.isolation ? *o.isolation : probe_isolation();
  std::unique_ptr<Database> database;
  if (o.database == DatabaseKind::postgres) {
    std::filesystem::create_directories(result.out_dir);
    database = Database::start_postgres(result.out_dir, isolation);
  }
  SteadyClock clock;
  Recorder recorder(result.out_dir, clock);
  // Pods of an image: the runtime, the image's own command and stop signal, and the keeper that
  // removes the run's containers however the lab ends (declared before the pods: it outlives them).
  PodSpec pod = o.pod.container ? o.pod : isolated(o, isolation, recorder);
  Containers containers = start_containers(pod, result.out_dir, recorder);
  if (database) {
    recorder.pod_event(record::EventKind::note, "", database->describe());
    pod.env.insert(pod.env.end(), database->env().begin(), database->env().end());
  }
  std::unique_ptr<Migration> migration;
  if (o.migrate) {
    migration = std::make_unique<Migration>(*o.migrate, pod.env, result.out_dir + "/migration.log",
                                            recorder);
  }
  // --dataplane nftables or iptables: the nodes' namespaces, before the routers in them and the
  // pods on their addresses; the kernel removes them all with the last descriptor.
  std::unique_ptr<NodeNetwork> network;
  if (in_kernel(o.dataplane)) {
    network = NodeNetwork::create(o.nodes, o.dataplane);
    recorder.pod_event(
        record::EventKind::note, "",
        fmt::format("each node is a network namespace with kube-proxy's {} rules for the "
                    "Service 10.96.0.10:80; pods listen on {}C.D in the host's",
                    to_string(o.dataplane), network->pod_prefix()));
  }
  std::unique_ptr<SocketTrace> socket_trace = start_socket_trace(o, recorder, network.get());
  std::vector<std::unique_ptr<Router>> routers =
      start_routers(o, recorder, socket_trace.get(), network.get());
  // The Kubernetes API, when asked, sees every event from here on: the pods' creation too.
  std::unique_ptr<LabApi> api;
  std::optional<std::chrono::system_clock::time_point> api_start_wall;
  if (o.kube_api) {
    kubeapi::ClusterInfo info = cluster_info(o, limits, routers, recorder);
    api_start_wall = info.start_wall;
    api = std::make_unique<LabApi>(*o.kube_api, info, recorder);
    if (o.on_kube_api) {
      o.on_kube_api(api->url(), api->kubeconfig());
    }
  }
  asio::io_context io;
  std::string no_watch;
  std::unique_ptr<ProcessWatch> processes = ProcessWatch::start(io, recorder, no_watch);
  if (!processes) {
    recorder.pod_event(record::EventKind::note, "",
                       fmt::format("only each pod's main process is watched ({})", no_watch));
  }
  pod.processes = processes.get();
  std::optional<PodSpec> next = versions(o, pod);
  if (next && next->container) {
    recorder.pod_event(record::EventKind::note, "", bind_container(*next, *containers.runtime));
  }
  EndpointController endpoints(recorder, raw(routers), o.propagation, o.seed);
  DeploymentController cluster(io, recorder, pod, endpoints, limits, o.min_ready,
                               network ? network->pod_prefix() : ip_prefix(), next);
  bool interrupted = false;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int) { interrupted = !ec; });

  // Every router has applied every change published so far.
  auto settled = [&] {
    return clock.now() > endpoints.settled_at()
           && std::all_of(routers.begin(), routers.end(),
                          [](const auto& r) { return r->settled(); });
  };
  // Start the pods; wait until they are ready and every router has applied it.
  cluster.create_initial_pods();
  bool ready = run_until(
      io, [&] { return interrupted || (cluster.all_ready() && settled()); }, o.ready_timeout);
  if (!ready) {
    record::RunRecord so_far = recorder.snapshot(describe(o), recorder.now());
    auto pod_log = [&](const std::string& name) {
      return recorder.pod_log(name);
    };
    throw Error(fmt::format(
        "the pods were not ready within {}: {}{}", format_duration(o.ready_timeout),
        why_not_ready(so_far.events, pod.readiness, pod_log),
        pod.container ? image_words(pod.container->image, so_far.events, pod_log) : ""));
  }

  // Send the load through the routers; warm up, act, wait for the rollout, then the tail.
  Traffic traffic(o.load, o.method, o.path, routers, recorder);
  // Each rollout's tail ends: its own record to on_rollout; true once the last one is done.
  int rollouts = 0;
  record::Micros rollout_from{0};
  auto tail_ended = [&] {
    ++rollouts;
    if (o.on_rollout) {
      record::Micros to = recorder.now();
      o.on_rollout(rollouts, rollout_slice(recorder.snapshot(describe(o), to), rollout_from, to));
      rollout_from = to;
    }
    return rollouts >= o.rollouts;
  };
  if (!interrupted) {
    traffic.start();
    drive(io, o, cluster, traffic, recorder, api.get(), migration.get(), settled, tail_ended,
          interrupted);
  }

  // Stop the load, kill whatever still runs, and hand back what was recorded.
  result.load = traffic.stop();
  record::Micros end = recorder.now();
  for (const auto& router : routers) {
    router->finish();  // what a real ingress's own logs say of the failures
  }
  api.reset();  // clients see the run, not the lab's teardown
  cluster.kill_all(interrupted ? "interrupted: the lab kills its pods" : "the run ends");
  result.interrupted = interrupted;
  Options ran = o;
  ran.isolation = pod.isolation;  // what the probe found
  ran.pod.command = pod.command;  // a container's: what the image runs
  ran.pod.stop_signal = pod.stop_signal;
  result.run = recorder.snapshot(describe(ran), end);
  if (api_start_wall) {
    // The API's timestamps are wall-clock: this joins them (and clients' clocks) to t.
    int64_t wall_us =
        std::chrono::duration_cast<std::chrono::microseconds>(api_start_wall->time_since_epoch())
            .count();
    result.run.scenario.extra["kube_api_start_wall_us"] = std::to_string(wall_us);
    result.agents = agents_run(
        result.run,
        read_job_traffic(record::RunFolder(recorder.dir()).pods(), wall_us, routers, recorder));
  }
  if (migration && migration->failure()) {
    throw Error(*migration->failure());  // the record so far stays in the run folder
  }
  return result;
}

}  // namespace zerodrop::lab
