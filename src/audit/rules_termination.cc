// deregistration-race and grace-overrun rules.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "audit/pre_stop.h"
#include "audit/rule.h"
#include "audit/rules.h"
#include "base/error.h"

namespace zerodrop::audit {
namespace {

using kube::Container;
using kube::Workload;
namespace id = rule_id;

std::string pre_stop_fix(const Container& c, int64_t seconds, const Options& o) {
  if (o.kube_version.has_native_sleep()) {
    return fmt::format(
        "set lifecycle.preStop to the native sleep: {{seconds: {}}} (Kubernetes "
        ">= 1.30, needs nothing in the image)",
        seconds);
  }
  if (shell_less_image(c.image)) {
    return fmt::format(
        "copy the static zerodrop binary into the image and set "
        "lifecycle.preStop.exec.command: [/zerodrop, sleep, \"{}\"] (Kubernetes "
        "{}.{} has no native sleep)",
        seconds, o.kube_version.major, o.kube_version.minor);
  }
  return fmt::format(
      "set lifecycle.preStop.exec.command: [sleep, \"{}\"] if the image has a sleep program; "
      "else [/zerodrop, sleep, \"{}\"] with the static zerodrop copied in (Kubernetes {}.{} has "
      "no native sleep)",
      seconds, seconds, o.kube_version.major, o.kube_version.minor);
}

std::string service_names(const WorkloadView& view) {
  std::vector<std::string> names;
  for (const kube::Service* s : view.services) {
    std::string name = fmt::format("'{}'", s->meta.name);
    // The same Service may come from two files (e.g. two variants of one app): name it once.
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return fmt::format("Service{} {}", names.size() > 1 ? "s" : "", fmt::join(names, ", "));
}

// The delay one container's hook is meant to give (what the grace period must cover), and
// whether it gives it (its program is in the image and its duration is known).
struct HookCheck {
  double delay = 0;
  bool known = true;
  bool works = true;
};

HookCheck check_hook(const WorkloadView& view, size_t i, const Options& o, Findings& out) {
  const Workload& w = *view.workload;
  const Container& c = w.containers[i];
  const kube::Handler& hook = *c.pre_stop;
  kube::Mark at = c.marks.at("lifecycle.preStop");
  auto program = needed_program(hook);
  auto why = shell_less_image(c.image);
  int64_t wanted = wanted_pre_stop_seconds(o);
  PreStopDelay delay = pre_stop_delay(hook);
  std::optional<double> seconds = delay_seconds(delay);
  if (program && why) {
    out.push_back(make_finding(
        id::kPreStopBinaryMissing, w, &c, hook.marks.at("command"),
        fmt::format("preStop runs '{}' but image {} has none ({}): the hook fails at once and "
                    "SIGTERM follows with no delay",
                    *program, c.image, *why),
        pre_stop_fix(c, wanted, o)));
    // The grace period is checked against the delay the hook is meant to give.
    return {seconds.value_or(0), seconds.has_value(), false};
  }
  if (hook.kind == kube::HandlerKind::sleep && hook.sleep_seconds >= w.grace_seconds()) {
    out.push_back(make_finding(
        id::kSleepNotBelowGrace, w, &c, hook.marks.at("seconds"),
        fmt::format("preStop sleep {}s is not below terminationGracePeriodSeconds {}: the API "
                    "server rejects it",
                    hook.sleep_seconds, w.grace_seconds()),
        fmt::format("set terminationGracePeriodSeconds above {}", hook.sleep_seconds)));
  }
  if (!view.serving[i]) {
    return {seconds.value_or(0), seconds.has_value(), seconds.has_value()};
  }
  if (!seconds) {
    out.push_back(make_finding(
        id::kPreStopUnknownDelay, w, &c, at,
        fmt::format("preStop runs {}; its duration is unknown: it must keep the container "
                    "serving for at least {} (--propagation)",
                    delay.how, format_duration(o.propagation)),
        "make sure the hook waits; or add a native sleep before it"));
    return {0, false, false};
  }
  if (*seconds < to_seconds(o.propagation)) {
    out.push_back(make_finding(
        id::kPreStopTooShort, w, &c, at,
        fmt::format("preStop {} is shorter than the {} endpoint propagation (--propagation): "
                    "routers that update later still send connections after SIGTERM",
                    delay.how, format_duration(o.propagation)),
        pre_stop_fix(c, wanted, o)));
  }
  return {*seconds, true};
}

void check_missing(const WorkloadView& view, size_t i, const Options& o, Findings& out) {
  const Workload& w = *view.workload;
  const Container& c = w.containers[i];
  if (runs_zerodrop(c)) {
    return;  // `zerodrop run` keeps accepting through the propagation delay by itself
  }
  out.push_back(make_finding(
      id::kPreStopMissing, w, &c, c.marks.self,
      fmt::format("container '{}' takes traffic from {} but has no preStop delay: SIGTERM "
                  "arrives while routers still send it connections for up to {} "
                  "(--propagation)",
                  c.name, service_names(view), format_duration(o.propagation)),
      pre_stop_fix(c, wanted_pre_stop_seconds(o), o)));
}

// The hooks' delays: main containers stop first (preStop, then drain), native sidecars only
// after every main container has exited, so their hooks add up with the main ones.
struct Phases {
  double main = 0;
  double sidecar = 0;
};

void check_grace(const WorkloadView& view, Phases hooks, const Options& o, Findings& out) {
  const Workload& w = *view.workload;
  Drain drain = drain_of(w, o);
  double margin = to_seconds(o.margin);
  double pre_stop = hooks.main + hooks.sidecar;
  double needed = pre_stop + drain.seconds + margin;
  int64_t grace = w.grace_seconds();
  if (static_cast<double>(grace) >= needed) {
    return;
  }
  kube::Mark at = w.marks.has("pod.terminationGracePeriodSeconds")
                      ? w.marks.at("pod.terminationGracePeriodSeconds")
                      : w.marks.at("pod.spec");
  std::string sidecar_phase =
      hooks.sidecar > 0
          ? fmt::format("sidecar preStop {}s (after the main containers) + ", hooks.sidecar)
          : "";
  Finding f = make_finding(
      id::kGraceTooShort, w, nullptr, at,
      fmt::format("terminationGracePeriodSeconds {}{} is below preStop {}s + drain {}s ({}) + "
                  "{}margin {}s = {}s: SIGKILL at {}s cuts the drain",
                  grace, w.termination_grace_period_seconds ? "" : " (default)", hooks.main,
                  drain.seconds, drain.source, sidecar_phase, margin, needed, grace),
      fmt::format("set terminationGracePeriodSeconds: {}",
                  wanted_grace_seconds(pre_stop, drain.seconds, o)));
  // The hook alone reaching the grace period is certain; the drain part is an estimate.
  if (pre_stop + margin > static_cast<double>(grace)) {
    f.severity = Severity::error;
  }
  out.push_back(std::move(f));
}

}  // namespace

Drain drain_of(const Workload& w, const Options& o) {
  for (const kube::Labels* notes : {&w.meta.annotations, &w.pod_annotations}) {
    if (auto it = notes->find(kDrainAnnotation); it != notes->end()) {
      Duration d = parse_duration(it->second, fmt::format("annotation {}", kDrainAnnotation));
      return {to_seconds(d), fmt::format("annotation {}", kDrainAnnotation)};
    }
  }
  return {to_seconds(o.drain), "--drain-seconds"};
}

int64_t wanted_pre_stop_seconds(const Options& o) {
  return static_cast<int64_t>(std::ceil(to_seconds(o.propagation)));
}

int64_t wanted_grace_seconds(double pre_stop, double drain, const Options& o) {
  return static_cast<int64_t>(std::ceil(pre_stop + drain + to_seconds(o.margin)));
}

Findings check_termination(const WorkloadView& view, const Options& o) {
  Findings out;
  const Workload& w = *view.workload;
  Phases hooks;
  double serving_through = 0;  // a working main hook's delay: sidecars keep serving through it
  bool any_hook = false;
  // Main containers come before native sidecars in w.containers (the reader's order).
  for (size_t i = 0; i < w.containers.size(); ++i) {
    const Container& c = w.containers[i];
    if (c.pre_stop) {
      any_hook = true;
      HookCheck hook = check_hook(view, i, o, out);
      double& phase = c.sidecar ? hooks.sidecar : hooks.main;
      phase = std::max(phase, hook.delay);
      if (!c.sidecar && hook.works) {
        serving_through = std::max(serving_through, hook.delay);
      }
    } else if (view.serving[i] && !(c.sidecar && serving_through >= to_seconds(o.propagation))) {
      check_missing(view, i, o, out);
    }
  }
  // A grace period of 0 written on a workload no Service routes to is deliberate: no request
  // can be cut.
  bool deliberate_zero = w.termination_grace_period_seconds == 0 && !view.takes_traffic();
  if (view.takes_traffic() || (any_hook && !deliberate_zero)) {
    try {
      check_grace(view, hooks, o, out);
    } catch (const Error& e) {
      out.push_back(make_finding(
          id::kInvalidManifest, w, nullptr, w.marks.at("pod.metadata.annotations"), e.what(),
          "write the drain time as seconds (\"20\") or a duration (\"20s\")"));
    }
  }
  return out;
}

}  // namespace zerodrop::audit
