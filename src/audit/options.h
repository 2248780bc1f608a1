#pragma once

#include <string>
#include <vector>

#include "audit/finding.h"
#include "audit/ignores.h"
#include "base/duration.h"
#include "kube/loader.h"

namespace zerodrop::audit {

enum class Format { text, json, sarif, github };
enum class FixPatches { off, on };

// A Kubernetes minor version, for what the API accepts ("1.30").
struct KubeVersion {
  int major = 1;
  int minor = 30;

  bool has_native_sleep() const { return major > 1 || minor >= 30; }  // beta, on by default
};

// Parses "1.30", "v1.29.3"; throws Error naming `what` otherwise.
KubeVersion parse_kube_version(std::string_view text, std::string_view what);

// What `zerodrop audit` checks and how it reports. Durations are whole or fractional seconds.
struct Options {
  std::vector<std::string> paths;                  // files, folders, "-"
  Duration propagation = std::chrono::seconds(5);  // endpoint removal to the last router
  Duration drain = std::chrono::seconds(5);        // the app's drain time, unless annotated
  Duration margin = std::chrono::seconds(2);       // slack kept between drain and SIGKILL
  double headroom = 0.25;                          // capacity the load leaves spare (0..1)
  KubeVersion kube_version;
  Format format = Format::text;
  Severity fail_on = Severity::error;
  FixPatches fix = FixPatches::off;
  Ignores ignores;  // from --config and --ignore
  kube::LoadLimits limits;
};

}  // namespace zerodrop::audit
