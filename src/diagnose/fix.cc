#include "diagnose/fix.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "diagnose/facts.h"
#include "diagnose/h2_rules.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;

constexpr int kNativeSleepMinor = 30;  // preStop.sleep is beta (on by default) from v1.30

// The scenario's preStop delay and grace period, when the run knew them.
std::optional<Micros> prestop_delay(const FixInputs& in) {
  if (!in.scenario || !in.scenario->prestop || !in.scenario->prestop->delay) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<Micros>(*in.scenario->prestop->delay);
}

std::optional<Micros> grace_period(const FixInputs& in) {
  if (!in.scenario || !in.scenario->grace) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<Micros>(*in.scenario->grace);
}

// The container port for probe snippets; a named port "http" when the run did not fix one.
std::string port_text(const FixInputs& in) {
  if (in.scenario && in.scenario->port && *in.scenario->port != 0) {
    return std::to_string(*in.scenario->port);
  }
  return "http";
}

Micros margin(const FixInputs& in) {
  return in.options.margin;
}

// "2.02 s", "1 s": how the fixes print measured and configured times.
std::string secs(Micros t) {
  double s = std::chrono::duration<double>(t).count();
  return s == std::floor(s) ? fmt::format("{:.0f} s", s) : duration_text(t);
}

// The preStop delay to recommend: measured propagation + margin, never below the current one.
std::optional<int> prestop_seconds(const FixInputs& in) {
  if (in.propagation.samples.empty()) {
    return std::nullopt;
  }
  int needed = whole_seconds_up(in.propagation.max + margin(in));
  auto current = prestop_delay(in);
  return current ? std::max(needed, whole_seconds_up(*current)) : needed;
}

// terminationGracePeriodSeconds: preStop + longest drain + margin, rounded up.
int grace_needed(const FixInputs& in, int prestop) {
  Micros drain = in.longest_drain.value_or(Micros{0});
  return whole_seconds_up(std::chrono::seconds(prestop) + drain + margin(in));
}

// What to recommend: the need, or the current grace when that is already longer.
int grace_seconds(const FixInputs& in, int prestop) {
  int needed = grace_needed(in, prestop);
  auto current = grace_period(in);
  return current ? std::max(needed, whole_seconds_up(*current)) : needed;
}

std::string grace_why(const FixInputs& in, int prestop, int grace) {
  std::string drain = in.longest_drain ? fmt::format("longest observed drain {} ({})",
                                                     secs(*in.longest_drain), in.drain_evidence)
                                       : std::string("no drain observed (0 s)");
  int needed = grace_needed(in, prestop);
  std::string line = fmt::format(
      "terminationGracePeriodSeconds ≥ preStop {} s + {} + margin {} "
      "= {} s, rounded up",
      prestop, drain, secs(margin(in)), needed);
  if (grace > needed) {
    line += fmt::format("; the current {} s already covers it", grace);
  }
  return line;
}

std::string prestop_snippet(const FixInputs& in, int prestop, int grace) {
  std::string hook =
      k8s_minor(in.options.k8s_version) >= kNativeSleepMinor
          ? fmt::format("        sleep:\n          seconds: {}\n", prestop)
          : fmt::format("        exec:\n          command: [\"sleep\", \"{}\"]\n", prestop);
  return fmt::format(
      "# Deployment spec.template.spec\n"
      "terminationGracePeriodSeconds: {}\n"
      "containers:\n"
      "  - name: {}\n"
      "    lifecycle:\n"
      "      preStop:\n"
      "{}",
      grace, in.options.container, hook);
}

std::string exec_warning(const FixInputs& in, int prestop) {
  if (k8s_minor(in.options.k8s_version) >= kNativeSleepMinor) {
    return {};
  }
  return fmt::format(
      "Kubernetes {} has no native preStop.sleep (beta from 1.30): the exec hook needs a `sleep` "
      "binary in the image, and distroless and scratch images have none: the hook fails and "
      "SIGTERM comes at once; copy a static sleeper in (`zerodrop sleep {}`).",
      in.options.k8s_version, prestop);
}

