#pragma once
// Internal to src/kube: builds the object model from one parsed YAML document.

#include "kube/object.h"
#include "kube/yaml_reader.h"

namespace zerodrop::kube::detail {

// Reads metadata and the document's own position; kind and apiVersion must be present.
Meta read_meta(Reader& r, Node root, const Path& path);

// The workload kind named by apiVersion/kind, or nullopt for other objects.
std::optional<WorkloadKind> workload_kind(const Meta& meta);

Workload read_workload(Reader& r, Node root, const Path& path, Meta meta, WorkloadKind kind);

// Service, PodDisruptionBudget, HorizontalPodAutoscaler, Ingress, ServiceMonitor or OtherObject.
Object read_other(Reader& r, Node root, const Path& path, Meta meta);

}  // namespace zerodrop::kube::detail
