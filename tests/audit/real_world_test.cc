// Cases found auditing real public manifests: each a small manifest of the shape that went wrong.
#include <sstream>

#include <gtest/gtest.h>

#include "audit/output.h"
#include "audit/rule.h"
#include "audit_testing.h"

namespace zerodrop::audit {
namespace {

using testing::audit_text;
using testing::deployment;
using testing::has;
using testing::kGoodContainer;
using testing::service;
using testing::with_rule;

// The API server's defaulting fills in targetPort 0 (= port) and probe timings of 0.
TEST(RealWorld, ValuesTheApiServerDefaultsAreValid) {
  std::string yaml =
      "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n"
      "  ports: [{port: 8080, targetPort: 0}]\n---\n"
      + deployment(R"(          image: registry.example/web:1.0
          ports: [{name: http, containerPort: 8080}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 0,
                           timeoutSeconds: 0, failureThreshold: 0, successThreshold: 0}
          livenessProbe: {httpGet: {path: /livez, port: http}, periodSeconds: 0,
                          timeoutSeconds: 0, failureThreshold: 0}
)",
                   "  replicas: 3\n");
  Report report = audit_text(yaml);
  EXPECT_FALSE(has(report, rule_id::kInvalidManifest));
  ASSERT_EQ(report.workloads.size(), 1u);
  const kube::Workload& w = *report.workloads[0].view.workload;
  EXPECT_TRUE(report.workloads[0].view.takes_traffic());
  const kube::Probe& live = *w.containers[0].liveness_probe;
  EXPECT_EQ(live.period_seconds, 10);
  EXPECT_EQ(live.timeout_seconds, 1);
  EXPECT_EQ(live.failure_threshold, 3);
  EXPECT_EQ(w.containers[0].readiness_probe->success_threshold, 1);
  // The defaulted liveness (2 × 10 + 1 = 21 s) is not aggressive.
  EXPECT_FALSE(has(report, rule_id::kLivenessAggressive));
}

TEST(RealWorld, NegativeProbeTimingsStayInvalid) {
  Report report = audit_text(deployment(R"(          image: registry.example/web:1.0
          livenessProbe: {httpGet: {path: /livez, port: 8080}, periodSeconds: -1}
)"));
  EXPECT_TRUE(has(report, rule_id::kInvalidManifest));
}

}  // namespace
}  // namespace zerodrop::audit

namespace zerodrop::audit {
namespace {

std::string workload_of_kind(const std::string& kind, const std::string& spec) {
  return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: web}\nspec:\n" + spec
         + "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
           "    spec:\n      containers:\n        - name: app\n"
         + kGoodContainer;
}

TEST(RealWorld, RecreateBehindAServiceIsAnOutage) {
  std::string spec = "  replicas: 3\n  strategy: {type: Recreate}\n";
  Report served = audit_text(service() + workload_of_kind("Deployment", spec));
  auto found = with_rule(served, rule_id::kRecreateOutage);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::error);
  EXPECT_EQ(found[0].mark.line, 13);  // the type: key of the strategy
  // Without a Service nobody is cut off.
  EXPECT_FALSE(has(audit_text(workload_of_kind("Deployment", spec)), rule_id::kRecreateOutage));
  EXPECT_FALSE(has(audit_text(service() + workload_of_kind("Deployment", "  replicas: 3\n")),
                   rule_id::kRecreateOutage));
}

TEST(RealWorld, DaemonSetUpdatingEveryNodeAtOnce) {
  auto ds = [](const std::string& unavailable) {
    return service()
           + workload_of_kind("DaemonSet",
                              "  updateStrategy: {rollingUpdate: "
                              "{maxUnavailable: "
                                  + unavailable + "}}\n");
  };
  EXPECT_TRUE(has(audit_text(ds("\"100%\"")), rule_id::kAllUnavailable));
  EXPECT_FALSE(has(audit_text(ds("\"50%\"")), rule_id::kAllUnavailable));
  EXPECT_FALSE(has(audit_text(ds("1")), rule_id::kAllUnavailable));
  EXPECT_FALSE(
      has(audit_text(service() + workload_of_kind("DaemonSet", "")), rule_id::kAllUnavailable));
}

TEST(RealWorld, StatefulSetWithMaxUnavailableOfAllReplicas) {
  auto sts = [](const std::string& replicas, const std::string& unavailable) {
    return service() + workload_of_kind("StatefulSet", "  replicas: " + replicas
                                                           + "\n  updateStrategy: {rollingUpdate: "
                                                             "{maxUnavailable: " + unavailable
                                                           + "}}\n");
  };
  EXPECT_TRUE(has(audit_text(sts("3", "3")), rule_id::kAllUnavailable));
  EXPECT_TRUE(has(audit_text(sts("2", "\"100%\"")), rule_id::kAllUnavailable));
  EXPECT_FALSE(has(audit_text(sts("3", "2")), rule_id::kAllUnavailable));
  // One replica: replicas-too-few already says it, not twice.
  EXPECT_FALSE(has(audit_text(sts("1", "1")), rule_id::kAllUnavailable));
}

}  // namespace
}  // namespace zerodrop::audit

