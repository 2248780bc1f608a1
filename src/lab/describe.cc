// The lab's run as the record and the diagnosis describe it: the scenario's settings, from the
// options the run was given (lab.h's describe()).
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/duration.h"
#include "base/subprocess.h"
#include "lab/data/migration.h"
#include "lab/lab.h"
#include "lab/pods/container_runtime.h"
#include "lab/routers/ingress.h"

namespace zerodrop::lab {

namespace {

// The preStop and readiness as the diagnosis reads them; the lab knows a sleep's delay only.
record::PreStop prestop_of(const HookSpec& hook) {
  std::optional<Duration> delay;
  if (hook.kind == HookSpec::Kind::none || hook.kind == HookSpec::Kind::sleep) {
    delay = hook.sleep;  // 0 without a hook
  }
  return {hook.describe(), delay};
}

record::Readiness readiness_of(const ProbeSpec& probe) {
  switch (probe.kind) {
    case ProbeSpec::Kind::http:
      return {record::ProbeKind::http, probe.path};
    case ProbeSpec::Kind::tcp:
      return {record::ProbeKind::tcp, ""};
    case ProbeSpec::Kind::exec:
      return record::parse_readiness(probe.describe(), "--readiness");
    case ProbeSpec::Kind::grpc:
      return {record::ProbeKind::grpc, probe.service};
    case ProbeSpec::Kind::none:
      break;
  }
  return {record::ProbeKind::none, ""};
}

}  // namespace

record::Scenario describe(const Options& o) {
  record::Scenario s = o.scenario;
  s.replicas = o.replicas;
  s.max_surge = o.max_surge;
  s.max_unavailable = o.max_unavailable;
  s.prestop = prestop_of(o.pod.prestop);
  s.grace = o.pod.grace;
  s.readiness = readiness_of(o.pod.readiness);
  s.port = o.pod.port;  // 0: a free port per pod
  std::string command;
  for (const std::string& a : o.pod.command) {
    command += (command.empty() ? "" : " ") + a;
  }
  std::map<std::string, std::string>& x = s.extra;
  x["command"] = command;
  x["min_ready"] = format_duration(o.min_ready);
  x["stop_signal"] = "SIG" + signal_name(o.pod.stop_signal);
  if (o.pod.container) {
    x["pod_isolation"] = fmt::format("a {} container", to_string(o.pod.container->runtime_kind));
    x["image"] = o.pod.container->image;
  } else if (o.isolation) {
    x["pod_isolation"] = describe(*o.isolation);
  }
  x["liveness"] = o.pod.liveness.describe();
  x["nodes"] = std::to_string(o.nodes);
  x["propagation"] = o.propagation.to_string();
  x["seed"] = std::to_string(o.seed);
  x["dataplane"] = to_string(o.dataplane);
  if (in_kernel(o.dataplane)) {
    x["dataplane_sync"] = to_string(o.dataplane_sync);
    x["dataplane_churn"] = std::to_string(o.dataplane_churn);
  }
  x["retries"] = std::to_string(o.retries);
  if (o.ingress != Ingress::none) {
    x["ingress"] = to_string(o.ingress);
  }
  x["action"] = o.action == Action::restart      ? "restart"
                : o.action == Action::scale_down ? fmt::format("scale-down {}", o.scale_to)
                : o.action == Action::none       ? "none"
                                                 : "delete-pod";
  x["rate"] = fmt::format("{}", o.load.rate);
  x["keepalive"] = o.load.keepalive == load::Keepalive::on ? "on" : "off";
  if (o.load.keepalive == load::Keepalive::on) {
    x["fresh_share"] = fmt::format("{}%", o.load.fresh_share * 100);
  }
  if (o.load.client_retry == load::ClientRetry::once) {
    x["client_retry"] = "once";
  }
  x["connections"] = std::to_string(o.load.connections);
  if (o.load.protocol != load::Protocol::http1) {
    x["protocol"] = o.load.protocol == load::Protocol::grpc ? "grpc" : "h2";
    x["streams"] = std::to_string(o.load.streams);
  }
  if (o.load.protocol == load::Protocol::grpc) {
    x["grpc"] = o.load.grpc_method;
  }
  x["method"] = o.method;
  x["path"] = o.path;
  x["warmup"] = format_duration(o.warmup);
  x["tail"] = format_duration(o.tail);
  if (o.to) {
    x["version_a"] = command;
    x["version_b"] = fmt::format("{}", fmt::join(o.to->command, " "));
  }
  if (o.database == DatabaseKind::postgres) {
    x["database"] = "postgres";
  }
  if (o.migrate) {
    x["migrate"] = fmt::format("{}", fmt::join(o.migrate->command, " "));
    x["migrate_at"] = to_string(o.migrate->at);
  }
  return s;
}

}  // namespace zerodrop::lab
