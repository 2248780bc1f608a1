#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kubeapi/objects.h"
#include "record/run_record.h"

namespace zerodrop::kubeapi {
class Api;
class Projection;
class Server;
class Store;
}  // namespace zerodrop::kubeapi

namespace zerodrop::lab {

class DaemonRunner;
class JobRunner;
class KubeApiHub;
class Recorder;

// `zerodrop lab --kube-api`: where to listen and what the API refuses (tests).
struct KubeApiOptions {
  std::string listen;          // --kube-api ADDR; empty: 127.0.0.1 on a free port
  std::set<std::string> deny;  // "verb/resource": 403 and a denied access review
  std::string deployment = "web";
  std::string pod_prefix;    // the workload's pods in the API: prefix + "pod-N"
  int seed_deployments = 0;  // --kube-api-seed N: N more Deployments that run nothing (bench)
  // Several workloads: the API they share (--workloads); null: this run serves its own.
  std::shared_ptr<KubeApiHub> hub;
};

// What a client asked of the lab through its API, for the control thread to carry out.
struct ClientCommand {
  enum class Kind { restart, scale, delete_pod };
  Kind kind = Kind::restart;
  int replicas = 0;  // scale
  std::string pod;   // delete_pod: the lab's name of it ("pod-3")
};

// One workload served by a hub: its Deployment and pods, and what clients asked of them.
class Tenant {
public:
  virtual ~Tenant() = default;
  virtual const std::string& deployment() const = 0;
  virtual const std::string& pod_prefix() const = 0;
  // Queues a client's action for the workload's control thread.
  virtual void push(ClientCommand command) = 0;
  virtual std::string pod_log(const std::string& pod) const = 0;  // the lab's pod name
};

// The Kubernetes API server the lab's workloads share, and the cluster's controllers that are
// nobody's workload: the store, the HTTPS server and kubeconfig, the Jobs' and DaemonSets' pods
// (run as processes, their notes and logs in `recorder`'s run folder) and the garbage
// collector. Routes each client action to the workload whose Deployment or pod it names.
// Thread-safe; poll() runs the controllers (any thread, one at a time).
class KubeApiHub {
public:
  // Serves from now on. `cluster` gives the nodes and namespace of the Jobs' and DaemonSets'
  // pods. Throws Error when the address is refused or taken.
  KubeApiHub(const KubeApiOptions& options, const kubeapi::ClusterInfo& cluster,
             Recorder& recorder, const std::string& kubeconfig_dir);
  ~KubeApiHub();  // stops the server (every watch ends), then kills the Jobs' and DaemonSets' pods
  KubeApiHub(const KubeApiHub&) = delete;
  KubeApiHub& operator=(const KubeApiHub&) = delete;

  const std::string& url() const { return url_; }

  const std::string& kubeconfig() const { return kubeconfig_; }

  kubeapi::Store& store() { return *store_; }

  void join(Tenant* tenant);
  void leave(Tenant* tenant);
  // Carries out the clients' actions on Jobs and DaemonSets and their pods, collects garbage.
  // Returns at once when another thread is at it.
  void poll();
  // Deletes a Job's or DaemonSet's pod as kubelet would; false when it is neither's.
  bool delete_pod(const std::string& pod);

private:
  struct JobCommand {
    std::string job;
    std::string propagation;  // empty: created; else deleted with this policy
  };

  // Hands `command` to the workload running `deployment`; false when none does.
  bool route(const std::string& deployment, ClientCommand command);
  void route_pod_deletion(const std::string& pod);
  std::string log_path(const std::string& pod);
  void collect_garbage();

  Recorder& recorder_;
  std::unique_ptr<kubeapi::Store> store_;
  std::unique_ptr<kubeapi::Api> api_;
  std::unique_ptr<kubeapi::Server> server_;
  std::string url_;
  std::string kubeconfig_;
  std::mutex controllers_;  // poll() and delete_pod(): one thread at a time
  std::unique_ptr<JobRunner> jobs_;
  std::unique_ptr<DaemonRunner> daemons_;
  std::mutex mutex_;  // the tenants and the queued Job commands
  std::vector<Tenant*> tenants_;
  std::vector<JobCommand> job_commands_;
  std::vector<std::string> pod_deletions_;  // of Jobs' and DaemonSets' pods, for poll()
  uint64_t swept_rv_ = 0;  // the store's resourceVersion at the last garbage collection
};

// The lab served as the Kubernetes API: the projection of the recorder's events into the
// hub's store (this run's own hub, or the one several workloads share). Client writes queue up
// as ClientCommands for the control thread.
class LabApi : public Tenant {
public:
  // Serves from now on; every event `recorder` records changes the objects served. Throws
  // Error when the address is refused or taken.
  LabApi(const KubeApiOptions& options, const kubeapi::ClusterInfo& info, Recorder& recorder);
  ~LabApi() override;  // stops observing the recorder; its own hub stops serving
  LabApi(const LabApi&) = delete;
  LabApi& operator=(const LabApi&) = delete;

  const std::string& url() const { return hub_->url(); }

  const std::string& kubeconfig() const { return hub_->kubeconfig(); }

  const std::string& deployment() const override { return deployment_; }

  const std::string& pod_prefix() const override { return pod_prefix_; }

  void push(ClientCommand command) override;
  std::string pod_log(const std::string& pod) const override;

  // The clients' actions on the workload since the last call, in arrival order. Control
  // thread only: their actions on Jobs' and DaemonSets' pods are carried out here.
  std::vector<ClientCommand> take_commands();
  // Re-derives the status that changes with time alone (minReadySeconds) and runs the hub's
  // controllers (see KubeApiHub::poll). Control thread only.
  void refresh(record::Micros now);

private:
  Recorder& recorder_;
  std::string deployment_;
  std::string pod_prefix_;
  std::shared_ptr<KubeApiHub> hub_;
  std::unique_ptr<kubeapi::Projection> projection_;
  std::mutex mutex_;
  std::vector<ClientCommand> commands_;
};

}  // namespace zerodrop::lab
