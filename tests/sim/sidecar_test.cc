// A mesh's sidecar proxy in the sim (docs/sim.md, "Sidecar meshes"; kube::sidecar_exit's
// arithmetic: tests/kube/sidecar_test.cc): the holes a plain sidecar opens when it stops before the
// app (connects refused from its exit while routers still send, requests in flight cut), none with
// a native sidecar, and what sim -f reads of it from a manifest (the proxy container, its drain,
// the Service's appProtocol).
#include "kube/sidecar.h"

#include <gtest/gtest.h>

#include "kube/loader.h"
#include "one_node.h"
#include "sim/control_plane.h"
#include "sim/simulator.h"
#include "sim/workload_options.h"

namespace zerodrop::sim {
namespace {

using kube::SidecarOrder;
using kube::SidecarProxy;
using record::Hole;
using std::chrono::seconds;

double sidecar_expected(const Result& r, Hole h) {
  return r.expected[static_cast<size_t>(h)];
}

// One old pod replaced by one new one, a graceful app behind a preStop sleep of 10 s, one router
// that applies each change 8 s after it: without a sidecar the app accepts through the whole
// propagation; a plain sidecar ends at 5 s, under it.
Options meshed(SidecarOrder order) {
  Options o = one_node(8, 1, 100, 1, 0);
  o.dataplane = Dataplane::iptables;
  o.readiness_period = 1;
  o.keepalive = Keepalive::off;
  o.app = App::graceful;
  o.prestop = 10;
  o.grace = 30;
  o.request_duration = Distribution::fixed(0.5);
  o.drain = Distribution::fixed(0.5);
  o.sidecar.order = order;
  return o;
}

TEST(Sidecar, APlainProxyStoppingFirstOpensTheRace) {
  EXPECT_EQ(sidecar_expected(simulate(meshed(SidecarOrder::none)), Hole::deregistration_race), 0.0);
  EXPECT_EQ(sidecar_expected(simulate(meshed(SidecarOrder::native)), Hole::deregistration_race),
            0.0);
  Options o = meshed(SidecarOrder::plain);
  Random random(o.seed);
  ControlPlane control = simulate_control_plane(o, random);
  auto [old_pod, new_pod] = old_and_new(control);
  ASSERT_TRUE(old_pod && new_pod);
  double proxy = old_pod->deletion + 5;  // the lab's kubelet acts at the deletion
  EXPECT_DOUBLE_EQ(old_pod->proxy_exit, proxy);
  EXPECT_DOUBLE_EQ(old_pod->refuse_from, proxy);
  double stop = control.writes[static_cast<size_t>(old_pod->term_write)].commit + 8;
  double joined = control.writes[static_cast<size_t>(new_pod->ready_write)].commit + 8;
  // The router learns of the new pod's Ready 8 s after it, when the old pod's proxy is gone.
  ASSERT_LT(proxy, joined);
  ASSERT_LE(joined, stop);
  Result r = simulate(o);
  // From the proxy's exit every new connection meets no listener until the new pod joins the
  // router's view, half of them from then to the router's stop.
  double refused = o.rate * ((joined - proxy) + (stop - joined) / 2);
  EXPECT_NEAR(sidecar_expected(r, Hole::deregistration_race), refused, 1e-6 * refused);
  // The requests in flight through it at its exit, the old pod alone in the view: the rate
  // times a 0.5 s request.
  EXPECT_NEAR(sidecar_expected(r, Hole::no_drain), o.rate * 0.5, 1e-6);
}

kube::Workload workload_of(const std::vector<kube::Object>& objects) {
  std::optional<kube::Workload> w = kube::first_workload_of(objects);
  EXPECT_TRUE(w.has_value());
  return w.value_or(kube::Workload{});
}

constexpr const char* kMeshed = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations:
        proxy.istio.io/config: |
          terminationDrainDuration: 20s
    spec:
      initContainers:
        - name: istio-proxy
          image: docker.io/istio/proxyv2:1.24.0
          restartPolicy: Always
          env:
            - {name: EXIT_ON_ZERO_ACTIVE_CONNECTIONS, value: "true"}
      containers:
        - name: app
          image: web:1
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
    - {port: 80, targetPort: 8080, appProtocol: kubernetes.io/h2c}
)";

TEST(SidecarManifest, ReadsTheProxyItsDrainAndTheServiceProtocol) {
  std::vector<kube::Object> objects = kube::load_text(kMeshed, "meshed.yaml").objects;
  kube::Workload w = workload_of(objects);
  Options o;
  apply_workload(o, w, "");
  EXPECT_EQ(o.scenario.container, "app");
  EXPECT_EQ(o.sidecar.order, SidecarOrder::native);
  EXPECT_EQ(o.sidecar.termination_drain, seconds(20));
  EXPECT_TRUE(o.sidecar.exit_on_zero_active_connections);
  EXPECT_EQ(service_protocol(objects, w), Protocol::h2);
  // The same proxy as a regular container is a plain sidecar; grpc by appProtocol.
  std::string plain = kMeshed;
  plain.replace(plain.find("      initContainers:\n"), 22, "      containers:\n");
  plain.replace(plain.find("          restartPolicy: Always\n"), 32, "");
  plain.replace(plain.find("      containers:\n        - name: app"), 18, "");
  plain.replace(plain.find("kubernetes.io/h2c"), 17, "grpc");
  objects = kube::load_text(plain, "plain.yaml").objects;
  w = workload_of(objects);
  apply_workload(o, w, "app");
  EXPECT_EQ(o.sidecar.order, SidecarOrder::plain);
  EXPECT_EQ(service_protocol(objects, w), Protocol::grpc);
}

}  // namespace
}  // namespace zerodrop::sim