// preStop + grace: the fix for every hole that needs the pod alive until routers have updated.
Fix prestop_fix(const FixInputs& in) {
  Fix fix;
  auto prestop = prestop_seconds(in);
  if (!prestop) {
    fix.summary = "preStop sleep longer than the routers' propagation";
    fix.why =
        "no router update was recorded, so the propagation was not measured; estimate it "
        "with `zerodrop sim` and add a margin";
    return fix;
  }
  int grace = grace_seconds(in, *prestop);
  fix.summary =
      fmt::format("preStop sleep {} s, terminationGracePeriodSeconds {}", *prestop, grace);
  fix.why = fmt::format(
      "preStop ≥ longest observed propagation {} (of {} router updates) + margin "
      "{}, rounded up to {} s; {}",
      secs(in.propagation.max), in.propagation.samples.size(), secs(margin(in)), *prestop,
      grace_why(in, *prestop, grace));
  fix.snippet = prestop_snippet(in, *prestop, grace);
  fix.warning = exec_warning(in, *prestop);
  return fix;
}

Fix deregistration_fix(const FixInputs& in) {
  Fix fix = prestop_fix(in);
  fix.steps = {
      "Keep the listener open at SIGTERM: the preStop delay has already let routers update, so "
      "new connections have stopped arriving.",
      "Then drain: finish in-flight requests, close idle connections, exit."};
  return fix;
}

Fix no_drain_fix(const FixInputs& in) {
  Fix fix = prestop_fix(in);
  fix.steps = {"On SIGTERM do not exit: keep serving what arrives (routers may still be updating).",
               "Stop accepting, answer the remaining requests with `Connection: close`.",
               "Wait for every in-flight request to finish, with a deadline below "
               "terminationGracePeriodSeconds minus the preStop delay.",
               "Exit."};
  return fix;
}

Fix grace_fix(const FixInputs& in) {
  Fix fix;
  int prestop =
      prestop_seconds(in).value_or(whole_seconds_up(prestop_delay(in).value_or(Micros{0})));
  int grace = grace_seconds(in, prestop);
  fix.summary = fmt::format("terminationGracePeriodSeconds {}", grace);
  fix.why = grace_why(in, prestop, grace);
  fix.snippet =
      fmt::format("# Deployment spec.template.spec\nterminationGracePeriodSeconds: {}\n", grace);
  fix.steps = {
      "Bound the app's own drain deadline below terminationGracePeriodSeconds minus the "
      "preStop delay, so it exits before SIGKILL instead of being cut."};
  return fix;
}

Fix keepalive_fix(const FixInputs& in) {
  Fix fix = prestop_fix(in);
  fix.summary =
      "close keep-alive connections on shutdown (`Connection: close`, GOAWAY); " + fix.summary;
  fix.steps = {
      "Keep serving through the preStop delay: routers stop opening new connections meanwhile.",
      "From SIGTERM, answer every response with `Connection: close` (HTTP/2: send GOAWAY) so "
      "clients reconnect through the updated routers.",
      "Close idle keep-alive connections (after a short idle check, to avoid the idle-close "
      "race with a request already on the wire).",
      "Wait for in-flight requests, then exit before the grace period ends."};
  return fix;
}

