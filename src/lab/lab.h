#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "base/delay_distribution.h"
#include "base/int_or_percent.h"
#include "lab/control/deployment_controller.h"
#include "lab/control/kube_api.h"
#include "lab/data/database.h"
#include "lab/data/migration.h"
#include "lab/kernel/node_network.h"
#include "lab/pods/pod.h"
#include "lab/routers/ingress.h"
#include "lab/routers/router.h"
#include "load/load.h"
#include "record/run_record.h"

namespace zerodrop::lab {

// Everything a lab run needs: the workload, the emulated cluster, the traffic and the action.
struct Options {
  PodSpec pod;  // the command, port, preStop, grace, stop signal, probes
  // A version change (--to, --to-file): what the pods of the rollout's new revision run. Absent:
  // they run `pod` again (a restart). Its isolation is the pods' own.
  std::optional<PodSpec> to;
  DatabaseKind database = DatabaseKind::none;  // --db: a server every pod shares
  std::optional<MigrationSpec> migrate;        // --migrate, --migrate-at
  // How pods are held; nullopt: as PID 1 of a PID namespace when the host allows it (probed).
  std::optional<Isolation> isolation;
  int replicas = 3;
  IntOrPercent max_surge = IntOrPercent::percent(25);        // of replicas, rounded up
  IntOrPercent max_unavailable = IntOrPercent::percent(25);  // of replicas, rounded down
  Duration min_ready{0};                                     // minReadySeconds
  int nodes = 3;                                             // routers
  DelayDistribution propagation = DelayDistribution::fixed(std::chrono::seconds(1));
  uint64_t seed = 1;
  Dataplane dataplane = Dataplane::l4;
  DataplaneSync dataplane_sync = DataplaneSync::kube_proxy;  // nftables, iptables only
  int dataplane_churn = 0;          // nftables, iptables: more syncs a second per node
  int retries = 0;                  // l7 only
  Ingress ingress = Ingress::none;  // l7 only: a real ingress per node (RUN/ingress/NODE/)
  Action action = Action::restart;
  int scale_to = 1;    // Action::scale_down
  load::Options load;  // targets are filled in by the lab (one per router)
  std::string method = "GET";
  std::string path = "/";
  Duration warmup = std::chrono::seconds(2);
  Duration tail = std::chrono::seconds(3);
  Duration ready_timeout = std::chrono::seconds(30);  // for the first pods
  std::string out_dir;                                // empty: a new folder under $TMPDIR
  bool live = false;                                  // a live line per second on stderr
  record::Scenario scenario;  // what the manifest or the demo add (container, extras)
  // Called with the run folder as soon as it exists, before anything can fail in it: a run that
  // stops on an error still says where its partial record is.
  std::function<void(const std::string& out_dir)> on_run_dir;
  // Serve the run as the Kubernetes API (--kube-api); on_kube_api gets its URL and kubeconfig
  // once it listens, before the pods start.
  std::optional<KubeApiOptions> kube_api;
  std::function<void(const std::string& url, const std::string& kubeconfig)> on_kube_api;
  // How many rollouts the run waits for, each with its tail, before it ends (--rollouts; with
  // --action none, each a client's). on_rollout, when set, gets each one's record as its tail
  // ends (see rollout_slice), numbered from 1.
  int rollouts = 1;
  std::function<void(int index, const record::RunRecord& rollout)> on_rollout;
};

struct Result {
  record::RunRecord run;
  load::Summary load;
  std::string out_dir;
  bool interrupted = false;  // SIGINT/SIGTERM: the pods were killed, the record is partial
  // With --kube-api, when Job pods ran verify's agents: this run's record over their requests.
  std::optional<record::RunRecord> agents;
};

// Runs the lab: starts the pods and routers, sends the load through the routers, performs the
// action, waits for it and for every deleted pod to exit, then the tail. Writes events.ndjson,
// requests.ndjson and the pod logs into the run folder as it goes. No child outlives the call.
// Throws Error on bad options, a command that cannot run, or pods never ready.
Result run(const Options& options);

// Runs one router in front of a fixed backend ("HOST:PORT") until SIGINT or SIGTERM, for
// bench/lab_overhead.sh. Prints "listening on HOST:PORT" on stdout once it accepts.
// With an ingress, its files live in a temporary folder removed at the end.
void run_router_only(Dataplane dataplane, Ingress ingress, const std::string& listen,
                     const std::string& backend);

// The scenario the report shows and diagnose reads: flags and workload settings.
record::Scenario describe(const Options& options);

}  // namespace zerodrop::lab
