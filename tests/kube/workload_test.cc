#include "kube/workload.h"

#include <gtest/gtest.h>

#include "kube/loader.h"

namespace zerodrop::kube {
namespace {

constexpr const char* kDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
  annotations:
    zerodrop.dev/drain-seconds: "20"
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, tier: front}
    spec:
      containers:
        - name: app
          image: gcr.io/distroless/static:nonroot
          ports:
            - name: http
              containerPort: 8080
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "5"]
          readinessProbe:
            httpGet: {path: /ready, port: http}
            periodSeconds: 2
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
            failureThreshold: 6
)";

Workload only_workload(std::string_view text) {
  Loaded loaded = load_text(text, "w.yaml");
  EXPECT_TRUE(loaded.problems.empty()) << loaded.problems.front().str();
  EXPECT_EQ(loaded.objects.size(), 1u);
  return std::get<Workload>(loaded.objects.at(0));
}

TEST(Workload, ReadsDeploymentWithKubernetesDefaults) {
  Workload w = only_workload(kDeployment);
  EXPECT_EQ(w.kind, WorkloadKind::deployment);
  EXPECT_EQ(w.meta.name, "web");
  EXPECT_EQ(w.meta.namespace_name, "shop");
  EXPECT_EQ(w.meta.annotations.at("zerodrop.dev/drain-seconds"), "20");
  EXPECT_FALSE(w.replicas.has_value()) << "nil replicas must stay nil, not 1";
  EXPECT_EQ(w.strategy.type, "RollingUpdate");
  EXPECT_EQ(w.strategy.max_surge.value().to_string(), "25%");
  EXPECT_EQ(w.strategy.max_unavailable.value().to_string(), "25%");
  EXPECT_FALSE(w.termination_grace_period_seconds.has_value());
  EXPECT_EQ(w.grace_seconds(), 30);
  EXPECT_EQ(w.pod_labels.at("tier"), "front");
  EXPECT_TRUE(w.selector.matches(w.pod_labels));
}

TEST(Workload, ReadsContainerHandlersAndProbes) {
  Workload w = only_workload(kDeployment);
  ASSERT_EQ(w.containers.size(), 1u);
  const Container& c = w.containers[0];
  EXPECT_EQ(c.image, "gcr.io/distroless/static:nonroot");
  ASSERT_TRUE(c.pre_stop.has_value());
  EXPECT_EQ(c.pre_stop->kind, HandlerKind::exec);
  EXPECT_EQ(c.pre_stop->command, (std::vector<std::string>{"sleep", "5"}));
  ASSERT_TRUE(c.readiness_probe && c.liveness_probe);
  EXPECT_FALSE(c.startup_probe.has_value());
  const Probe& ready = *c.readiness_probe;
  EXPECT_EQ(ready.handler.kind, HandlerKind::http_get);
  EXPECT_EQ(ready.handler.path, "/ready");
  EXPECT_EQ(ready.handler.port.name, "http");
  EXPECT_EQ(c.resolve(ready.handler.port), 8080);
  EXPECT_EQ(ready.period_seconds, 2);
  EXPECT_EQ(ready.failure_threshold, 3);
  EXPECT_EQ(ready.timeout_seconds, 1);
  EXPECT_EQ(c.liveness_probe->failure_threshold, 6);
  EXPECT_EQ(c.liveness_probe->handler.port.number, 8080);
  EXPECT_EQ(c.resolve(PortRef{0, "metrics"}), std::nullopt);
}

TEST(Workload, ReadsStopSignalAndRunAsUserWithThePodsAsDefault) {
  Workload w = only_workload(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      securityContext: {runAsUser: 1000}
      containers:
        - name: app
          image: app:1
          lifecycle: {stopSignal: SIGQUIT}
        - name: side
          image: side:1
          securityContext: {runAsUser: 65532}
)");
  ASSERT_EQ(w.containers.size(), 2u);
  EXPECT_EQ(w.containers[0].stop_signal, "SIGQUIT");
  EXPECT_EQ(w.containers[0].run_as_user, 1000) << "the pod's runAsUser is the default";
  EXPECT_EQ(w.containers[1].stop_signal, "");
  EXPECT_EQ(w.containers[1].run_as_user, 65532) << "the container's own wins";
}

TEST(Workload, RecordsOneBasedPositionsOfFields) {
  Workload w = only_workload(kDeployment);
  const Container& c = w.containers[0];
  EXPECT_EQ(c.marks.self.line, 17);  // "- name: app": the item's first key
  EXPECT_EQ(c.marks.self.column, 11);
  EXPECT_EQ(c.marks.at("lifecycle.preStop").line, 23);
  EXPECT_EQ(c.marks.at("lifecycle.preStop").column, 13);
  EXPECT_EQ(c.pre_stop->marks.at("command").line, 25);
  EXPECT_EQ(c.readiness_probe->marks.at("periodSeconds").line, 28);
  EXPECT_EQ(w.meta.marks.at("metadata.name").line, 4);
  // A field that is not written falls back to its struct's position.
  EXPECT_EQ(w.marks.at("spec.replicas").line, 0);
  EXPECT_EQ(c.marks.at("startupProbe").line, 17);
}

