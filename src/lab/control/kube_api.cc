#include "lab/control/kube_api.h"

#include <fmt/format.h>

#include "kubeapi/api.h"
#include "kubeapi/garbage.h"
#include "kubeapi/projection.h"
#include "kubeapi/server.h"
#include "kubeapi/store.h"
#include "lab/control/job_runner.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

LabApi::LabApi(const KubeApiOptions& options, const kubeapi::ClusterInfo& info, Recorder& recorder)
    : recorder_(recorder), store_(std::make_unique<kubeapi::Store>()) {
  kubeapi::Listen listen = kubeapi::parse_listen(options.listen);
  projection_ = std::make_unique<kubeapi::Projection>(*store_, info);
  projection_->publish_initial();
  kubeapi::ApiOptions api_options;
  api_options.token = kubeapi::make_token();
  api_options.deny = options.deny;
  kubeapi::LabHooks hooks;
  hooks.restart = [this] {
    push({ClientCommand::Kind::restart, 0, ""});
  };
  hooks.scale = [this](int n) {
    push({ClientCommand::Kind::scale, n, ""});
  };
  hooks.delete_pod = [this](const std::string& pod) {
    push({ClientCommand::Kind::delete_pod, 0, pod});
  };
  hooks.log_path = [this](const std::string& pod) {
    return recorder_.pod_log(pod);
  };
  hooks.create_job = [this](const std::string& job) {
    std::lock_guard lock(mutex_);
    job_commands_.push_back({job, ""});
  };
  hooks.delete_job = [this](const std::string& job, const std::string& propagation) {
    std::lock_guard lock(mutex_);
    job_commands_.push_back({job, propagation});
  };
  jobs_ = std::make_unique<JobRunner>(*store_, info, recorder_);
  api_ = std::make_unique<kubeapi::Api>(*store_, info, api_options, std::move(hooks));
  server_ = kubeapi::Server::start(listen, *api_);
  url_ = server_->url();
  kubeconfig_ = recorder.dir() + "/kubeconfig";
  kubeapi::write_kubeconfig(kubeconfig_, url_, server_->ca_pem(), api_options.token);
  recorder_.observe([this](const record::Event& e) { projection_->observe(e); });
}

LabApi::~LabApi() {
  recorder_.observe(nullptr);
  server_.reset();
  jobs_.reset();  // after the server: no client acts on Jobs any more
}

std::vector<ClientCommand> LabApi::take_commands() {
  std::vector<ClientCommand> all;
  {
    std::lock_guard lock(mutex_);
    all = std::exchange(commands_, {});
  }
  std::vector<ClientCommand> workload;
  for (ClientCommand& c : all) {
    bool job_pod = c.kind == ClientCommand::Kind::delete_pod && jobs_->delete_pod(c.pod);
    if (!job_pod) {
      workload.push_back(std::move(c));
    }
  }
  return workload;
}

void LabApi::push(ClientCommand command) {
  std::lock_guard lock(mutex_);
  commands_.push_back(std::move(command));
}

void LabApi::refresh(record::Micros now) {
  projection_->refresh(now);
  std::vector<JobCommand> commands;
  {
    std::lock_guard lock(mutex_);
    commands = std::exchange(job_commands_, {});
  }
  for (const JobCommand& c : commands) {
    if (c.propagation.empty()) {
      jobs_->create(c.job);
    } else {
      jobs_->remove(c.job, c.propagation);
    }
  }
  collect_garbage();
  jobs_->poll();
}

// Kubernetes' garbage collector, in the background as the real one: whenever the store changed,
// objects whose owners are all gone are deleted (a Job's pods with it, as Background deletion).
void LabApi::collect_garbage() {
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

}  // namespace zerodrop::lab
