#include "lab/control/endpoint_controller.h"

#include <algorithm>

#include <fmt/format.h>

#include "lab/recording/recorder.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {

record::Conditions conditions_of(bool ready, bool terminating) {
  return {ready && !terminating, ready, terminating};
}

EndpointController::EndpointController(Recorder& recorder, std::vector<Router*> routers,
                                       DelayDistribution propagation, uint64_t seed)
    : recorder_(recorder), routers_(std::move(routers)), propagation_(propagation), rng_(seed) {}

void EndpointController::publish(const Endpoint& endpoint) {
  auto it = published_.find(endpoint.pod);
  if (it != published_.end() && it->second.conditions == endpoint.conditions) {
    return;
  }
  published_[endpoint.pod] = endpoint;
  record::Event e;
  e.kind = record::EventKind::endpoint_changed;
  e.pod = endpoint.pod;
  e.conditions = endpoint.conditions;
  e.detail = fmt::format("{}:{}", endpoint.ip, endpoint.port);
  recorder_.event(std::move(e));
  send({endpoint, false});
}

void EndpointController::remove(const std::string& pod) {
  auto it = published_.find(pod);
  if (it == published_.end()) {
    return;
  }
  EndpointChange change{it->second, true};
  published_.erase(it);
  recorder_.pod_event(record::EventKind::endpoint_changed, pod, "removed");
  send(change);
}

void EndpointController::send(const EndpointChange& change) {
  for (Router* router : routers_) {
    Duration delay = propagation_.sample(rng_);
    router->schedule(change, delay);
    settled_at_ = std::max(settled_at_, recorder_.clock().now() + delay);
  }
}

}  // namespace zerodrop::lab
