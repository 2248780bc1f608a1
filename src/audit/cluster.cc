#include "audit/cluster.h"

#include <algorithm>

#include <fmt/format.h>

#include "audit/traffic.h"

namespace zerodrop::audit {
namespace {

using kube::Container;
using kube::Workload;

// An object without a namespace is applied with `-n`: it may share any namespace.
bool same_namespace(const kube::Meta& a, const kube::Meta& b) {
  return a.namespace_name.empty() || b.namespace_name.empty()
         || a.namespace_name == b.namespace_name;
}

std::string target_key(std::string_view ns, std::string_view kind, std::string_view name) {
  return fmt::format("{}/{}/{}", ns, kind, name);
}

bool http_name(std::string_view name) {
  return name == "http" || name == "https" || name == "web" || name == "h2c"
         || name.starts_with("http-") || name.starts_with("https-") || name.ends_with("-http")
         || name == "grpc" || name.starts_with("grpc-") || name.ends_with("-grpc");
}

bool http_protocol(std::string_view app_protocol) {
  return app_protocol.find("http") != std::string_view::npos
         || app_protocol.find("HTTP") != std::string_view::npos
         || app_protocol.find("h2c") != std::string_view::npos || app_protocol == "grpc";
}

// The index of the container a Service port reaches, if a container declares it.
std::optional<size_t> container_of(const Workload& w, const kube::PortRef& target) {
  for (size_t i = 0; i < w.containers.size(); ++i) {
    for (const kube::ContainerPort& p : w.containers[i].ports) {
      if (target.named() ? p.name == target.name : p.container_port == target.number) {
        return i;
      }
    }
  }
  return std::nullopt;
}

std::optional<size_t> first_main_container(const Workload& w) {
  for (size_t i = 0; i < w.containers.size(); ++i) {
    if (!w.containers[i].sidecar) {
      return i;
    }
  }
  return std::nullopt;
}

void add_http(WorkloadView& view, size_t index, int port, std::string evidence) {
  auto& ports = view.http_ports[index];
  auto known = [&](const auto& p) {
    return p.first == port;
  };
  if (port != 0 && std::none_of(ports.begin(), ports.end(), known)) {
    ports.emplace_back(port, std::move(evidence));
  }
}

}  // namespace

int64_t WorkloadView::replica_floor() const {
  if (workload->replicas) {
    return *workload->replicas;
  }
  if (hpa) {
    return hpa->min_replicas.value_or(1);
  }
  return 1;
}

std::string WorkloadView::http_evidence(size_t index, int port) const {
  for (const auto& [p, evidence] : http_ports.at(index)) {
    if (p == port) {
      return evidence;
    }
  }
  return "";
}

Cluster::Cluster(const std::vector<kube::Object>& objects) {
  for (const kube::Object& object : objects) {
    add(object);
  }
}

namespace {

// A routing object's copy without what no rule reads.
template <typename T>
T& keep(std::deque<T>& store, const T& object) {
  T& copy = store.emplace_back(object);
  copy.meta.labels.clear();
  copy.meta.annotations.clear();
  return copy;
}

// Services are the most numerous (about one per workload): only what matching and the rules
// read is kept (name, namespace, labels and prometheus.io annotations for what scrapes it,
// selector, ports without positions).
kube::Service& keep(std::deque<kube::Service>& store, const kube::Service& s) {
  kube::Service& copy = store.emplace_back();
  copy.meta.name = s.meta.name;
  copy.meta.namespace_name = s.meta.namespace_name;
  copy.meta.labels = s.meta.labels;
  for (const auto& [key, value] : s.meta.annotations) {
    if (key.starts_with("prometheus.io/")) {
      copy.meta.annotations.emplace(key, value);
    }
  }
  copy.selector = s.selector;
  copy.ports.reserve(s.ports.size());
  for (const kube::ServicePort& port : s.ports) {
    copy.ports.push_back({port.name, port.port, port.target_port, port.app_protocol, {}});
  }
  return copy;
}

}  // namespace

void Cluster::add(const kube::Object& object) {
  if (const auto* service = std::get_if<kube::Service>(&object)) {
    const kube::Service& s = keep(services_, *service);
    if (!s.selector.empty()) {  // a Service without a selector selects no pod
      services_by_selector_.add(s.meta.namespace_name, s.selector, services_.size() - 1);
    }
  } else if (const auto* pdb = std::get_if<kube::PodDisruptionBudget>(&object)) {
    const kube::PodDisruptionBudget& p = keep(pdbs_, *pdb);
    pdbs_by_selector_.add(p.meta.namespace_name, p.selector.match_labels, pdbs_.size() - 1);
  } else if (const auto* hpa = std::get_if<kube::HorizontalPodAutoscaler>(&object)) {
    const kube::HorizontalPodAutoscaler& h = keep(hpas_, *hpa);
    hpas_by_target_[target_key(h.meta.namespace_name, h.target_kind, h.target_name)] = &h;
  } else if (const auto* monitor = std::get_if<kube::ServiceMonitor>(&object)) {
    keep(monitors_, *monitor);
  } else if (const auto* ingress = std::get_if<kube::Ingress>(&object)) {
    const kube::Ingress& in = keep(ingresses_, *ingress);
    for (const kube::IngressBackend& b : in.backends) {
      ingresses_by_service_.add(in.meta.namespace_name, pair_hash("", b.service),
                                ingresses_.size() - 1);
    }
  }
}

bool Cluster::may_route(std::string_view document) {
  // Every routing kind's name contains "Service", "Ingress", "PodDisruptionBudget" or
  // "HorizontalPodAutoscaler"; a document without any of them holds none (kind: List included).
  for (std::string_view kind :
       {"Service", "Ingress", "PodDisruptionBudget", "HorizontalPodAutoscaler"}) {
    if (document.find(kind) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

WorkloadView Cluster::view_of(const Workload& w) const {
  WorkloadView view;
  view.workload = &w;
  services_by_selector_.find(w.meta.namespace_name, w.pod_labels, [&](uint64_t i) {
    const kube::Service& s = services_[i];
    if (same_namespace(s.meta, w.meta) && kube::map_selects(s.selector, w.pod_labels)) {
      view.services.push_back(&s);
    }
  });
  pdbs_by_selector_.find(w.meta.namespace_name, w.pod_labels, [&](uint64_t i) {
    const kube::PodDisruptionBudget& p = pdbs_[i];
    if (same_namespace(p.meta, w.meta) && p.selector.matches(w.pod_labels)) {
      view.pdbs.push_back(&p);
    }
  });
  std::string_view kind = w.meta.kind;
  for (std::string_view ns : {std::string_view(w.meta.namespace_name), std::string_view()}) {
    auto it = hpas_by_target_.find(target_key(ns, kind, w.meta.name));
    if (it != hpas_by_target_.end() && !view.hpa) {
      view.hpa = it->second;
    }
  }
  // Services that carry only Prometheus scrapes send no client a request.
  std::erase_if(view.services, [&](const kube::Service* s) {
    std::string why = scrape_only(*s, w, scrapers_of(*s));
    if (why.empty()) {
      return false;
    }
    view.scraped_by.push_back(std::move(why));
    return true;
  });
  find_serving(view);
  find_http(view);
  return view;
}

std::vector<const kube::ServiceMonitor*> Cluster::scrapers_of(const kube::Service& s) const {
  std::vector<const kube::ServiceMonitor*> out;
  for (const kube::ServiceMonitor& m : monitors_) {
    if (monitors(m, s)) {
      out.push_back(&m);
    }
  }
  return out;
}

void Cluster::find_serving(WorkloadView& view) const {
  const Workload& w = *view.workload;
  view.serving.assign(w.containers.size(), false);
  view.http_ports.assign(w.containers.size(), {});
  for (const kube::Service* s : view.services) {
    bool ingress = false;  // an Ingress of the Service's namespace routes to it by name
    ingresses_by_service_.find(s->meta.namespace_name, pair_hash("", s->meta.name),
                               [&](uint64_t i) {
                                 const kube::Ingress& in = ingresses_[i];
                                 ingress = ingress || same_namespace(in.meta, s->meta);
                               });
    std::vector<const kube::ServiceMonitor*> scrapers = scrapers_of(*s);
    for (const kube::ServicePort& port : s->ports) {
      if (!scrape_port(*s, port, w, scrapers).empty()) {
        continue;  // a metrics port beside client ports (an exporter or kube-rbac-proxy sidecar)
      }
      // A port number no container declares still reaches the main container (declaring is
      // optional); a name no container declares reaches none (no endpoint for that port).
      auto index = container_of(w, port.target_port);
      if (!index && !port.target_port.named()) {
        index = first_main_container(w);
      }
      if (!index) {
        continue;
      }
      view.serving[*index] = true;
      auto number = w.containers[*index].resolve(port.target_port);
      if (!number) {
        continue;
      }
      if (http_protocol(port.app_protocol)) {
        add_http(
            view, *index, *number,
            fmt::format("Service '{}' port has appProtocol {}", s->meta.name, port.app_protocol));
      } else if (http_name(port.name)) {
        add_http(view, *index, *number,
                 fmt::format("Service '{}' port is named '{}'", s->meta.name, port.name));
      } else if (ingress) {
        add_http(view, *index, *number,
                 fmt::format("an Ingress routes HTTP to Service '{}'", s->meta.name));
      }
    }
  }
}

void Cluster::find_http(WorkloadView& view) const {
  const Workload& w = *view.workload;
  for (size_t i = 0; i < w.containers.size(); ++i) {
    const Container& c = w.containers[i];
    for (const kube::ContainerPort& p : c.ports) {
      if (http_name(p.name)) {
        add_http(view, i, p.container_port, fmt::format("the port is named '{}'", p.name));
      }
    }
    for (const auto* probe : {&c.liveness_probe, &c.startup_probe}) {
      if (*probe && (*probe)->handler.kind == kube::HandlerKind::http_get) {
        if (auto port = c.resolve((*probe)->handler.port)) {
          add_http(view, i, *port,
                   probe == &c.liveness_probe ? "the liveness probe GETs it over HTTP"
                                              : "the startup probe GETs it over HTTP");
        }
      }
    }
  }
}

}  // namespace zerodrop::audit
