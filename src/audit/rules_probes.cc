// readiness-lies and liveness-kills-drain rules.
#include <fmt/format.h>

#include "audit/readiness_fix.h"
#include "audit/rule.h"
#include "audit/rules.h"
#include "kube/kubelet.h"

namespace zerodrop::audit {
namespace {

using kube::Container;
using kube::Handler;
using kube::HandlerKind;
using kube::Probe;
using kube::Workload;
namespace id = rule_id;

// A port as the probe names it, resolved: "8080" or "'http' (8080)".
std::string port_text(const Container& c, const kube::PortRef& port) {
  auto number = c.resolve(port);
  if (!port.named()) {
    return std::to_string(port.number);
  }
  return number ? fmt::format("'{}' ({})", port.name, *number) : fmt::format("'{}'", port.name);
}

bool same_port(const Container& c, const kube::PortRef& a, const kube::PortRef& b) {
  auto x = c.resolve(a);
  auto y = c.resolve(b);
  if (x && y) {
    return *x == *y;
  }
  return a.named() && b.named() && a.name == b.name;  // unknown names: equal only if same
}

std::string_view normal_path(const std::string& path) {
  return path.empty() ? std::string_view("/") : std::string_view(path);
}

// Whether two probes check the same thing: kind, port (named ports resolved), path with its
// query string, argv. Periods and thresholds are not part of the handler.
bool same_handler(const Container& c, const Handler& a, const Handler& b) {
  if (a.kind != b.kind) {
    return false;
  }
  switch (a.kind) {
    case HandlerKind::http_get:
      return same_port(c, a.port, b.port) && normal_path(a.path) == normal_path(b.path);
    case HandlerKind::tcp_socket:
      return same_port(c, a.port, b.port);
    case HandlerKind::grpc:
      return same_port(c, a.port, b.port) && a.path == b.path;
    case HandlerKind::exec:
      return a.command == b.command;
    case HandlerKind::sleep:
      return false;
  }
  return false;
}

std::string describe(const Container& c, const Handler& h) {
  switch (h.kind) {
    case HandlerKind::http_get:
      return fmt::format("GET {} on port {}", normal_path(h.path), port_text(c, h.port));
    case HandlerKind::tcp_socket:
      return fmt::format("connect to port {}", port_text(c, h.port));
    case HandlerKind::grpc:
      return fmt::format("gRPC health check on port {}", port_text(c, h.port));
    case HandlerKind::exec:
      return fmt::format("run '{}'", fmt::join(h.command, " "));
    case HandlerKind::sleep:
      return "sleep";
  }
  return "";
}

// The fix text: the proposed probe, and whether it is proven or left for the user to complete.
std::string readiness_fix(const ReadinessProposal& p) {
  if (p.handler) {
    return fmt::format("add readinessProbe: {} ({})", p.text, p.reason);
  }
  return fmt::format(
      "add a readinessProbe such as {}, filling in the <…> ({}); it must answer "
      "only when the app can serve",
      p.text, p.reason);
}

void check_readiness(const WorkloadView& view, size_t i, Findings& out) {
  const Workload& w = *view.workload;
  const Container& c = w.containers[i];
  if (!c.readiness_probe) {
    out.push_back(make_finding(
        id::kReadinessMissing, w, &c, c.marks.self,
        fmt::format("container '{}' takes traffic but has no readiness probe: new pods are routed "
                    "as soon as they start",
                    c.name),
        readiness_fix(propose_readiness(view, i))));
    return;
  }
  const Handler& h = c.readiness_probe->handler;
  if (h.kind != HandlerKind::tcp_socket) {
    return;
  }
  auto port = c.resolve(h.port);
  std::string evidence = port ? view.http_evidence(i, *port) : "";
  if (evidence.empty()) {
    return;
  }
  out.push_back(make_finding(
      id::kReadinessTcpOnHttp, w, &c, c.marks.at("readinessProbe"),
      fmt::format("readiness probe only connects to port {}, which serves HTTP ({}): the pod is "
                  "routed as soon as the port listens, before the app can answer",
                  port_text(c, h.port), evidence),
      readiness_fix(propose_readiness(view, i, &h))));
}

void check_identical(const Workload& w, const Container& c, Findings& out) {
  const Probe& ready = *c.readiness_probe;
  const Probe& live = *c.liveness_probe;
  if (!same_handler(c, ready.handler, live.handler)) {
    return;
  }
  if (ready.handler.kind == HandlerKind::tcp_socket) {
    return;  // a process cannot fail a connect on purpose without closing the port to both
  }
  std::string note;
  if (ready.failure_threshold != live.failure_threshold
      || ready.period_seconds != live.period_seconds) {
    note = fmt::format(
        " (different thresholds, {}x{}s vs {}x{}s, do not make them different "
        "checks)",
        live.failure_threshold, live.period_seconds, ready.failure_threshold, ready.period_seconds);
  }
  out.push_back(make_finding(
      id::kProbesIdentical, w, &c, c.marks.at("livenessProbe"),
      fmt::format("liveness and readiness both {}{}: when the app fails readiness to shed load "
                  "or drain, liveness fails too and the kubelet restarts it",
                  describe(c, live.handler), note),
      "point liveness at a check of the process only (e.g. /livez) that stays up while the app "
      "drains or is overloaded"));
}

void check_liveness(const Workload& w, const Container& c, Findings& out) {
  const Probe& live = *c.liveness_probe;
  int64_t window = liveness_kill_window(live);
  if (window >= kLivenessMinWindowSeconds) {
    return;
  }
  kube::Mark at = live.marks.has("failureThreshold") ? live.marks.at("failureThreshold")
                  : live.marks.has("periodSeconds")  ? live.marks.at("periodSeconds")
                                                     : live.marks.self;
  out.push_back(make_finding(
      id::kLivenessAggressive, w, &c, at,
      fmt::format("liveness kills the container after a {}s stall ({} failures {}s apart, "
                  "timeout {}s): a load spike or GC pause that long restarts a healthy pod",
                  window, live.failure_threshold, live.period_seconds, live.timeout_seconds),
      fmt::format("allow at least {}s: e.g. periodSeconds: 10, failureThreshold: 3, "
                  "timeoutSeconds: 2",
                  kLivenessMinWindowSeconds)));
}

}  // namespace

int64_t liveness_kill_window(const Probe& probe) {
  using std::chrono::seconds;
  Duration window = kube::liveness_kill_window(
      seconds(probe.period_seconds), probe.failure_threshold, seconds(probe.timeout_seconds));
  return std::chrono::duration_cast<seconds>(window).count();
}

Findings check_probes(const WorkloadView& view, const Options&) {
  Findings out;
  const Workload& w = *view.workload;
  for (size_t i = 0; i < w.containers.size(); ++i) {
    const Container& c = w.containers[i];
    if (view.serving[i]) {
      check_readiness(view, i, out);
      if (c.readiness_probe && c.liveness_probe) {
        check_identical(w, c, out);
      }
    }
    if (c.liveness_probe) {
      check_liveness(w, c, out);
    }
  }
  return out;
}

}  // namespace zerodrop::audit
