#include <gtest/gtest.h>

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
namespace id = rule_id;

constexpr const char* kPdb = R"(---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}
)";

std::string container_with(const std::string& lifecycle, const std::string& image = "web:1") {
  return "          image: " + image + "\n          ports: [{name: http, containerPort: 8080}]\n"
         + lifecycle + "          readinessProbe: {httpGet: {path: /ready, port: http}}\n";
}

TEST(TerminationRules, GoodWorkloadHasNoFindings) {
  Report r = audit_text(service() + deployment(kGoodContainer, "  replicas: 3\n") + kPdb);
  for (const Finding& f : r.all_findings()) {
    ADD_FAILURE() << f.rule << ": " << f.message;
  }
  EXPECT_EQ(r.workloads.size(), 1u);
}

TEST(TerminationRules, PreStopMissingOnlyWhenAServiceSelectsThePods) {
  std::string body = container_with("");
  Report alone = audit_text(deployment(body));
  EXPECT_FALSE(has(alone, id::kPreStopMissing));
  ASSERT_TRUE(has(alone, id::kNoTraffic));
  EXPECT_EQ(with_rule(alone, id::kNoTraffic)[0].severity, Severity::info);

  Report served = audit_text(service() + deployment(body));
  auto found = with_rule(served, id::kPreStopMissing);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::error);
  EXPECT_EQ(found[0].hole, record::Hole::deregistration_race);
  EXPECT_EQ(found[0].object.container, "app");
  EXPECT_EQ(found[0].mark.line, 17);  // "- name: app" in the second document
  EXPECT_EQ(found[0].mark.column, 11);
  EXPECT_NE(found[0].message.find("Service 'web'"), std::string::npos);
  EXPECT_NE(found[0].fix.find("sleep: {seconds: 5}"), std::string::npos);
}

TEST(TerminationRules, ServiceInAnotherNamespaceDoesNotSelect) {
  std::string svc = service();
  svc.replace(svc.find("{name: web}"), 11, "{name: web, namespace: other}");
  std::string dep = deployment(container_with(""));
  dep.replace(dep.find("{name: web}"), 11, "{name: web, namespace: prod}");
  EXPECT_FALSE(has(audit_text(svc + dep), id::kPreStopMissing));
}

TEST(TerminationRules, JobsAndZerodropRunNeedNoPreStop) {
  std::string cron = R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  jobTemplate:
    spec:
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: job, image: busybox}]}
)";
  EXPECT_TRUE(audit_text(service() + cron).all_findings().empty());
  std::string body = container_with("") + "          command: [/zerodrop, run, --, /app]\n";
  EXPECT_FALSE(has(audit_text(service() + deployment(body)), id::kPreStopMissing));
}

TEST(TerminationRules, ExecSleepInAShellLessImageCannotRun) {
  std::string exec = "          lifecycle: {preStop: {exec: {command: [sleep, \"5\"]}}}\n";
  Report distroless =
      audit_text(service() + deployment(container_with(exec, "gcr.io/distroless/static:nonroot")));
  auto found = with_rule(distroless, id::kPreStopBinaryMissing);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("'sleep'"), std::string::npos);
  EXPECT_FALSE(has(distroless, id::kPreStopTooShort)) << "one finding for one broken hook";

  std::string shell = "          lifecycle: {preStop: {exec: {command: [/bin/sh, -c, sleep 5]}}}\n";
  EXPECT_TRUE(has(audit_text(service()
                             + deployment(container_with(
                                 shell, "mcr.microsoft.com/dotnet/aspnet:8.0-jammy-chiseled"))),
                  id::kPreStopBinaryMissing));
  EXPECT_FALSE(has(audit_text(service() + deployment(container_with(shell, "debian:12"))),
                   id::kPreStopBinaryMissing));
  EXPECT_FALSE(
      has(audit_text(service() + deployment(container_with(shell, "gcr.io/distroless/base:debug"))),
          id::kPreStopBinaryMissing));
  // The app's own binary is assumed present even in distroless images.
  std::string own = "          lifecycle: {preStop: {exec: {command: [/wait-shutdown]}}}\n";
  EXPECT_FALSE(
      has(audit_text(service() + deployment(container_with(own, "gcr.io/distroless/static"))),
          id::kPreStopBinaryMissing));
}