Fix readiness_fix(const FixInputs& in) {
  Fix fix;
  std::optional<record::Readiness> probe;
  if (in.scenario) {
    probe = in.scenario->readiness;
  }
  bool http = probe && probe->kind == record::ProbeKind::http;
  std::string path = http ? probe->target : "/readyz";
  std::string port = port_text(in);
  if (http) {
    fix.summary = fmt::format("make readiness {} fail until the app can serve", path);
    fix.why = fmt::format(
        "the probe is already httpGet {}, but it answered 200 before the app "
        "could serve requests",
        path);
  } else {
    fix.summary = fmt::format("readiness httpGet {} instead of {}", path,
                              probe ? probe->text() : "the current probe");
    fix.why =
        "a TCP probe passes as soon as the port listens; only an HTTP probe that answers "
        "200 when the app can serve keeps new pods out until then";
  }
  fix.snippet = fmt::format(
      "# Deployment spec.template.spec.containers[]\n"
      "readinessProbe:\n"
      "  httpGet:\n"
      "    path: {}\n"
      "    port: {}\n"
      "  periodSeconds: 1\n"
      "  failureThreshold: 1\n",
      path, port);
  fix.steps = {
      fmt::format("Serve {} with 200 only once the app can answer real requests "
                  "(warm-up done), 503 before and from SIGTERM on.",
                  path)};
  return fix;
}

Fix capacity_fix(const FixInputs& in) {
  Fix fix;
  fix.summary = "maxUnavailable 0, maxSurge 1";
  std::string current;
  if (in.scenario && in.scenario->max_unavailable) {
    current = in.scenario->max_unavailable->to_string();
  }
  fix.why = fmt::format(
      "{} Ready replicas remained{}{}; with maxUnavailable 0 an old pod leaves "
      "only after its replacement is Ready",
      in.min_ready, in.replicas ? fmt::format(" of {}", *in.replicas) : std::string(),
      current.empty() ? std::string() : fmt::format(" (maxUnavailable {})", current));
  fix.snippet =
      "# Deployment spec\n"
      "strategy:\n"
      "  type: RollingUpdate\n"
      "  rollingUpdate:\n"
      "    maxUnavailable: 0\n"
      "    maxSurge: 1\n";
  return fix;
}

Fix liveness_fix(const FixInputs& in) {
  Fix fix;
  int prestop =
      prestop_seconds(in).value_or(whole_seconds_up(prestop_delay(in).value_or(Micros{0})));
  int grace = grace_seconds(in, prestop);
  int period = 10;
  int threshold = grace / period + 1;
  fix.summary = fmt::format("liveness failureThreshold {} × periodSeconds {} > grace {} s",
                            threshold, period, grace);
  fix.why =
      "a liveness probe that fails while the pod drains kills it mid-request; its failure "
      "window must outlast the grace period";
  fix.snippet = fmt::format(
      "# Deployment spec.template.spec.containers[]\n"
      "livenessProbe:\n"
      "  httpGet:\n"
      "    path: /healthz\n"
      "    port: {}\n"
      "  periodSeconds: {}\n"
      "  failureThreshold: {}\n",
      port_text(in), period, threshold);
  fix.steps = {
      "Keep the liveness endpoint answering 200 during shutdown; only readiness fails "
      "from SIGTERM on."};
  return fix;
}

}  // namespace

