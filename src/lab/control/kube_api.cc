#include "lab/control/kube_api.h"

#include <fmt/format.h>

#include "kubeapi/api.h"
#include "kubeapi/garbage.h"
#include "kubeapi/projection.h"
#include "kubeapi/seed.h"
#include "kubeapi/server.h"
#include "kubeapi/store.h"
#include "lab/control/daemon_runner.h"
#include "lab/control/job_runner.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

KubeApiHub::KubeApiHub(const KubeApiOptions& options, const kubeapi::ClusterInfo& cluster,
                       Recorder& recorder, const std::string& kubeconfig_dir)
    : recorder_(recorder), store_(std::make_unique<kubeapi::Store>()) {
  kubeapi::Listen listen = kubeapi::parse_listen(options.listen);
  kubeapi::seed_deployments(*store_, cluster, options.seed_deployments);
  kubeapi::ApiOptions api_options;
  api_options.token = kubeapi::make_token();
  api_options.deny = options.deny;
  kubeapi::LabHooks hooks;
  hooks.restart = [this](const std::string& deployment) {
    return route(deployment, {ClientCommand::Kind::restart, 0, ""});
  };
  hooks.scale = [this](const std::string& deployment, int n) {
    return route(deployment, {ClientCommand::Kind::scale, n, ""});
  };
  hooks.delete_pod = [this](const std::string& pod) {
    route_pod_deletion(pod);
  };
  hooks.log_path = [this](const std::string& pod) {
    return log_path(pod);
  };
  hooks.create_job = [this](const std::string& job) {
    std::lock_guard lock(mutex_);
    job_commands_.push_back({job, ""});
  };
  hooks.delete_job = [this](const std::string& job, const std::string& propagation) {
    std::lock_guard lock(mutex_);
    job_commands_.push_back({job, propagation});
  };
  jobs_ = std::make_unique<JobRunner>(*store_, cluster, recorder_);
  daemons_ = std::make_unique<DaemonRunner>(*store_, cluster, recorder_);
  api_ = std::make_unique<kubeapi::Api>(*store_, cluster, api_options, std::move(hooks));
  server_ = kubeapi::Server::start(listen, *api_);
  url_ = server_->url();
  kubeconfig_ = kubeconfig_dir + "/kubeconfig";
  kubeapi::write_kubeconfig(kubeconfig_, url_, server_->ca_pem(), api_options.token);
}

KubeApiHub::~KubeApiHub() {
  server_.reset();  // no client acts any more
  daemons_.reset();
  jobs_.reset();
}

void KubeApiHub::join(Tenant* tenant) {
  std::lock_guard lock(mutex_);
  tenants_.push_back(tenant);
}

void KubeApiHub::leave(Tenant* tenant) {
  std::lock_guard lock(mutex_);
  std::erase(tenants_, tenant);
}

bool KubeApiHub::route(const std::string& deployment, ClientCommand command) {
  std::lock_guard lock(mutex_);
  for (Tenant* t : tenants_) {
    if (t->deployment() == deployment) {
      t->push(std::move(command));
      return true;
    }
  }
  return false;  // seeded, or a client's: stored only
}

// A workload's pod goes to its workload ("web-pod-3" with prefix "web-" is web's "pod-3"; a
// workload alone in its API, with no prefix, is asked first and hands back what is not its
// own); the Jobs' and DaemonSets' pods to poll().
void KubeApiHub::route_pod_deletion(const std::string& pod) {
  std::lock_guard lock(mutex_);
  for (Tenant* t : tenants_) {
    const std::string& prefix = t->pod_prefix();
    if (!prefix.empty() && pod.rfind(prefix + "pod-", 0) == 0) {
      t->push({ClientCommand::Kind::delete_pod, 0, pod.substr(prefix.size())});
      return;
    }
  }
  for (Tenant* t : tenants_) {
    if (t->pod_prefix().empty()) {
      t->push({ClientCommand::Kind::delete_pod, 0, pod});
      return;
    }
  }
  pod_deletions_.push_back(pod);
}