TEST(TerminationRules, PreStopShorterThanPropagation) {
  std::string two = "          lifecycle: {preStop: {sleep: {seconds: 2}}}\n";
  auto found =
      with_rule(audit_text(service() + deployment(container_with(two))), id::kPreStopTooShort);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("native sleep 2s is shorter than the 5s"), std::string::npos);
  Options fast;
  fast.propagation = std::chrono::seconds(2);
  EXPECT_FALSE(
      has(audit_text(service() + deployment(container_with(two)), fast), id::kPreStopTooShort));
  std::string script =
      "          lifecycle: {preStop: {exec: {command: [sh, -c, \"sleep 3 && nginx -s quit\"]}}}\n";
  auto shell =
      with_rule(audit_text(service() + deployment(container_with(script))), id::kPreStopTooShort);
  ASSERT_EQ(shell.size(), 1u);
  EXPECT_NE(shell[0].message.find("sleep 3"), std::string::npos);
}

TEST(TerminationRules, HookOfUnknownDurationIsAnInfo) {
  std::string hook = "          lifecycle: {preStop: {httpGet: {path: /drain, port: http}}}\n";
  auto found =
      with_rule(audit_text(service() + deployment(container_with(hook))), id::kPreStopUnknownDelay);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::info);
}

TEST(TerminationRules, GraceMustCoverPreStopDrainAndMargin) {
  std::string none = container_with("");
  auto found = with_rule(
      audit_text(service() + deployment(none, "", "      terminationGracePeriodSeconds: 5\n")),
      id::kGraceTooShort);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::warning) << "only the drain estimate exceeds it";
  EXPECT_NE(
      found[0].message.find("5 is below preStop 0s + drain 5s (--drain-seconds) + margin 2s = 7s"),
      std::string::npos)
      << found[0].message;
  EXPECT_EQ(found[0].fix, "set terminationGracePeriodSeconds: 7");

  std::string sleep5 = container_with("          lifecycle: {preStop: {sleep: {seconds: 5}}}\n");
  auto certain = with_rule(
      audit_text(service() + deployment(sleep5, "", "      terminationGracePeriodSeconds: 6\n")),
      id::kGraceTooShort);
  ASSERT_EQ(certain.size(), 1u);
  EXPECT_EQ(certain[0].severity, Severity::error) << "preStop + margin alone exceed the grace";

  EXPECT_FALSE(has(audit_text(service() + deployment(sleep5)), id::kGraceTooShort)) << "30 >= 12";
  std::string annotated = deployment(sleep5);
  annotated.replace(annotated.find("metadata: {name: web}"), 21,
                    "metadata: {name: web, annotations: {zerodrop.dev/drain-seconds: \"25\"}}");
  auto drained = with_rule(audit_text(service() + annotated), id::kGraceTooShort);
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_NE(drained[0].message.find("annotation zerodrop.dev/drain-seconds"), std::string::npos);
  EXPECT_EQ(drained[0].fix, "set terminationGracePeriodSeconds: 32");
}

TEST(TerminationRules, NativeSleepNotBelowGraceIsRejectedByTheApi) {
  std::string sleep30 = container_with("          lifecycle: {preStop: {sleep: {seconds: 30}}}\n");
  auto found = with_rule(audit_text(service() + deployment(sleep30)), id::kSleepNotBelowGrace);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::error);
  EXPECT_EQ(found[0].hole, record::Hole::grace_overrun);
  EXPECT_NE(found[0].message.find("sleep 30s is not below terminationGracePeriodSeconds 30"),
            std::string::npos);
  EXPECT_FALSE(has(
      audit_text(service() + deployment(sleep30, "", "      terminationGracePeriodSeconds: 45\n")),
      id::kSleepNotBelowGrace));
}

