// What counts as traffic: metrics-only Services, and workloads that must run as one pod.
#include "audit/traffic.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
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
using testing::with_rule;

// An exporter-like container: no preStop, no readiness probe, one port.
const char* kBareContainer = R"(          image: registry.example/exporter:1.0
          ports: [{name: metrics, containerPort: 9100}]
)";

std::string metrics_service(const std::string& port_name, const std::string& annotations = "",
                            const std::string& labels = "{app: web}",
                            const std::string& name = "web") {
  return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", labels: " + labels
         + annotations + "}\nspec:\n  selector: {app: web}\n  ports: [{name: " + port_name
         + ", port: 9100, targetPort: 9100}]\n---\n";
}

// Findings that would say the workload takes client traffic.
bool client_rules(const Report& report) {
  return has(report, rule_id::kPreStopMissing) || has(report, rule_id::kReadinessMissing)
         || has(report, rule_id::kTooFewReplicas);
}

TEST(Traffic, MetricsNamedPortsAreScrapeTraffic) {
  for (const char* name : {"metrics", "http-metrics", "https-metrics"}) {
    Report report = audit_text(metrics_service(name) + deployment(kBareContainer));
    EXPECT_FALSE(client_rules(report)) << name;
    auto info = with_rule(report, rule_id::kNoTraffic);
    ASSERT_EQ(info.size(), 1u) << name;
    EXPECT_EQ(info[0].severity, Severity::info);
    EXPECT_NE(info[0].message.find("only Prometheus scrapes reach its pods"), std::string::npos)
        << info[0].message;
    EXPECT_NE(info[0].message.find(name), std::string::npos) << info[0].message;
  }
  // The same Service with a port named for clients is client traffic.
  Report served = audit_text(metrics_service("web") + deployment(kBareContainer));
  EXPECT_TRUE(has(served, rule_id::kPreStopMissing));
  EXPECT_TRUE(has(served, rule_id::kReadinessMissing));
  EXPECT_TRUE(has(served, rule_id::kTooFewReplicas));
}

TEST(Traffic, PrometheusScrapeAnnotationMarksTheScrapedPort) {
  std::string scrape = ", annotations: {prometheus.io/scrape: \"true\"";
  Report all = audit_text(metrics_service("web", scrape + "}") + deployment(kBareContainer));
  EXPECT_FALSE(client_rules(all));
  EXPECT_TRUE(has(all, rule_id::kNoTraffic));
  // prometheus.io/port names another port: this one may carry clients.
  Report other = audit_text(metrics_service("web", scrape + ", prometheus.io/port: \"8080\"}")
                            + deployment(kBareContainer));
  EXPECT_TRUE(has(other, rule_id::kPreStopMissing));
  Report same = audit_text(metrics_service("web", scrape + ", prometheus.io/port: \"9100\"}")
                           + deployment(kBareContainer));
  EXPECT_FALSE(client_rules(same));
  // scrape "false" is no evidence.
  Report off = audit_text(metrics_service("web",
                                          ", annotations: {prometheus.io/scrape: "
                                          "\"false\"}")
                          + deployment(kBareContainer));
  EXPECT_TRUE(has(off, rule_id::kPreStopMissing));
}

TEST(Traffic, ServiceMonitorSelectingTheServiceMarksItsPort) {
  auto monitor = [](const std::string& selector, const std::string& port) {
    return "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: web}\n"
           "spec:\n  selector: {matchLabels: "
           + selector + "}\n  endpoints: [{port: " + port + "}]\n---\n";
  };
  std::string service = metrics_service("web", "", "{app: web, team: a}");
  Report scraped = audit_text(monitor("{team: a}", "web") + service + deployment(kBareContainer));
  EXPECT_FALSE(client_rules(scraped));
  auto info = with_rule(scraped, rule_id::kNoTraffic);
  ASSERT_EQ(info.size(), 1u);
  EXPECT_NE(info[0].message.find("ServiceMonitor 'web' scrapes the port"), std::string::npos)
      << info[0].message;
  // A monitor of other Services, or of another port, says nothing about this one.
  EXPECT_TRUE(has(audit_text(monitor("{team: b}", "web") + service + deployment(kBareContainer)),
                  rule_id::kPreStopMissing));
  EXPECT_TRUE(has(audit_text(monitor("{team: a}", "admin") + service + deployment(kBareContainer)),
                  rule_id::kPreStopMissing));
}

TEST(Traffic, ServiceMonitorInAnotherFileIsSeenWhenStreaming) {
  // What `zerodrop audit` runs: two passes, the monitor in a file after the workload's.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("zerodrop-traffic-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.yaml") << metrics_service("web", "", "{team: a}")
                                << deployment(kBareContainer);
  std::ofstream(dir / "b.yaml") << "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n"
                                   "metadata: {name: web}\nspec:\n  selector: {matchLabels: "
                                   "{team: a}}\n  endpoints: [{port: web}]\n";
  Options o;
  o.paths = {dir.string()};
  std::ostringstream out;
  audit_stream(o, *json_sink(out));
  fs::remove_all(dir);
  EXPECT_EQ(out.str().find("prestop-missing"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("ServiceMonitor 'web' scrapes the port"), std::string::npos)
      << out.str();
}

TEST(Traffic, MetricsBindAddressFlagNamesTheMetricsPort) {
  // kubebuilder's layout: the metrics Service's port is "https", the flag tells what it is.
  std::string container = R"(          image: registry.example/manager:1.0
          args: [--metrics-bind-address=:9100, --health-probe-bind-address=:8081]
)";
  Report report = audit_text(metrics_service("https") + deployment(container));
  EXPECT_FALSE(client_rules(report));
  std::string split = R"(          image: registry.example/manager:1.0
          args: [--metrics-addr, "127.0.0.1:9100"]
)";
  EXPECT_FALSE(client_rules(audit_text(metrics_service("https") + deployment(split))));
  std::string other = R"(          image: registry.example/manager:1.0
          args: [--metrics-bind-address=:8080]
)";
  EXPECT_TRUE(
      has(audit_text(metrics_service("https") + deployment(other)), rule_id::kPreStopMissing));
}

