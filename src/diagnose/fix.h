#pragma once

#include <optional>
#include <string>

#include "diagnose/diagnose.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// What the fixes are computed from: the measurements and the settings the run used.
struct FixInputs {
  Options options;
  const record::Scenario* scenario = nullptr;
  Propagation propagation;
  std::optional<record::Micros> longest_drain;
  std::string drain_evidence;
  std::optional<int> replicas;
  int min_ready = 0;  // fewest Ready replicas while capacity-dip failures happened
  std::string stop_signal = "SIGTERM";  // the pods' stop signal, named in the app steps
};

// The fix for `hole`, with numbers computed from `inputs`. Internal to diagnose.
Fix fix_for(record::Hole hole, const FixInputs& inputs);

// The Kubernetes minor version of "1.30", "v1.29.3"; throws Error on anything else.
int k8s_minor(const std::string& version);

// Seconds rounded up to whole seconds, as the manifests take them.
int whole_seconds_up(record::Micros t);

}  // namespace zerodrop::diagnose
