#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/int_or_percent.h"
#include "kube/sidecar.h"
#include "record/scenario.h"
#include "sim/distribution.h"
#include "sim/profile.h"

namespace zerodrop::sim {

// What the app does at its stop signal (the lab's examples): `naive` exits at once;
// `close_listener` closes its listener and idle keep-alive connections, drains, exits;
// `graceful` keeps accepting for `graceful_delay` (answering with Connection: close), then drains
// and exits; `linger` keeps serving (keep-alive too) for `linger`, then exits at once.
enum class App { naive, close_listener, graceful, linger };
inline constexpr std::array<std::string_view, 4> kAppNames = {"naive", "close-listener", "graceful",
                                                              "linger"};
std::string_view to_string(App app);
App app_from_string(std::string_view text, std::string_view what);  // throws Error

// How a new pod's Ready relates to its ability to serve: `probed` (an httpGet probe that tells
// the truth) or `lies` (a tcpSocket probe: Ready as soon as it listens, before warm-up ends).
enum class Readiness { probed, lies };

enum class Keepalive { on, off };

// What the clients speak. HTTP/2 and gRPC clients multiplex on long-lived connections that
// kube-proxy pins to one pod: nothing moves them but the server's GOAWAY or their close, and
// then every client of that pod reconnects at once (docs/sim.md, "HTTP/2 and gRPC").
enum class Protocol { http1, h2, grpc };
inline constexpr std::array<std::string_view, 3> kProtocolNames = {"http1", "h2", "grpc"};
std::string_view to_string(Protocol protocol);
Protocol protocol_from_string(std::string_view text, std::string_view what);  // throws Error

// Whether the kubelet keeps probing liveness while a pod shuts down: `stops` (since k/k #98571
// and #107514: a pod with a deletionTimestamp reads as live and its liveness probing stops) or
// `probes` (kubelets before them, k/k #52817 and #107473; a native sidecar's probes until k/k
// #141766): a probe that fails once the app stops answering then kills it mid-drain.
enum class LivenessAtShutdown { stops, probes };
inline constexpr std::array<std::string_view, 2> kLivenessAtShutdownNames = {"stops", "probes"};
LivenessAtShutdown liveness_at_shutdown_from_string(std::string_view text, std::string_view what);

// The app container's liveness probe (-f's livenessProbe, or --liveness).
struct LivenessProbe {
  double period = 10;  // periodSeconds
  int failures = 3;    // failureThreshold
  double timeout = 1;  // timeoutSeconds
};

// How an HTTP/2 app that drains (close-listener, graceful) sends its GOAWAY when it stops:
// `graceful` is RFC 9113's double GOAWAY, its streams in flight finish (grpc Server::Shutdown
// with a deadline that is not reached, Go's Server.Shutdown); `abrupt` cancels them with the
// GOAWAY (Shutdown(now), Python's stop(None): "Cancelling all calls").
enum class Goaway { graceful, abrupt };
inline constexpr std::array<std::string_view, 2> kGoawayNames = {"graceful", "abrupt"};
Goaway goaway_from_string(std::string_view text, std::string_view what);  // throws Error

// Whether a client notices that the server closed an idle keep-alive connection before reusing
// it (Go's transport does) or only when a request on it fails (a simple pool).
enum class StaleCheck { detects, none };

// The measured per-sync loss probability of a dataplane's kube-proxy shape
// (docs/dataplane-sync.md, "What each shape loses"): nftables mode lost 16 connects of 449,996
// made at 3,000/s over 8,948 partial syncs, 16 / (8,948 x 3,000) = 6.0e-7 per sync per connect in
// the second (Poisson 95 % interval of 16: 9.2-26.0, so 3.4e-7 to 9.7e-7); iptables mode, legacy
// and nft, lost none (< 3e-7), so 0; ingress and cloud LBs sync no kernel rules, 0.
inline constexpr double kNftablesSyncLoss = 16.0 / (8'948.0 * 3'000.0);
double proxy_sync_loss_of(Dataplane dataplane);

// IPVS's TCP TIME_WAIT timeout (ip_vs_proto_tcp.c: 2 minutes) and Linux's default ephemeral port
// range (ip_local_port_range 32768-60999): with conn_reuse_mode 0, a client IP that opens more
// than 28,232 / 120 s = 235 connects a second reuses ports whose entries are still in the table.
inline constexpr double kIpvsTimeWait = 120;
inline constexpr double kEphemeralPorts = 28'232;
// The lag with which an IPVS node routes new connects when conn_reuse_mode is 0: the client's
// port cycle (kEphemeralPorts / its connects per second) if shorter than kIpvsTimeWait, else 0.
// One client IP per node is assumed (docs/sim.md, "IPVS").
double ipvs_reuse_lag(double connects_per_second);

// One simulated rollout: the cluster (profile), the workload, the traffic and the run settings.
struct Options {
  Profile profile;
  Dataplane dataplane = Dataplane::iptables;
  int nodes = 3;
  int replicas = 3;
  double rate = 100;  // requests per second over the whole service
  // Workload (kubelet arithmetic: kube/kubelet.h).
  double prestop = 0;  // preStop sleep, seconds (0 = none)
  double grace = 30;   // terminationGracePeriodSeconds
  IntOrPercent max_surge = IntOrPercent::percent(25);
  IntOrPercent max_unavailable = IntOrPercent::percent(25);
  double min_ready = 0;  // minReadySeconds
  App app = App::naive;
  double graceful_delay = 5;
  double linger = 3;  // linger: stop signal -> exit (the example's default)
  Distribution request_duration = Distribution::quantiles(0.02, 0.2);
  Distribution drain = Distribution::quantiles(0.1, 1.0);  // stop signal -> in-flight done
  Readiness readiness = Readiness::probed;
  double readiness_period = 10;                  // readinessProbe.periodSeconds
  Distribution warmup = Distribution::fixed(0);  // process start -> able to serve
  double pod_capacity = 0;                       // requests/s one pod can serve; 0 = unlimited
  std::optional<LivenessProbe> liveness;         // none: no liveness probe
  kube::SidecarProxy sidecar;                    // a mesh's proxy in front of the app (--sidecar)
  LivenessAtShutdown liveness_at_shutdown = LivenessAtShutdown::stops;
  // Clients.
  Keepalive keepalive = Keepalive::on;
  double connection_rate = 10;  // requests per second on one keep-alive connection
  double connection_max_age = 60;
  double idle_timeout = 90;
  StaleCheck stale_check = StaleCheck::detects;
  double stale_window = 0.001;  // a request written this close to the server's close fails
  int client_retries = 0;       // retries of a refused connection by the client
  // kube-proxy's minSyncPeriod (--min-sync-period): none, the profile's for the dataplane.
  std::optional<double> min_sync_period;
  // IPVS: net.ipv4.vs.conn_reuse_mode. kube-proxy sets 0 on kernels before 5.9 and leaves the
  // kernel's 1 from 5.9 on (k/k #93297). With 0 a SYN whose source port matches a connection
  // entry still in IPVS's table (TIME_WAIT: 120 s) goes to that entry's real server, even one of
  // weight 0: a client cycling its ports faster than that routes as the node did one cycle ago.
  int ipvs_conn_reuse_mode = 1;
  Protocol protocol = Protocol::http1;
  Goaway goaway = Goaway::graceful;
  // gRPC: a channel whose connect failed waits this long before the next attempt, failing its
  // RPCs meanwhile (gRPC's connection-backoff.md: INITIAL_BACKOFF 1 s; its growth by 1.6 per
  // failure is not modelled).
  double grpc_backoff = 1.0;
  // kube-proxy dataplanes: the probability that a new connect is lost when its node syncs the
  // Service's rules once in the second the connect is made (docs/dataplane-sync.md, "Loss
  // probability per sync per connect in flight"): a sync loses P x the node's connects per second
  // on average. None: the dataplane's measured figure, proxy_sync_loss_of().
  std::optional<double> proxy_sync_loss;
  bool idempotent = true;  // GET: an ingress retries it on upstream errors
  // Run.
  uint64_t seed = 1;
  double lead = 5;            // traffic before the rollout starts
  double tail = 10;           // traffic after the rollout completes
  double duration = 0;        // when > 0, the run lasts exactly this long (virtual seconds)
  double bucket = 1;          // width of a time bucket of request counts
  int sample_routers = 10;    // routers whose router_applied events are recorded
  bool record_events = true;  // false in sweeps: only the counts matter
  record::Scenario scenario;  // what the manifest adds (container, extras), copied into the record
};

}  // namespace zerodrop::sim