TEST(TerminationRules, HelmTestHooksAreSkipped) {
  std::string pod = R"(apiVersion: v1
kind: Pod
metadata: {name: web-test, labels: {app: web}, annotations: {helm.sh/hook: test}}
spec: {containers: [{name: t, image: busybox}]}
)";
  Report r = audit_text(service() + pod);
  EXPECT_TRUE(r.all_findings().empty());
  EXPECT_EQ(r.skipped, 1);
}

// A native sidecar (an init container with restartPolicy: Always) stops only after every main
// container has exited: a main container's working preStop keeps it serving too.
std::string with_sidecar(const std::string& sidecar_hook = "") {
  return "      initContainers:\n        - name: proxy\n          image: proxy:1\n"
         "          restartPolicy: Always\n          ports: [{name: proxy, containerPort: 15001}]\n"
         "          readinessProbe: {tcpSocket: {port: 15001}}\n"
         + sidecar_hook;
}

std::vector<std::string> missing_in(const Report& r) {
  std::vector<std::string> out;
  for (const Finding& f : with_rule(r, id::kPreStopMissing)) {
    out.push_back(f.object.container);
  }
  return out;
}

TEST(TerminationRules, SidecarServesThroughTheMainContainersPreStop) {
  auto audit = [](const std::string& main_hook, const std::string& image = "web:1") {
    return audit_text(service("proxy")
                      + deployment(container_with(main_hook, image), "", with_sidecar()));
  };
  EXPECT_TRUE(missing_in(audit("          lifecycle: {preStop: {sleep: {seconds: 5}}}\n")).empty());
  EXPECT_EQ(missing_in(audit("          lifecycle: {preStop: {sleep: {seconds: 2}}}\n")),
            std::vector<std::string>{"proxy"})
      << "2 s is shorter than the propagation";
  EXPECT_EQ(
      missing_in(audit("          lifecycle: {preStop: {exec: {command: [sh, -c, sleep 9]}}}\n",
                       "gcr.io/distroless/static")),
      std::vector<std::string>{"proxy"})
      << "a hook that cannot run covers nothing";
  EXPECT_EQ(missing_in(audit("")), std::vector<std::string>{"proxy"});
}

TEST(TerminationRules, GraceAddsTheSidecarPhaseAfterTheMainOne) {
  std::string sidecar = with_sidecar("          lifecycle: {preStop: {sleep: {seconds: 5}}}\n");
  std::string main = container_with("          lifecycle: {preStop: {sleep: {seconds: 5}}}\n");
  auto found = with_rule(
      audit_text(service()
                 + deployment(main, "", "      terminationGracePeriodSeconds: 14\n" + sidecar)),
      id::kGraceTooShort);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("preStop 5s + drain 5s (--drain-seconds) + sidecar preStop 5s "
                                  "(after the main containers) + margin 2s = 17s"),
            std::string::npos)
      << found[0].message;
  EXPECT_EQ(found[0].fix, "set terminationGracePeriodSeconds: 17");
}

TEST(TerminationRules, DeliberateZeroGraceWithoutServiceIsNotFlagged) {
  std::string hook =
      container_with("          lifecycle: {preStop: {exec: {command: [sleep, \"3\"]}}}\n");
  std::string zero = deployment(hook, "", "      terminationGracePeriodSeconds: 0\n");
  EXPECT_FALSE(has(audit_text(zero), id::kGraceTooShort));
  EXPECT_TRUE(has(audit_text(service() + zero), id::kGraceTooShort)) << "traffic is cut";
  EXPECT_TRUE(has(audit_text(deployment(hook, "", "      terminationGracePeriodSeconds: 1\n")),
                  id::kGraceTooShort))
      << "only 0 says the owner wants no grace";
}

TEST(TerminationRules, NamedTargetPortNoContainerDeclaresReachesNone) {
  std::string body = container_with("");
  EXPECT_TRUE(missing_in(audit_text(service("grpc") + deployment(body))).empty());
  EXPECT_EQ(missing_in(audit_text(service("9090") + deployment(body))),
            std::vector<std::string>{"app"})
      << "an undeclared port number still reaches the main container";
}

}  // namespace
}  // namespace zerodrop::audit
