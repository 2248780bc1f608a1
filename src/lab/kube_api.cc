#include "lab/kube_api.h"

#include <fmt/format.h>

#include "kubeapi/api.h"
#include "kubeapi/projection.h"
#include "kubeapi/server.h"
#include "kubeapi/store.h"
#include "lab/recorder.h"

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
}

std::vector<ClientCommand> LabApi::take_commands() {
  std::lock_guard lock(mutex_);
  return std::exchange(commands_, {});
}

void LabApi::push(ClientCommand command) {
  std::lock_guard lock(mutex_);
  commands_.push_back(std::move(command));
}

void LabApi::refresh(record::Micros now) {
  projection_->refresh(now);
}

}  // namespace zerodrop::lab
