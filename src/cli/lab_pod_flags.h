#pragma once
// zerodrop lab's flags for the Deployment and its pods, which a manifest (-f) also sets: replicas,
// strategy, preStop, grace, stop signal, port and the probes. A flag given overrides the manifest.
#include <cstdint>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace zerodrop::lab {
struct Options;
}  // namespace zerodrop::lab

namespace zerodrop::cli {

// The values as text, converted by apply_lab_pod_flags so that errors name the flag.
struct LabPodFlags {
  std::string manifest, container;
  std::string replicas = "3", max_surge = "25%", max_unavailable = "25%", min_ready = "0s";
  std::string prestop = "none", grace = "30s", stop_signal = "TERM", port = "0";
  std::string readiness = "tcp", readiness_period = "1s", readiness_timeout = "1s";
  std::string readiness_delay = "0s", readiness_success = "1", readiness_failure = "3";
  std::string liveness = "none", liveness_period = "1s", liveness_timeout = "1s";
  std::string liveness_delay = "0s", liveness_failure = "3";
};

// A flag's whole number in [min, max] as an int (lab's counts); Error naming `what` otherwise.
int int_flag(const std::string& text, const char* what, int64_t min, int64_t max);

// Declares -f, --container and the pod flags on `app`, bound to `f` (which must outlive the parse).
void add_lab_pod_flags(CLI::App& app, LabPodFlags& f);

// Sets in `o` what was given on the command line, over the defaults or the manifest's values
// already there; --stop-signal is checked even when not given. Throws Error naming the flag.
void apply_lab_pod_flags(const CLI::App& app, const LabPodFlags& f, lab::Options& o);

}  // namespace zerodrop::cli
