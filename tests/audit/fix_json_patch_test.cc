#include "audit/fix_json_patch.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "audit/output.h"
#include "audit_testing.h"

namespace zerodrop::audit {
namespace {

using nlohmann::json;
using testing::audit_text;

// An Argo Rollout, written as JSON (which the audit reads as YAML) so that the emitted JSON
// patch can be applied to the very object: an init container before a native sidecar, a main
// container after a plain one, a postStart hook beside a preStop whose program the image lacks,
// an aggressive liveness probe, a canary that takes half the replicas, a short grace period.
const json kRollout = json::parse(R"({
  "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
  "metadata": {"name": "checkout", "namespace": "shop"},
  "spec": {
    "replicas": 2,
    "selector": {"matchLabels": {"app": "checkout"}},
    "strategy": {"canary": {"maxUnavailable": 1, "steps": [{"setWeight": 20}]}},
    "template": {
      "metadata": {"labels": {"app": "checkout"}},
      "spec": {
        "terminationGracePeriodSeconds": 10,
        "initContainers": [
          {"name": "migrate", "image": "migrate:1"},
          {"name": "proxy", "image": "proxy:1", "restartPolicy": "Always",
           "ports": [{"name": "proxy", "containerPort": 15001}],
           "readinessProbe": {"tcpSocket": {"port": 15001}}}],
        "containers": [
          {"name": "log", "image": "log:1"},
          {"name": "server", "image": "gcr.io/distroless/static:nonroot",
           "ports": [{"name": "grpc", "containerPort": 5050}],
           "lifecycle": {"postStart": {"exec": {"command": ["/server", "warm"]}},
                         "preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 10"]}}},
           "readinessProbe": {"grpc": {"port": 5050}},
           "livenessProbe": {"grpc": {"port": 5050}, "periodSeconds": 2, "failureThreshold": 1}}]
      }
    }
  }
})");

constexpr const char* kServices = R"(---
apiVersion: v1
kind: Service
metadata: {name: checkout, namespace: shop}
spec:
  selector: {app: checkout}
  ports: [{port: 80, targetPort: proxy}, {name: grpc, port: 5050, targetPort: grpc}]
)";

// The --fix output for a manifest.
std::string fix_text(const std::string& manifest, const Options& options = {}) {
  std::ostringstream out;
  write_patches(audit_text(manifest, options), options, out);
  return out.str();
}

// The JSON patch of the first document: its "- {...}" lines as one array.
json ops_of(const std::string& text) {
  json ops = json::array();
  std::istringstream in(text);
  for (std::string line; std::getline(in, line) && line != "---";) {
  }
  for (std::string line; std::getline(in, line) && line != "---";) {
    if (line.starts_with("- ")) {
      ops.push_back(json::parse(line.substr(2)));
    }
  }
  return ops;
}

TEST(FixJsonPatch, PatchTypeFollowsTheApiGroup) {
  kube::Meta meta;
  for (const char* builtin : {"v1", "apps/v1", "batch/v1", "policy/v1", "autoscaling/v2"}) {
    meta.api_version = builtin;
    EXPECT_EQ(patch_type(meta), PatchType::strategic) << builtin;
  }
  for (const char* custom : {"argoproj.io/v1alpha1", "apps.kruise.io/v1beta1"}) {
    meta.api_version = custom;
    EXPECT_EQ(patch_type(meta), PatchType::json) << custom;
  }
}

