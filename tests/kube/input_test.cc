// Input as real users hand it over: YAML merge keys, encodings, JSON streams, empty input.
#include <gtest/gtest.h>

#include "kube/loader.h"

namespace zerodrop::kube {
namespace {

const Workload& only_workload(const Loaded& loaded) {
  for (const Object& object : loaded.objects) {
    if (const auto* w = std::get_if<Workload>(&object)) {
      return *w;
    }
  }
  throw std::runtime_error("no workload");
}

// As kubectl reads it: "<<: *anchor" brings the anchor's keys, the map's own keys win, and in a
// list of merged maps the earlier wins.
TEST(MergeKeys, AreResolvedAsKubectlDoes) {
  constexpr const char* kText = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - &base
          name: app
          image: registry.example/web:1.0
          ports: [{name: http, containerPort: 8080}]
          readinessProbe: &probe {httpGet: {path: /ready, port: http}, periodSeconds: 5}
        - <<: *base
          name: copy
          livenessProbe:
            <<: [*probe, {timeoutSeconds: 9, periodSeconds: 99}]
            httpGet: {path: /livez, port: http}
)";
  Loaded loaded = load_text(kText, "merge.yaml");
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].str();
  const Workload& w = only_workload(loaded);
  ASSERT_EQ(w.containers.size(), 2u);
  const Container& copy = w.containers[1];
  EXPECT_EQ(copy.name, "copy");
  EXPECT_EQ(copy.image, "registry.example/web:1.0");
  ASSERT_EQ(copy.ports.size(), 1u);
  ASSERT_TRUE(copy.readiness_probe);
  ASSERT_TRUE(copy.liveness_probe);
  EXPECT_EQ(copy.liveness_probe->handler.path, "/livez");
  EXPECT_EQ(copy.liveness_probe->period_seconds, 5);  // *probe comes first in the list
  EXPECT_EQ(copy.liveness_probe->timeout_seconds, 9);
}

TEST(MergeKeys, OfAScalarIsAProblem) {
  Loaded loaded = load_text("apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {<<: 5}\n",
                            "bad.yaml");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_NE(loaded.problems[0].message.find("merge key"), std::string::npos);
}

TEST(MergeKeys, ChainsAreBounded) {
  std::string text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n";
  text += "  k0: &m0 {a0: x, b0: x, c0: x, d0: x}\n";
  for (int i = 1; i < 3000; ++i) {
    text += "  k" + std::to_string(i) + ": &m" + std::to_string(i) + " {<<: *m"
            + std::to_string(i - 1) + ", n" + std::to_string(i) + ": x}\n";
  }
  Loaded loaded = load_text(text, "chain.yaml");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_NE(loaded.problems[0].message.find("merge keys"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::kube
