#include <gtest/gtest.h>

#include "audit/rule.h"
#include "audit_testing.h"

namespace zerodrop::audit {
namespace {

using testing::audit_text;
using testing::deployment;
using testing::has;
using testing::service;
using testing::with_rule;
namespace id = rule_id;

std::string probes(const std::string& ports, const std::string& readiness,
                   const std::string& liveness = "") {
  std::string out = "          image: web:1\n          ports: " + ports
                    + "\n          lifecycle: {preStop: {sleep: {seconds: 5}}}\n";
  if (!readiness.empty()) {
    out += "          readinessProbe: " + readiness + "\n";
  }
  if (!liveness.empty()) {
    out += "          livenessProbe: " + liveness + "\n";
  }
  return out;
}

constexpr const char* kHttpPort = "[{name: http, containerPort: 8080}]";

TEST(ProbeRules, ReadinessMissingOnAServingContainer) {
  Report r = audit_text(service() + deployment(probes(kHttpPort, "")));
  auto found = with_rule(r, id::kReadinessMissing);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].hole, record::Hole::readiness_lies);
  EXPECT_NE(found[0].fix.find("port: http"), std::string::npos);
  EXPECT_FALSE(has(audit_text(deployment(probes(kHttpPort, ""))), id::kReadinessMissing))
      << "no Service selects it: it takes no traffic";
}

TEST(ProbeRules, OnlyTheContainerTheServiceTargetsMustBeReady) {
  std::string two = probes(kHttpPort, "{httpGet: {path: /ready, port: http}}") +
                    "        - name: metrics-sidecar\n          image: exporter:1\n"
                    "          ports: [{name: admin, containerPort: 9100}]\n";
  EXPECT_FALSE(has(audit_text(service() + deployment(two)), id::kReadinessMissing));
  EXPECT_TRUE(has(audit_text(service("admin") + deployment(two)), id::kReadinessMissing));
  // A Service that targets a metrics port carries scrapes only: no client waits on readiness.
  EXPECT_FALSE(
      has(audit_text(service("9100", "metrics") + deployment(two)), id::kReadinessMissing));
}

TEST(ProbeRules, TcpReadinessOnAPortThatServesHttp) {
  auto found =
      with_rule(audit_text(service() + deployment(probes(kHttpPort, "{tcpSocket: {port: 8080}}"))),
                id::kReadinessTcpOnHttp);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("the port is named 'http'"), std::string::npos);
  // AMQP on 5672 is not HTTP: a TCP probe is all there is.
  std::string amqp = "[{name: amqp, containerPort: 5672}]";
  EXPECT_FALSE(has(
      audit_text(service("amqp", "amqp") + deployment(probes(amqp, "{tcpSocket: {port: amqp}}"))),
      id::kReadinessTcpOnHttp));
  // An unnamed port is HTTP when the Service says so by appProtocol.
  std::string svc =
      "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n"
      "  selector: {app: web}\n  ports: [{port: 80, targetPort: 3000, appProtocol: http}]\n---\n";
  EXPECT_TRUE(has(
      audit_text(svc + deployment(probes("[{containerPort: 3000}]", "{tcpSocket: {port: 3000}}"))),
      id::kReadinessTcpOnHttp));
}

TEST(ProbeRules, SameHandlerResolvesNamedPortsAndIgnoresThresholds) {
  auto found = with_rule(
      audit_text(
          service()
          + deployment(probes(kHttpPort, "{httpGet: {path: /healthz, port: http}}",
                              "{httpGet: {path: /healthz, port: 8080}, failureThreshold: 5}"))),
      id::kProbesIdentical);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].hole, record::Hole::liveness_kills_drain);
  EXPECT_NE(found[0].message.find("GET /healthz on port 8080"), std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].message.find("different thresholds"), std::string::npos);
}

TEST(ProbeRules, QueryStringsAndPathsMakeHandlersDifferent) {
  EXPECT_FALSE(
      has(audit_text(service()
                     + deployment(probes(kHttpPort, "{httpGet: {path: /healthz, port: http}}",
                                         "{httpGet: {path: /healthz?full=true, port: http}}"))),
          id::kProbesIdentical));
  EXPECT_FALSE(
      has(audit_text(service()
                     + deployment(probes(
                         "[{name: http, containerPort: 8080}, {name: admin, containerPort: 9000}]",
                         "{httpGet: {path: /healthz, port: http}}",
                         "{httpGet: {path: /healthz, port: admin}}"))),
          id::kProbesIdentical));
  EXPECT_TRUE(
      has(audit_text(
              service()
              + deployment(probes(
                  kHttpPort, "{exec: {command: [/bin/grpc_health_probe, -addr=:8080]}}",
                  "{exec: {command: [/bin/grpc_health_probe, -addr=:8080]}, periodSeconds: 30}"))),
          id::kProbesIdentical));
  EXPECT_TRUE(has(audit_text(service()
                             + deployment(probes(kHttpPort, "{httpGet: {port: http}}",
                                                 "{httpGet: {path: /, port: http}}"))),
                  id::kProbesIdentical))
      << "an empty path is /";
}

TEST(ProbeRules, IdenticalTcpConnectsAreNoLivenessHole) {
  // A datastore's usual probes: both connect to its port. The process cannot fail readiness to
  // shed load or drain without closing the port, so liveness failing too adds nothing.
  std::string db = "[{name: redis, containerPort: 6379}]";
  EXPECT_FALSE(has(audit_text(service("redis")
                              + deployment(probes(db, "{tcpSocket: {port: 6379}}",
                                                  "{tcpSocket: {port: redis}}"))),
                   id::kProbesIdentical));
}

TEST(ProbeRules, AggressiveLivenessKillsUnderLoad) {
  auto found = with_rule(
      audit_text(
          service()
          + deployment(probes(
              kHttpPort, "{httpGet: {path: /ready, port: http}}",
              "{httpGet: {path: /livez, port: http}, periodSeconds: 2, failureThreshold: 2}"))),
      id::kLivenessAggressive);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("after a 3s stall (2 failures 2s apart, timeout 1s)"),
            std::string::npos)
      << found[0].message;
  EXPECT_FALSE(
      has(audit_text(service()
                     + deployment(probes(kHttpPort, "{httpGet: {path: /ready, port: http}}",
                                         "{httpGet: {path: /livez, port: http}}"))),
          id::kLivenessAggressive))
      << "defaults allow a 21s stall";
}

}  // namespace
}  // namespace zerodrop::audit
