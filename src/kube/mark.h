#pragma once

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

namespace zerodrop::kube {

// A position in a source file, 1-based as editors show it; 0 means unknown.
struct Mark {
  int line = 0;
  int column = 0;
};

// Every field whose position some struct keeps, by its YAML path relative to that struct.
inline constexpr std::string_view kMarkedFields[] = {
    // ObjectMeta
    "metadata.name", "metadata.annotations",
    // Handler (preStop, probes)
    "port", "path", "command", "seconds",
    // Probe
    "initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold",
    "failureThreshold",
    // Container
    "image", "lifecycle", "lifecycle.preStop", "ports", "volumeMounts", "readinessProbe",
    "livenessProbe", "startupProbe",
    // Strategy
    "type", "maxSurge", "maxUnavailable", "rollingUpdate", "canary",
    // Workload
    "spec", "spec.replicas", "spec.strategy", "spec.minReadySeconds", "pod", "pod.spec",
    "pod.terminationGracePeriodSeconds", "pod.volumes", "pod.initContainers",
    "pod.metadata.annotations",
    // PodDisruptionBudget, HorizontalPodAutoscaler
    "spec.minAvailable", "spec.maxUnavailable", "minReplicas", "maxReplicas"};

// The name of a marked field. Its constructor runs at compile time and accepts only the names
// above, so a misspelt key is a compile error ("call to ... not_a_marked_field") rather than a
// lookup that silently falls back to the struct's own position. Names are string literals, so
// Marks stores views, not copies, which keeps the loader fast.
class MarkKey {
public:
  consteval MarkKey(const char* name) : name_(name) {
    if (std::find(std::begin(kMarkedFields), std::end(kMarkedFields), name_)
        == std::end(kMarkedFields)) {
      not_a_marked_field();
    }
  }

  std::string_view name() const { return name_; }

  bool operator==(const MarkKey& other) const { return name_ == other.name_; }

private:
  static void not_a_marked_field();  // not constexpr: calling it stops the compile

  std::string_view name_;
};

// Source positions of the fields a struct was read from ("lifecycle.preStop", "port").
struct Marks {
  Mark self;  // the struct's own node
  std::vector<std::pair<MarkKey, Mark>> fields;

  // The field's position, or `self` when the field was not written.
  Mark at(MarkKey field) const {
    for (const auto& [key, mark] : fields) {
      if (key == field) {
        return mark;
      }
    }
    return self;
  }

  bool has(MarkKey field) const {
    for (const auto& entry : fields) {
      if (entry.first == field) {
        return true;
      }
    }
    return false;
  }

  void set(MarkKey field, Mark mark) { fields.emplace_back(field, mark); }
};

}  // namespace zerodrop::kube
