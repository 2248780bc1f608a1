#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/duration.h"
#include "base/enum_names.h"
#include "base/error.h"
#include "base/int_or_percent.h"
#include "sim/control_plane.h"
#include "sim/dataplane.h"
#include "sim/traffic.h"

namespace zerodrop::sim {
namespace {

constexpr uint64_t kSampleSalt = 0x5A3B1E5ULL;

double run_end(const Options& o, const ControlPlane& control) {
  if (o.duration > 0) {
    return o.duration;
  }
  double last_exit = 0;
  for (const PodTimeline& p : control.pods) {
    if (p.exit != kNever) {
      last_exit = std::max(last_exit, p.exit);
    }
  }
  // IPVS with conn_reuse_mode 0 routes up to a TIME_WAIT late: the tail outlasts it.
  double lag = o.dataplane == Dataplane::ipvs && o.ipvs_conn_reuse_mode == 0 ? kIpvsTimeWait : 0;
  return std::max(control.rollout_end + o.tail + lag, last_exit + 1);
}

// Requests beyond what the serving pods can take time out (pod_capacity > 0 only).
void account_capacity(const Options& o, const ControlPlane& control, Tally& tally) {
  if (o.pod_capacity <= 0) {
    return;
  }
  for (size_t b = 0; b < tally.buckets(); ++b) {
    double mid = (b + 0.5) * tally.width();
    int serving = 0;
    for (const PodTimeline& p : control.pods) {
      serving += p.serving_from <= mid && mid < p.refuse_from ? 1 : 0;
    }
    double excess = o.rate - serving * o.pod_capacity;
    tally.add_window(b * tally.width(), (b + 1) * tally.width(), std::max(0.0, excess),
                     record::Hole::capacity_dip, record::Outcome::timeout);
  }
}

void describe(const Options& o, Result& result) {
  record::Scenario& typed = result.record.scenario;
  typed = o.scenario;
  typed.replicas = o.replicas;
  typed.prestop = record::PreStop{o.prestop > 0 ? fmt::format("sleep:{}", o.prestop) : "none",
                                  from_seconds(o.prestop)};
  typed.grace = from_seconds(o.grace);
  typed.max_surge = o.max_surge;
  typed.max_unavailable = o.max_unavailable;
  typed.readiness = o.readiness == Readiness::probed
                        ? record::Readiness{record::ProbeKind::http, "/ready"}
                        : record::Readiness{record::ProbeKind::tcp, ""};
  auto& s = typed.extra;
  s["profile"] = o.profile.name;
  s["dataplane"] = std::string(to_string(o.dataplane));
  s["nodes"] = std::to_string(o.nodes);
  s["routers"] = std::to_string(result.routers);
  s["rate"] = fmt::format("{}", o.rate);
  s["app"] = std::string(to_string(o.app));
  s["keepalive"] = o.keepalive == Keepalive::on ? "on" : "off";
  if (o.protocol != Protocol::http1) {
    s["protocol"] = std::string(to_string(o.protocol));
    s["goaway"] = std::string(kGoawayNames[static_cast<size_t>(o.goaway)]);
  }
  if (o.sidecar.order != kube::SidecarOrder::none) {
    s["sidecar"] = o.sidecar.order == kube::SidecarOrder::plain ? "plain" : "native";
  }
  s["seed"] = std::to_string(o.seed);
  s["propagation_p50_s"] = fmt::format("{:.3f}", result.propagation.p50);
  s["propagation_p90_s"] = fmt::format("{:.3f}", result.propagation.p90);
  s["propagation_p99_s"] = fmt::format("{:.3f}", result.propagation.p99);
  s["propagation_max_s"] = fmt::format("{:.3f}", result.propagation.max);
  s["propagation_samples"] = std::to_string(result.propagation.samples);
  s["rollout_s"] = fmt::format("{:.3f}", result.rollout_seconds);
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    if (result.expected[h] > 0) {
      s[fmt::format("expected.{}", record::kHoleIds[h])] =
          fmt::format("{:.2f}", result.expected[h]);
    }
  }
}

}  // namespace

std::string_view to_string(App app) {
  return kAppNames[static_cast<size_t>(app)];
}

App app_from_string(std::string_view text, std::string_view what) {
  if (auto app = enum_from_name<App>(kAppNames, text)) {
    return *app;
  }
  throw Error(
      fmt::format("{}: unknown app '{}' (naive, close-listener, graceful, linger)", what, text));
}

std::string_view to_string(Protocol protocol) {
  return kProtocolNames[static_cast<size_t>(protocol)];
}

Protocol protocol_from_string(std::string_view text, std::string_view what) {
  if (auto protocol = enum_from_name<Protocol>(kProtocolNames, text)) {
    return *protocol;
  }
  throw Error(fmt::format("{}: unknown protocol '{}' (http1, h2, grpc)", what, text));
}

LivenessAtShutdown liveness_at_shutdown_from_string(std::string_view text, std::string_view what) {
  if (auto value = enum_from_name<LivenessAtShutdown>(kLivenessAtShutdownNames, text)) {
    return *value;
  }
  throw Error(fmt::format("{}: expected stops or probes, got '{}'", what, text));
}