namespace zerodrop::audit {
namespace {

std::string patch_of(const std::string& yaml, const Options& o = {}) {
  std::ostringstream out;
  write_patches(audit_text(yaml), o, out);
  return out.str();
}

// The readiness patch of the first document (its lines up to the next container key), or
// nullopt when none is patched (advice is in comments, at column 0).
std::optional<std::string> readiness_patch(const std::string& text) {
  size_t at = text.find("\n          readinessProbe:");
  if (at == std::string::npos) {
    return std::nullopt;
  }
  size_t end = text.find("\n          ", at + 1);
  while (end != std::string::npos && text.compare(end + 11, 1, " ") == 0) {
    end = text.find("\n          ", end + 1);
  }
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

bool holds(const std::optional<std::string>& patch, const std::string& line) {
  return patch && patch->find(line) != std::string::npos;
}

TEST(ReadinessFix, ADatastoreGetsATcpConnectNotHttp) {
  std::string yaml = service("5432") + deployment(R"(          image: postgres:16
          ports: [{containerPort: 5432}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
)");
  auto probe = readiness_patch(patch_of(yaml));
  ASSERT_TRUE(probe) << patch_of(yaml);
  EXPECT_TRUE(holds(probe, "tcpSocket:\n              port: 5432")) << *probe;
  EXPECT_FALSE(holds(probe, "httpGet"));
}

TEST(ReadinessFix, TakesTheLivenessHandlerWithItsScheme) {
  std::string yaml = service("https") + deployment(R"(          image: registry.example/api:1
          ports: [{name: https, containerPort: 8443}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          livenessProbe: {httpGet: {path: /healthz, port: https, scheme: HTTPS}}
)");
  auto probe = readiness_patch(patch_of(yaml));
  ASSERT_TRUE(probe) << patch_of(yaml);
  EXPECT_TRUE(holds(probe, "scheme: HTTPS")) << *probe;
  EXPECT_TRUE(holds(probe, "path: \"/healthz\"")) << *probe;
  EXPECT_TRUE(holds(probe, "port: \"https\"")) << *probe;
  // The startup probe proves more than liveness: it comes first.
  std::string with_startup = service("grpc") + deployment(R"(          image: registry.example/api:1
          ports: [{name: grpc, containerPort: 9000}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          startupProbe: {grpc: {port: 9000}}
          livenessProbe: {exec: {command: [/bin/alive]}}
)");
  probe = readiness_patch(patch_of(with_startup));
  ASSERT_TRUE(probe);
  EXPECT_TRUE(holds(probe, "grpc:\n              port: 9000")) << *probe;
}

TEST(ReadinessFix, UnprovenPortsAreAdviceWithAMarkedPlaceholderNotAPatch) {
  for (const char* port : {"{name: grpc, containerPort: 9000}", "{name: http, containerPort: 80}",
                           "{containerPort: 7000}"}) {
    std::string yaml =
        service("9000") + deployment(std::string(R"(          image: registry.example/api:1
          ports: [)") + port + R"(]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
)");
    std::string text = patch_of(yaml);
    EXPECT_FALSE(readiness_patch(text)) << text;
    EXPECT_NE(text.find("# not patched: readiness-missing (app): add a readinessProbe such as"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("<"), std::string::npos) << text;
    auto found = with_rule(audit_text(yaml), rule_id::kReadinessMissing);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_NE(found[0].fix.find("filling in the <"), std::string::npos) << found[0].fix;
  }
  std::string grpc =
      patch_of(service("9000") + deployment(R"(          image: registry.example/api:1
          ports: [{name: grpc, containerPort: 9000}]
)"));
  EXPECT_NE(grpc.find("{grpc: {port: grpc}}"), std::string::npos) << grpc;
}

TEST(ReadinessFix, TcpOnHttpIsReplacedOnlyByAnHttpHandlerTheContainerServes) {
  std::string proven = patch_of(service() + deployment(R"(          image: registry.example/api:1
          ports: [{name: http, containerPort: 8080}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          readinessProbe: {tcpSocket: {port: http}}
          livenessProbe: {httpGet: {path: /livez, port: 8080}}
)"));
  auto probe = readiness_patch(proven);
  ASSERT_TRUE(probe) << proven;
  EXPECT_TRUE(holds(probe, "tcpSocket: null")) << *probe;
  EXPECT_TRUE(holds(probe, "path: \"/livez\"")) << *probe;
  std::string unproven = patch_of(service() + deployment(R"(          image: registry.example/api:1
          ports: [{name: http, containerPort: 8080}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          readinessProbe: {tcpSocket: {port: http}}
)"));
  EXPECT_NE(unproven.find("# not patched: readiness-tcp-on-http"), std::string::npos) << unproven;
}

}  // namespace
}  // namespace zerodrop::audit