TEST(Traffic, MetricsSidecarBesideClientPortIsNotServing) {
  // A Service with the app's port and the kube-rbac-proxy sidecar's metrics port: only the app
  // container takes client traffic.
  std::string yaml =
      R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80, targetPort: 8080}
    - {name: https-metrics, port: 8443, targetPort: 8443}
---
)"
      + deployment(std::string(testing::kGoodContainer) + R"(        - name: kube-rbac-proxy
          image: quay.io/brancz/kube-rbac-proxy:v0.18.0
          ports: [{name: https-metrics, containerPort: 8443}]
)",
                   "  replicas: 3\n");
  Report report = audit_text(yaml);
  EXPECT_FALSE(has(report, rule_id::kPreStopMissing));
  EXPECT_FALSE(has(report, rule_id::kReadinessMissing));
  EXPECT_FALSE(has(report, rule_id::kNoTraffic));  // the app container is served
}

TEST(Traffic, LeaderElectedControllersAreNotToldToAddReplicas) {
  std::string webhook = testing::service("9443", "webhook");
  for (const char* args : {"[--leader-elect]", "[--leader-elect=true]",
                           "[--enable-leader-election]", "[-leader-election=true]"}) {
    std::string container = std::string("          image: registry.example/manager:1.0\n")
                            + "          args: " + args + "\n";
    Report report = audit_text(webhook + deployment(container, "  replicas: 1\n"));
    EXPECT_FALSE(has(report, rule_id::kTooFewReplicas)) << args;
    EXPECT_TRUE(has(report, rule_id::kPreStopMissing)) << args;  // the webhook is still traffic
  }
  std::string env = R"(          image: registry.example/controller:1.0
          env: [{name: LEADER_ELECTION_IDENTITY, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
)";
  EXPECT_FALSE(has(audit_text(webhook + deployment(env)), rule_id::kTooFewReplicas));
  std::string off = R"(          image: registry.example/manager:1.0
          args: [--leader-elect=false]
)";
  EXPECT_TRUE(has(audit_text(webhook + deployment(off)), rule_id::kTooFewReplicas));
}

TEST(Traffic, SingleInstanceDatastoresAreNotToldToAddReplicas) {
  for (const char* image :
       {"postgres:16", "docker.io/bitnami/redis:7.2", "robotshop/rs-mongodb",
        "mysql/mysql-server:8.0", "rabbitmq:3-management-alpine", "quay.io/minio/minio:latest"}) {
    std::string container = std::string("          image: ") + image + "\n";
    std::string yaml = testing::service("5432", "db")
                       + "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n"
                         "  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n"
                         "    metadata: {labels: {app: web}}\n    spec:\n      containers:\n"
                         "        - name: db\n"
                       + container;
    Report report = audit_text(yaml);
    EXPECT_FALSE(has(report, rule_id::kTooFewReplicas)) << image;
    EXPECT_TRUE(has(report, rule_id::kPreStopMissing)) << image;  // clients still connect
    // A Deployment of one datastore pod runs alone as well.
    EXPECT_FALSE(has(audit_text(testing::service("5432", "db") + deployment(container)),
                     rule_id::kTooFewReplicas))
        << image;
  }
  // Their routers, exporters and operators are not datastores.
  for (const char* image :
       {"mysql/mysql-router:8.0", "oliver006/redis_exporter:v1.5",
        "ghcr.io/zalando/postgres-operator-ui:v2", "natsio/nats-server-config-reloader:0.6.2"}) {
    std::string container = std::string("          image: ") + image + "\n";
    EXPECT_TRUE(has(audit_text(testing::service("6446", "db") + deployment(container)),
                    rule_id::kTooFewReplicas))
        << image;
  }
}

TEST(Traffic, OperatorsWithoutLeaderElectionAreNotToldToAddReplicasNorRollingUpdate) {
  std::string container = "          image: ghcr.io/zalando/postgres-operator:v2.0.1\n";
  Report report =
      audit_text(testing::service("8080", "api")
                 + deployment(container, "  replicas: 1\n  strategy: {type: Recreate}\n"));
  EXPECT_FALSE(has(report, rule_id::kTooFewReplicas));
  EXPECT_FALSE(has(report, rule_id::kRecreateOutage));
  EXPECT_TRUE(has(report, rule_id::kPreStopMissing));
}

TEST(Traffic, RunsAloneSaysWhy) {
  kube::Workload w;
  w.containers.push_back({});
  w.containers[0].name = "db";
  w.containers[0].image = "postgres:16";
  EXPECT_NE(runs_alone(w, 1).find("single-instance datastore"), std::string::npos);
  EXPECT_EQ(runs_alone(w, 3), "");  // three replicas: a configured cluster
  w.containers[0].image = "registry.example/web:1";
  EXPECT_EQ(runs_alone(w, 1), "");
  w.containers[0].args = {"--leader-elect"};
  EXPECT_NE(runs_alone(w, 1).find("leader-elected (--leader-elect)"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::audit
