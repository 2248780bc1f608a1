// Realistic fixtures modelled on public charts (tests/audit/data/): every finding is listed, so
// a new false positive fails here as surely as a missed hole.
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "audit/audit.h"

namespace zerodrop::audit {
namespace {

using Expected =
    std::set<std::tuple<std::string, std::string, std::string>>;  // rule, object, container

Expected audit_fixture(const std::string& name) {
  Options o;
  o.paths = {std::string(ZERODROP_AUDIT_DATA) + "/" + name};
  Expected got;
  for (const Finding& f : audit_paths(o).all_findings()) {
    got.emplace(std::string(f.rule), f.object.name, f.object.container);
  }
  return got;
}

TEST(Fixtures, IngressNginxController) {
  Expected want = {
      {"prestop-unknown-delay", "ingress-nginx-controller", "controller"},       // /wait-shutdown
      {"liveness-same-as-readiness", "ingress-nginx-controller", "controller"},  // /healthz:10254
      {"replicas-too-few", "ingress-nginx-controller", ""},
      {"max-unavailable-capacity", "ingress-nginx-controller", ""},  // 1 of 1 replica
      {"pdb-blocks-eviction", "ingress-nginx-controller", ""},       // minAvailable 1 of 1
  };
  EXPECT_EQ(audit_fixture("ingress-nginx-controller.yaml"), want);
}

TEST(Fixtures, TraefikWithNativeSleep) {
  Expected want = {
      {"liveness-same-as-readiness", "traefik", "traefik"},  // both GET /ping on 8080
      {"replicas-too-few", "traefik", ""},
  };
  EXPECT_EQ(audit_fixture("traefik.yaml"), want);
}

TEST(Fixtures, CertManagerOperator) {
  Expected want = {
      {"no-traffic", "cert-manager", ""},  // the controller: no Service, rules skipped
      {"prestop-missing", "cert-manager-webhook", "cert-manager-webhook"},
      {"replicas-too-few", "cert-manager-webhook", ""},
  };
  EXPECT_EQ(audit_fixture("cert-manager-operator.yaml"), want);
}

TEST(Fixtures, ArgoRolloutInDistroless) {
  Expected want = {
      {"prestop-binary-missing", "checkout", "server"},      // sh in distroless
      {"grace-too-short", "checkout", ""},                   // 10 < 10 + 5 + 2
      {"liveness-same-as-readiness", "checkout", "server"},  // both gRPC on 5050
  };
  EXPECT_EQ(audit_fixture("argo-rollout.yaml"), want);
}

TEST(Fixtures, BrokenDocumentsDoNotStopTheOthers) {
  Expected want = {
      {"invalid-manifest", "", ""},
      {"prestop-missing", "api-v2", "api"},
      {"readiness-missing", "api-v2", "api"},
      {"pdb-missing", "api-v2", ""},
  };
  EXPECT_EQ(audit_fixture("broken.yaml"), want);
  Options o;
  o.paths = {std::string(ZERODROP_AUDIT_DATA) + "/broken.yaml"};
  Report r = audit_paths(o);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].mark.line, 13);
  EXPECT_NE(r.problems[0].message.find("spec.replicas: expected a whole number, got 'two'"),
            std::string::npos);
  EXPECT_EQ(r.problems[1].mark.line, 28);
}

}  // namespace
}  // namespace zerodrop::audit