TEST(Workload, PositionsCountFromTheStartOfAMultiDocumentFile) {
  std::string text = "# leading comment\n---\napiVersion: v1\nkind: ConfigMap\n---\n";
  text += kDeployment;
  Loaded loaded = load_text(text, "multi.yaml");
  ASSERT_TRUE(loaded.problems.empty());
  ASSERT_EQ(loaded.objects.size(), 2u);
  const auto& w = std::get<Workload>(loaded.objects[1]);
  EXPECT_EQ(w.meta.marks.self.line, 6);
  EXPECT_EQ(w.containers[0].marks.at("lifecycle.preStop").line, 28);
  EXPECT_EQ(w.meta.file, "multi.yaml");
}

TEST(Workload, ReadsEveryPreStopHandlerKind) {
  constexpr const char* kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}}
spec:
  terminationGracePeriodSeconds: 45
  containers:
    - {name: a, image: x, lifecycle: {preStop: {sleep: {seconds: 10}}}}
    - {name: b, image: x, lifecycle: {preStop: {httpGet: {path: /drain, port: 9000}}}}
    - {name: c, image: x, lifecycle: {preStop: {tcpSocket: {port: admin}}}}
  initContainers:
    - {name: proxy, image: y, restartPolicy: Always}
    - {name: migrate, image: z}
)";
  Workload w = only_workload(kPod);
  EXPECT_EQ(w.kind, WorkloadKind::pod);
  EXPECT_EQ(w.pod_labels.at("app"), "p");
  EXPECT_EQ(w.grace_seconds(), 45);
  ASSERT_EQ(w.containers.size(), 4u);  // three main containers + the native sidecar
  EXPECT_EQ(w.containers[0].pre_stop->kind, HandlerKind::sleep);
  EXPECT_EQ(w.containers[0].pre_stop->sleep_seconds, 10);
  EXPECT_EQ(w.containers[1].pre_stop->kind, HandlerKind::http_get);
  EXPECT_EQ(w.containers[1].pre_stop->path, "/drain");
  EXPECT_EQ(w.containers[2].pre_stop->kind, HandlerKind::tcp_socket);
  EXPECT_EQ(w.containers[2].pre_stop->port.name, "admin");
  EXPECT_TRUE(w.containers[3].sidecar);
  EXPECT_EQ(w.containers[3].name, "proxy");
}

TEST(Workload, ReadsStrategiesOfEachKind) {
  constexpr const char* kText = R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec: {replicas: 3, template: {spec: {containers: [{name: db, image: postgres}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 0
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: "50%"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: r}
spec: {strategy: {type: Recreate}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: ro}
spec:
  replicas: 5
  strategy: {canary: {maxSurge: 1}}
  template: {spec: {containers: [{name: app, image: a}]}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: job, image: busybox}]
)";
  Loaded loaded = load_text(kText, "k.yaml");
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems.front().str();
  ASSERT_EQ(loaded.objects.size(), 5u);
  const auto& sts = std::get<Workload>(loaded.objects[0]);
  EXPECT_EQ(sts.replicas, 3);
  EXPECT_EQ(sts.strategy.max_unavailable.value().to_string(), "1");
  EXPECT_EQ(sts.strategy.max_surge.value().to_string(), "0");
  const auto& d = std::get<Workload>(loaded.objects[1]);
  EXPECT_EQ(d.replicas, 0);
  EXPECT_EQ(d.strategy.max_unavailable.value().to_string(), "0");
  EXPECT_EQ(d.strategy.max_surge.value().to_string(), "50%");
  EXPECT_EQ(d.marks.at("spec.replicas").line, 10);
  EXPECT_FALSE(std::get<Workload>(loaded.objects[2]).strategy.max_unavailable);
  const auto& ro = std::get<Workload>(loaded.objects[3]);
  EXPECT_EQ(ro.kind, WorkloadKind::rollout);
  EXPECT_EQ(ro.strategy.max_surge.value().to_string(), "1");
  EXPECT_EQ(ro.strategy.max_unavailable.value().to_string(), "25%");
  const auto& cron = std::get<Workload>(loaded.objects[4]);
  EXPECT_TRUE(cron.runs_to_completion());
  ASSERT_EQ(cron.containers.size(), 1u);
  EXPECT_EQ(cron.containers[0].image, "busybox");
}

}  // namespace
}  // namespace zerodrop::kube
