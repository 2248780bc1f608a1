#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kube/object.h"

namespace zerodrop::audit {

// What other objects say about one workload: who routes to it, who scales it, who guards it.
struct WorkloadView {
  const kube::Workload* workload = nullptr;
  std::vector<const kube::Service*> services;  // Services selecting its pods
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

// Indexes all objects once; views are computed per workload in O(objects of the namespace).
class Cluster {
public:
  explicit Cluster(const std::vector<kube::Object>& objects);

  std::vector<WorkloadView> views() const;

private:
  WorkloadView view_of(const kube::Workload& w) const;
  void find_serving(WorkloadView& view) const;
  void find_http(WorkloadView& view) const;

  // Services and PDBs are indexed by one label pair of their selector ("key=value"), so that
  // a workload meets only the candidates that share a label with it; the rest are scanned.
  std::map<std::string, std::vector<const kube::Service*>, std::less<>> services_by_label_;
  std::map<std::string, std::vector<const kube::PodDisruptionBudget*>, std::less<>> pdbs_by_label_;
  std::vector<const kube::PodDisruptionBudget*> pdbs_scanned_;
  std::map<std::string, const kube::HorizontalPodAutoscaler*, std::less<>> hpas_by_target_;
  std::map<std::string, std::vector<const kube::Ingress*>, std::less<>> ingresses_by_service_;
  std::vector<const kube::Workload*> workloads_;
};

}  // namespace zerodrop::audit
