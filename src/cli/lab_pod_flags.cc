#include "cli/lab_pod_flags.h"

#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/parse.h"
#include "base/subprocess.h"
#include "cli/manifest_flags.h"
#include "lab/lab.h"
#include "lab/manifest.h"

namespace zerodrop::cli {
namespace lab_pod_flags {
namespace {

// Applies `flag` only when given on the command line, so that a manifest's values stay.
template <typename F>
void given(const CLI::App& app, const char* flag, F apply) {
  if (flag_given(app, flag)) {
    apply();
  }
}

void apply_probe_flags(const CLI::App& app, const LabPodFlags& f, lab::Options& o) {
  lab::ProbeSpec& r = o.pod.readiness;
  given(app, "--readiness", [&] { r = lab::parse_probe(f.readiness, "--readiness"); });
  given(app, "--readiness-period",
        [&] { r.period = parse_duration(f.readiness_period, "--readiness-period"); });
  given(app, "--readiness-timeout",
        [&] { r.timeout = parse_duration(f.readiness_timeout, "--readiness-timeout"); });
  given(app, "--readiness-delay",
        [&] { r.initial_delay = parse_duration(f.readiness_delay, "--readiness-delay"); });
  given(app, "--readiness-success", [&] {
    r.success_threshold = int_flag(f.readiness_success, "--readiness-success", 1, 1000);
  });
  given(app, "--readiness-failure", [&] {
    r.failure_threshold = int_flag(f.readiness_failure, "--readiness-failure", 1, 1000);
  });
  lab::ProbeSpec& l = o.pod.liveness;
  given(app, "--liveness", [&] { l = lab::parse_probe(f.liveness, "--liveness"); });
  given(app, "--liveness-period",
        [&] { l.period = parse_duration(f.liveness_period, "--liveness-period"); });
  given(app, "--liveness-timeout",
        [&] { l.timeout = parse_duration(f.liveness_timeout, "--liveness-timeout"); });
  given(app, "--liveness-delay",
        [&] { l.initial_delay = parse_duration(f.liveness_delay, "--liveness-delay"); });
  given(app, "--liveness-failure",
        [&] { l.failure_threshold = int_flag(f.liveness_failure, "--liveness-failure", 1, 1000); });
}

}  // namespace
}  // namespace lab_pod_flags

int int_flag(const std::string& text, const char* what, int64_t min, int64_t max) {
  return static_cast<int>(parse_integer(text, what, min, max));
}

void add_lab_pod_flags(CLI::App& app, LabPodFlags& f) {
  app.add_option("-f,--file", f.manifest,
                 "read replicas, strategy, preStop, grace, probes and "
                 "port from the first workload of this manifest; flags override it");
  app.add_option("--container", f.container,
                 "the manifest's container (default: the first that is not a native sidecar)");
  app.add_option("--replicas", f.replicas, "pods")->capture_default_str();
  app.add_option("--max-surge", f.max_surge, "extra pods during the rollout (N or %, rounded up)")
      ->capture_default_str();
  app.add_option("--max-unavailable", f.max_unavailable,
                 "pods that may be unavailable (N or %, rounded down)")
      ->capture_default_str();
  app.add_option("--min-ready", f.min_ready, "minReadySeconds (duration)")->capture_default_str();
  app.add_option("--prestop", f.prestop, "none | sleep:DURATION | exec:'cmd args' | http:/path")
      ->capture_default_str();
  app.add_option("--grace", f.grace, "terminationGracePeriodSeconds (duration)")
      ->capture_default_str();
  app.add_option("--stop-signal", f.stop_signal, "signal sent after preStop")
      ->capture_default_str();
  app.add_option("--port", f.port,
                 "port every pod listens on, each on its own IP (0 = a free one per pod)")
      ->capture_default_str();
  app.add_option("--readiness", f.readiness,
                 "http:/path | tcp | exec:'cmd args' | grpc[:SERVICE] | none")
      ->capture_default_str();
  app.add_option("--readiness-period", f.readiness_period, "probe period (Kubernetes: 10s)")
      ->capture_default_str();
  app.add_option("--readiness-timeout", f.readiness_timeout, "probe timeout")
      ->capture_default_str();
  app.add_option("--readiness-delay", f.readiness_delay, "initialDelaySeconds")
      ->capture_default_str();
  app.add_option("--readiness-success", f.readiness_success, "successThreshold")
      ->capture_default_str();
  app.add_option("--readiness-failure", f.readiness_failure, "failureThreshold")
      ->capture_default_str();
  app.add_option("--liveness", f.liveness,
                 "http:/path | tcp | exec:'cmd args' | grpc[:SERVICE] | none")
      ->capture_default_str();
  app.add_option("--liveness-period", f.liveness_period, "probe period")->capture_default_str();
  app.add_option("--liveness-timeout", f.liveness_timeout, "probe timeout")->capture_default_str();
  app.add_option("--liveness-delay", f.liveness_delay, "initialDelaySeconds")
      ->capture_default_str();
  app.add_option("--liveness-failure", f.liveness_failure, "failureThreshold")
      ->capture_default_str();
}

void apply_lab_pod_flags(const CLI::App& app, const LabPodFlags& f, lab::Options& o) {
  using namespace lab_pod_flags;
  given(app, "--replicas", [&] { o.replicas = int_flag(f.replicas, "--replicas", 1, 1000); });
  apply_rollout_limit_flags(app, f.max_surge, f.max_unavailable, o.max_surge, o.max_unavailable);
  given(app, "--min-ready", [&] { o.min_ready = parse_duration(f.min_ready, "--min-ready"); });
  given(app, "--prestop", [&] { o.pod.prestop = lab::parse_hook(f.prestop, "--prestop"); });
  given(app, "--grace", [&] { o.pod.grace = parse_duration(f.grace, "--grace"); });
  given(app, "--port",
        [&] { o.pod.port = static_cast<uint16_t>(int_flag(f.port, "--port", 0, 65535)); });
  std::optional<int> signal = signal_from_name(f.stop_signal);
  if (!signal) {
    throw Error(fmt::format("--stop-signal: unknown signal '{}'", f.stop_signal));
  }
  if (!o.pod.container || app.count("--stop-signal") > 0) {
    o.pod.stop_signal = *signal;
  }
  if (o.pod.container && app.count("--stop-signal") > 0) {
    o.pod.container->image_stop_signal = false;
  }
  apply_probe_flags(app, f, o);
}

}  // namespace zerodrop::cli
