#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "record/run_record.h"

namespace zerodrop::kubeapi {
class Api;
class Projection;
class Server;
class Store;
struct ClusterInfo;
}  // namespace zerodrop::kubeapi

namespace zerodrop::lab {

class JobRunner;
class Recorder;

// `zerodrop lab --kube-api`: where to listen and what the API refuses (tests).
struct KubeApiOptions {
  std::string listen;          // --kube-api ADDR; empty: 127.0.0.1 on a free port
  std::set<std::string> deny;  // "verb/resource": 403 and a denied access review
  std::string deployment = "web";
};

// What a client asked of the lab through its API, for the control thread to carry out.
struct ClientCommand {
  enum class Kind { restart, scale, delete_pod };
  Kind kind = Kind::restart;
  int replicas = 0;  // scale
  std::string pod;   // delete_pod
};

// The lab served as the Kubernetes API: the store, the projection of the recorder's events,
// the server, the kubeconfig in the run folder and the Jobs clients create. Client writes
// queue up as ClientCommands for the control thread.
class LabApi {
public:
  // Serves from now on; every event `recorder` records changes the objects served. Throws
  // Error when the address is refused or taken.
  LabApi(const KubeApiOptions& options, const kubeapi::ClusterInfo& info, Recorder& recorder);
  ~LabApi();  // stops observing the recorder, then the server (every watch ends)
  LabApi(const LabApi&) = delete;
  LabApi& operator=(const LabApi&) = delete;

  const std::string& url() const { return url_; }

  const std::string& kubeconfig() const { return kubeconfig_; }

  // The clients' actions on the workload since the last call, in arrival order. Control
  // thread only: their actions on Jobs and Jobs' pods are carried out here.
  std::vector<ClientCommand> take_commands();
  // Re-derives the status that changes with time alone (minReadySeconds) and runs the Jobs'
  // pods (see JobRunner). Control thread only.
  void refresh(record::Micros now);

private:
  // A client's action on a Job, for the control thread.
  struct JobCommand {
    std::string job;
    std::string propagation;  // empty: created; else deleted with this policy
  };

  void push(ClientCommand command);
  void collect_garbage();

  Recorder& recorder_;
  std::unique_ptr<kubeapi::Store> store_;
  std::unique_ptr<kubeapi::Projection> projection_;
  std::unique_ptr<kubeapi::Api> api_;
  std::unique_ptr<kubeapi::Server> server_;
  std::string url_;
  std::string kubeconfig_;
  std::unique_ptr<JobRunner> jobs_;
  std::mutex mutex_;
  std::vector<ClientCommand> commands_;
  std::vector<JobCommand> job_commands_;
  uint64_t swept_rv_ = 0;  // the store's resourceVersion at the last garbage collection
};

}  // namespace zerodrop::lab