TEST(FixJsonPatch, RolloutGetsAJsonPatchThatAppliesAndKeepsEverythingElse) {
  std::string text = fix_text(kRollout.dump() + "\n" + kServices);
  EXPECT_NE(text.find("# apply: kubectl patch rollout.argoproj.io/checkout -n shop --type=json "
                      "--patch-file=FILE"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("kind: Rollout"), std::string::npos) << "no strategic merge:\n" << text;
  json ops = ops_of(text);
  ASSERT_FALSE(ops.empty()) << text;
  json patched;
  ASSERT_NO_THROW(patched = kRollout.patch(ops)) << ops.dump(2);  // every parent exists

  const json& pod = patched["spec"]["template"]["spec"];
  json server = pod["containers"][1];
  EXPECT_EQ(server["name"], "server");
  EXPECT_EQ(server["image"], "gcr.io/distroless/static:nonroot");
  EXPECT_EQ(server["ports"], kRollout["spec"]["template"]["spec"]["containers"][1]["ports"]);
  EXPECT_EQ(server["lifecycle"]["postStart"]["exec"]["command"][1], "warm");
  EXPECT_EQ(server["lifecycle"]["preStop"], json::parse(R"({"sleep": {"seconds": 5}})"));
  EXPECT_EQ(server["livenessProbe"]["periodSeconds"], 10);
  EXPECT_EQ(server["livenessProbe"]["grpc"]["port"], 5050);
  EXPECT_EQ(pod["containers"][0], kRollout["spec"]["template"]["spec"]["containers"][0]);
  EXPECT_EQ(pod["initContainers"][0], kRollout["spec"]["template"]["spec"]["initContainers"][0]);
  const json& canary = patched["spec"]["strategy"]["canary"];
  EXPECT_EQ(canary["maxUnavailable"], 0);
  EXPECT_EQ(canary["maxSurge"], 1);
  EXPECT_EQ(canary["steps"], kRollout["spec"]["strategy"]["canary"]["steps"]);
  // The main hook cannot run (no shell in the image), so the sidecar needs its own; it runs
  // after the main containers have stopped: 5 s + 5 s drain, then 5 s, + 2 s margin.
  EXPECT_EQ(pod["initContainers"][1]["lifecycle"]["preStop"]["sleep"]["seconds"], 5);
  EXPECT_EQ(pod["initContainers"][1]["image"], "proxy:1");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 17);
}

TEST(FixJsonPatch, KeysTheManifestLacksAreAddedWhole) {
  json rollout = kRollout;
  json& server = rollout["spec"]["template"]["spec"]["containers"][1];
  server.erase("lifecycle");
  server.erase("readinessProbe");
  server["image"] = "registry.example/server:1";
  server["livenessProbe"] = json::parse(R"({"httpGet": {"path": "/healthz", "port": 5050}})");
  std::string text = fix_text(rollout.dump() + "\n" + kServices);
  json patched;
  ASSERT_NO_THROW(patched = rollout.patch(ops_of(text))) << text;
  const json& c = patched["spec"]["template"]["spec"]["containers"][1];
  EXPECT_EQ(c["lifecycle"]["preStop"]["sleep"]["seconds"], 5) << text;
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/healthz") << text;
  EXPECT_EQ(c["image"], "registry.example/server:1") << text;
}

TEST(FixJsonPatch, BuiltInKindsKeepTheStrategicMergePatch) {
  std::string text = fix_text(testing::service() + testing::deployment(R"(          image: web:1
          ports: [{name: http, containerPort: 8080}]
)"));
  EXPECT_NE(text.find("# apply: kubectl patch deployment.apps/web --type=strategic"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kind: Deployment"), std::string::npos) << text;
}

TEST(FixJsonPatch, OldKubernetesSaysExecSleepNeedsASleepProgram) {
  Options o;
  o.kube_version = parse_kube_version("1.29", "--k8s-version");
  std::string text = fix_text(testing::service() + testing::deployment(R"(          image: web:1
          ports: [{name: http, containerPort: 8080}]
)"),
                              o);
  EXPECT_NE(text.find("command: [\"sleep\", \"5\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("exec sleep needs a sleep program in web:1 (Kubernetes 1.29 has no native "
                      "sleep); if it has none, copy the static zerodrop in"),
            std::string::npos)
      << text;
  // The advice that does it: commented, its apply line left a comment by `sed 's/^# //'`.
  EXPECT_NE(text.find("---\n## zerodrop --fix advice: Deployment web: for an image with no sleep "
                      "program (container 'app')"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n## apply: kubectl patch deployment.apps/web --type=strategic "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n#           command: [\"/zerodrop\", \"copy-self\", \"/target\"]\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace zerodrop::audit
