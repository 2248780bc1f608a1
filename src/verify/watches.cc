#include "verify/watches.h"

#include "verify/observer.h"

namespace zerodrop::verify {

Watches::Watches(const ApiClient& client, const WatchSet& set, Timeline& timeline) {
  std::string ns = "/namespaces/" + set.namespace_name;
  auto note = [&timeline](const std::string& text) {
    timeline.note(text);
  };
  using Handler = std::vector<Event> (Observer::*)(const WatchEvent&, Micros);
  auto add = [&](WatchTarget what, Handler handler) {
    watchers_.push_back(std::make_unique<Watcher>(
        client, std::move(what),
        [&timeline, handler](const WatchEvent& e) {
          timeline.observe([&](Observer& ob, Micros t) { return (ob.*handler)(e, t); });
        },
        note));
  };
  if (!set.deployment.empty()) {
    add({"deployments", "/apis/apps/v1" + ns + "/deployments",
         "fieldSelector=" + query_escape("metadata.name=" + set.deployment)},
        &Observer::on_deployment);
  }
  add({"pods", "/api/v1" + ns + "/pods", "labelSelector=" + query_escape(set.pod_selector)},
      &Observer::on_pod);
  if (!set.service.empty()) {
    add({"endpointslices", "/apis/discovery.k8s.io/v1" + ns + "/endpointslices",
         "labelSelector=" + query_escape("kubernetes.io/service-name=" + set.service)},
        &Observer::on_slice);
  }
  add({"events", "/api/v1" + ns + "/events", ""}, &Observer::on_event);
  for (auto& w : watchers_) {
    w->list();
  }
  for (auto& w : watchers_) {
    threads_.emplace_back([&w] { w->watch(); });
  }
}

Watches::~Watches() {
  for (auto& w : watchers_) {
    w->stop();
  }
  for (auto& t : threads_) {
    t.join();
  }
}

}  // namespace zerodrop::verify