Goaway goaway_from_string(std::string_view text, std::string_view what) {
  if (auto goaway = enum_from_name<Goaway>(kGoawayNames, text)) {
    return *goaway;
  }
  throw Error(fmt::format("{}: expected graceful or abrupt, got '{}'", what, text));
}

double proxy_sync_loss_of(Dataplane dataplane) {
  return dataplane == Dataplane::nftables ? kNftablesSyncLoss : 0.0;
}

double ipvs_reuse_lag(double connects_per_second) {
  if (connects_per_second <= 0) {
    return 0;
  }
  double cycle = kEphemeralPorts / connects_per_second;
  return cycle < kIpvsTimeWait ? cycle : 0;
}

void validate(const Options& o) {
  auto need = [](bool ok, const char* message) {
    if (!ok) {
      throw Error(message);
    }
  };
  need(o.nodes >= 1 && o.nodes <= 100'000, "--nodes: expected 1 to 100000");
  need(o.replicas >= 1 && o.replicas <= 100'000, "--replicas: expected 1 to 100000");
  need(o.rate >= 0 && o.rate <= 1e8, "--rate: expected 0 to 100000000 requests per second");
  need(o.grace >= 0 && o.prestop >= 0, "--grace and --prestop must not be negative");
  need(o.bucket >= 0.001, "--bucket: expected at least 1ms");
  need(o.readiness_period >= 0.001, "--readiness-period: expected at least 1ms");
  need(o.duration <= 86'400, "--duration: at most 24h of virtual time");
  need(o.protocol == Protocol::http1 || o.keepalive == Keepalive::on,
       "--no-keepalive: HTTP/2 and gRPC clients keep their connections (--protocol http1)");
  need(o.ipvs_conn_reuse_mode == 0 || o.ipvs_conn_reuse_mode == 1,
       "--ipvs-conn-reuse-mode: expected 0 or 1");
  need(!o.min_sync_period || *o.min_sync_period >= 0,
       "--min-sync-period: expected a duration of 0 or more");
  need(o.grpc_backoff > 0, "--grpc-backoff: expected a duration above 0");
  need(!o.liveness
           || (o.liveness->period > 0 && o.liveness->failures >= 1 && o.liveness->timeout >= 0),
       "--liveness: expected a period above 0, at least 1 failure and a timeout of 0 or more");
  need(!o.proxy_sync_loss || (*o.proxy_sync_loss >= 0 && *o.proxy_sync_loss <= 1),
       "--proxy-sync-loss: expected a probability from 0 to 1");
  need(o.profile.proxy.min_sync_period > 0 || o.profile.proxy.sync_base > 0,
       "profile: kubeProxy.minSyncPeriod or kubeProxy.syncBase must be above 0");
  need(o.profile.control.max_endpoints_per_slice >= 1,
       "profile: control.maxEndpointsPerSlice must be at least 1");
}

Result simulate(const Options& options) {
  validate(options);
  Result result;
  // Stage 1: the rollout, kubelets and the EndpointSlice controller, event by event.
  Random random(options.seed);
  ControlPlane control = simulate_control_plane(options, random);
  result.end = run_end(options, control);
  result.rollout_seconds = control.rollout_end - control.rollout_start;
  // Stage 2: every router's apply times, and the traffic each one routed.
  Routers routers(options, control, options.seed ^ kRouterSalt);
  result.routers = routers.count();
  Traffic traffic = account_traffic(options, control, routers, result.end);
  account_capacity(options, control, traffic.tally);
  result.events = control.events + traffic.events;
  // Stage 3: draw the counts and assemble the run record.
  Random sampler(options.seed ^ kSampleSalt);
  result.record.engine = "sim";
  result.record.buckets = traffic.tally.sample(sampler, options.rate);
  result.record.end = record::Micros(static_cast<int64_t>(std::llround(result.end * 1e6)));
  for (const record::TimeBucket& b : result.record.buckets) {
    result.requests += b.requests;
    for (size_t h = 0; h < record::kHoleCount; ++h) {
      result.failures[h] += b.failures_by_hole[h];
      result.failed += b.failures_by_hole[h];
    }
  }
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    result.expected[h] = traffic.tally.expected(static_cast<record::Hole>(h));
  }
  const LatencyHistogram& hist = traffic.propagation;
  result.propagation = {hist.count(), to_seconds(hist.quantile(0.5)),
                        to_seconds(hist.quantile(0.9)), to_seconds(hist.quantile(0.99)),
                        to_seconds(hist.max())};
  auto& events = result.record.events;
  events.reserve(control.record.size() + traffic.router_events.size());
  for (auto* list : {&control.record, &traffic.router_events}) {
    for (record::Event& e : *list) {
      if (e.t <= result.record.end) {
        events.push_back(std::move(e));
      }
    }
    std::vector<record::Event>().swap(*list);  // freed before the sort's buffer is taken
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const record::Event& a, const record::Event& b) { return a.t < b.t; });
  describe(options, result);
  return result;
}

}  // namespace zerodrop::sim
