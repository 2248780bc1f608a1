#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "audit/routing_index.h"
#include "kube/object.h"

namespace zerodrop::audit {

// What other objects say about one workload: who routes to it, who scales it, who guards it.
struct WorkloadView {
  const kube::Workload* workload = nullptr;
  std::vector<const kube::Service*> services;  // Services selecting its pods for clients
  // Services selecting its pods that carry only Prometheus scrapes: why, one line each.
  std::vector<std::string> scraped_by;
  const kube::HorizontalPodAutoscaler* hpa = nullptr;
  std::vector<const kube::PodDisruptionBudget*> pdbs;  // PDBs selecting its pods
  std::vector<bool> serving;                           // per container: receives Service traffic
  // Per container: its ports with evidence that they speak HTTP ("port named 'http'").
  std::vector<std::vector<std::pair<int, std::string>>> http_ports;

  bool takes_traffic() const { return !services.empty(); }

  // Replicas the rollout starts from: spec.replicas, else HPA minReplicas (nil = 1), else 1.
  int64_t replica_floor() const;
  // Why `port` of container `index` is known to serve HTTP, or "" when nothing says so.
  std::string http_evidence(size_t index, int port) const;
};

// The objects that route to, scale and guard workloads (Services, PDBs, HPAs, Ingresses), kept
// as compact copies and indexed, so that workloads can be read one file at a time and matched
// against every file's routing objects. Views are computed in O(candidates filed under one of
// the workload's labels in its namespace) (SelectorIndex). Not thread-safe: the first view after
// adds indexes them.
class Cluster {
public:
  Cluster() = default;
  // Adds every routing object of `objects`.
  explicit Cluster(const std::vector<kube::Object>& objects);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Keeps a copy of a Service, PodDisruptionBudget, HorizontalPodAutoscaler, Ingress or
  // ServiceMonitor (without the labels and annotations no rule reads); any other object is
  // ignored.
  void add(const kube::Object& object);

  WorkloadView view_of(const kube::Workload& w) const;

  // Whether a document's text may hold a routing object (it names one of their kinds): a cheap
  // test that lets a first pass over the input parse only those documents.
  static bool may_route(std::string_view document);

private:
  void find_serving(WorkloadView& view) const;
  void find_http(WorkloadView& view) const;
  std::vector<const kube::ServiceMonitor*> scrapers_of(const kube::Service& s) const;

  // Deques: the views point into them, and adding must not move what is already there.
  std::deque<kube::Service> services_;
  std::deque<kube::PodDisruptionBudget> pdbs_;
  std::deque<kube::HorizontalPodAutoscaler> hpas_;
  std::deque<kube::Ingress> ingresses_;
  std::deque<kube::ServiceMonitor> monitors_;  // few: scanned for every Service
  // Positions in the deques above.
  SelectorIndex services_by_selector_;
  SelectorIndex pdbs_by_selector_;
  std::map<std::string, const kube::HorizontalPodAutoscaler*, std::less<>> hpas_by_target_;
  NamespacedMultimap ingresses_by_service_;  // by the hashed name of a backend Service
};

}  // namespace zerodrop::audit