std::string KubeApiHub::log_path(const std::string& pod) {
  std::lock_guard lock(mutex_);
  for (Tenant* t : tenants_) {
    const std::string& prefix = t->pod_prefix();
    if (!prefix.empty() && pod.rfind(prefix + "pod-", 0) == 0) {
      return t->pod_log(pod.substr(prefix.size()));
    }
  }
  return recorder_.pod_log(pod);
}

bool KubeApiHub::delete_pod(const std::string& pod) {
  std::lock_guard lock(controllers_);
  return jobs_->delete_pod(pod) || daemons_->delete_pod(pod);
}

void KubeApiHub::poll() {
  std::unique_lock busy(controllers_, std::try_to_lock);
  if (!busy.owns_lock()) {
    return;  // another workload's thread is at it
  }
  std::vector<JobCommand> commands;
  std::vector<std::string> deletions;
  {
    std::lock_guard lock(mutex_);
    commands = std::exchange(job_commands_, {});
    deletions = std::exchange(pod_deletions_, {});
  }
  for (const JobCommand& c : commands) {
    if (c.propagation.empty()) {
      jobs_->create(c.job);
    } else {
      jobs_->remove(c.job, c.propagation);
    }
  }
  for (const std::string& pod : deletions) {
    if (!jobs_->delete_pod(pod)) {
      daemons_->delete_pod(pod);
    }
  }
  collect_garbage();
  jobs_->poll();
  daemons_->poll();
}

// Kubernetes' garbage collector, in the background as the real one: whenever the store changed,
// objects whose owners are all gone are deleted (a Job's pods with it, as Background deletion).
void KubeApiHub::collect_garbage() {
  uint64_t rv = store_->resource_version();
  if (rv == swept_rv_) {
    return;
  }
  for (const kubeapi::Collected& c : kubeapi::collect_garbage(*store_)) {
    if (c.resource == "batch/jobs") {
      jobs_->remove(c.name, "Background",
                    "the garbage collector (its owner " + c.owner + " is gone)");
    } else {
      recorder_.pod_event(record::EventKind::note, "",
                          fmt::format("the garbage collector deleted {} {} (its owner {} is gone)",
                                      c.resource, c.name, c.owner));
    }
  }
  swept_rv_ = store_->resource_version();
}

LabApi::LabApi(const KubeApiOptions& options, const kubeapi::ClusterInfo& info, Recorder& recorder)
    : recorder_(recorder), deployment_(info.deployment), pod_prefix_(info.pod_prefix) {
  hub_ = options.hub ? options.hub
                     : std::make_shared<KubeApiHub>(options, info, recorder, recorder.dir());
  projection_ = std::make_unique<kubeapi::Projection>(hub_->store(), info);
  projection_->publish_initial();
  hub_->join(this);
  recorder_.observe([this](const record::Event& e) { projection_->observe(e); });
}

LabApi::~LabApi() {
  recorder_.observe(nullptr);
  hub_->leave(this);
  hub_.reset();  // its own hub stops serving; a shared one serves the other workloads on
}

void LabApi::push(ClientCommand command) {
  std::lock_guard lock(mutex_);
  commands_.push_back(std::move(command));
}

std::string LabApi::pod_log(const std::string& pod) const {
  return recorder_.pod_log(pod);
}

std::vector<ClientCommand> LabApi::take_commands() {
  std::vector<ClientCommand> all;
  {
    std::lock_guard lock(mutex_);
    all = std::exchange(commands_, {});
  }
  std::vector<ClientCommand> workload;
  for (ClientCommand& c : all) {
    // Alone in its API, the workload is handed every pod's deletion: a Job's or DaemonSet's
    // pod goes to the hub's controllers.
    bool other = c.kind == ClientCommand::Kind::delete_pod && pod_prefix_.empty()
                 && hub_->delete_pod(c.pod);
    if (!other) {
      workload.push_back(std::move(c));
    }
  }
  return workload;
}

void LabApi::refresh(record::Micros now) {
  projection_->refresh(now);
  hub_->poll();
}

}  // namespace zerodrop::lab