namespace {

// The schema change no running version notices: expand, migrate the code, contract later.
Fix schema_fix() {
  Fix fix;
  fix.summary = "expand/contract: change the schema in steps that every running version survives";
  fix.why =
      "during a rollout the old and the new version serve side by side against one database: a "
      "migration that drops or renames what the old one reads, or that the new one needs before "
      "it has run, fails one of them";
  fix.steps = {
      "Expand: add the new column or table (nullable, or with a default); drop and rename "
      "nothing. Run it before the rollout.",
      "Release code that writes both the old and the new column and still reads the old one.",
      "Backfill the new column from the old one (in batches), once no old version writes.",
      "Release code that reads the new column (it still writes both).",
      "Contract, in a later release: stop writing the old column, then drop it.",
      "Check each migration with `zerodrop audit migrations/` before it ships."};
  return fix;
}

Fix sync_loss_fix() {
  Fix fix;
  fix.summary =
      "retry a connect that failed before reaching any pod; no rollout setting closes this one";
  fix.why =
      "the node's proxy flushes and refills the chain a new connection must traverse at every "
      "endpoint change (kube-proxy's nftables and iptables modes alike), and a SYN that crosses "
      "the nat hook then gets no DNAT: it goes to no pod, so no request was sent and a retry is "
      "safe even for a non-idempotent method (docs/dataplane-sync.md)";
  fix.steps = {
      "Client side: retry a connect that timed out or was refused once, at once, before sending "
      "anything: the request never reached a pod. Keep connect timeouts short (a lost SYN waits "
      "for its retransmission, 1 s, and follows the same untranslated conntrack entry).",
      "Reuse connections (keep-alive): a lost connect costs only new connections, and a kept-alive "
      "one is not re-translated.",
      "Node side: a proxy that never flushes a chain a packet may be traversing (build the "
      "Service's new chain whole, then swap the one map element that points to it, delete the "
      "old chain later) does not lose (docs/dataplane-sync.md measures both)."};
  return fix;
}

Fix reload_fix() {
  Fix fix;
  fix.summary =
      "apply endpoint changes without reloading the ingress, or resend a request cut on a reused "
      "connection; no setting of the app closes this one";
  fix.why =
      "a reload (SIGHUP) starts new nginx workers and retires the old ones, which close their idle "
      "kept-alive client connections at once: a request the client sends on one as it closes is "
      "cut before nginx read it, so resending it is safe (docs/lab.md, \"A real ingress\")";
  fix.steps = {
      "Ingress side: a controller that applies endpoint changes without a reload (ingress-nginx's "
      "Lua balancer, which reloads only for configuration changes; HAProxy's runtime API) cuts "
      "nothing at a rollout; keep reloads for real configuration changes.",
      "Client side: resend once a request on a reused connection that closed or reset before any "
      "response byte (browsers, Go's net/http and gRPC do for idempotent methods).",
      "A longer keep-alive does not help: the old worker closes idle connections whatever their "
      "timeout."};
  return fix;
}

}  // namespace

int k8s_minor(const std::string& version) {
  static const std::regex pattern(R"(v?1\.(\d+)(\.\d+)?)");
  std::smatch m;
  if (!std::regex_match(version, m, pattern)) {
    throw Error(fmt::format("--k8s-version: expected a version like 1.30, got '{}'", version));
  }
  return std::stoi(m[1].str());
}

int whole_seconds_up(record::Micros t) {
  return static_cast<int>(std::ceil(std::chrono::duration<double>(t).count() - 1e-9));
}

namespace {

Fix fix_of(Hole hole, const FixInputs& in) {
  switch (hole) {
    case Hole::deregistration_race:
      return deregistration_fix(in);
    case Hole::no_drain:
      return no_drain_fix(in);
    case Hole::grace_overrun:
      return grace_fix(in);
    case Hole::keepalive_stale:
      return keepalive_fix(in);
    case Hole::readiness_lies:
      return readiness_fix(in);
    case Hole::capacity_dip:
      return capacity_fix(in);
    case Hole::liveness_kills_drain:
      return liveness_fix(in);
    case Hole::schema_race:
      return schema_fix();
    case Hole::proxy_sync_loss:
      return sync_loss_fix();
    case Hole::ingress_reload_reset:
      return reload_fix();
    case Hole::unexplained:
      break;
  }
  return Fix{.summary = "no rollout fix applies; read the failed requests and the pod logs"};
}

// The advice is written for SIGTERM; a workload stopped by another signal reads its own.
void name_stop_signal(std::string& text, const std::string& signal) {
  constexpr std::string_view kTerm = "SIGTERM";
  for (size_t at = text.find(kTerm); at != std::string::npos; at = text.find(kTerm, at)) {
    text.replace(at, kTerm.size(), signal);
    at += signal.size();
  }
}

}  // namespace

Fix fix_for(Hole hole, const FixInputs& in) {
  Fix fix = fix_of(hole, in);
  for (std::string& step : h2_fix_steps(hole, in.scenario)) {
    fix.steps.push_back(std::move(step));
  }
  for (std::string& step : fix.steps) {
    name_stop_signal(step, in.stop_signal);
  }
  name_stop_signal(fix.warning, in.stop_signal);
  return fix;
}

}  // namespace zerodrop::diagnose
