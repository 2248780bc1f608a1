// Input as real users hand it over: YAML merge keys, encodings, JSON streams, empty input.
#include <fstream>

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
  Loaded loaded =
      load_text("apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {<<: 5}\n", "bad.yaml");
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

namespace zerodrop::kube {
namespace {

constexpr const char* kThreeObjects =
    "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {selector: {app: a}}\n---\n"
    "apiVersion: v1\nkind: Service\nmetadata: {name: b}\nspec: {selector: {app: b}}\n---\n"
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";

std::string utf16le(std::string_view ascii) {
  std::string out = "\xFF\xFE";
  for (char c : ascii) {
    out += c;
    out += '\0';
  }
  return out;
}

std::string utf32be(std::string_view ascii) {
  std::string out("\0\0\xFE\xFF", 4);
  for (char c : ascii) {
    out += std::string(3, '\0');
    out += c;
  }
  return out;
}

TEST(Encoding, Utf16AndUtf32WithAByteOrderMarkAreReadWhole) {
  for (const std::string& text : {utf16le(kThreeObjects), utf32be(kThreeObjects)}) {
    Loaded loaded = load_text(text, "ps.yaml");
    EXPECT_TRUE(loaded.problems.empty());
    ASSERT_EQ(loaded.objects.size(), 3u);
    EXPECT_EQ(meta_of(loaded.objects[2]).name, "c");
    EXPECT_EQ(meta_of(loaded.objects[1]).marks.self.line, 6);
  }
}

TEST(Encoding, NulBytesWithoutAMarkAreAClearProblem) {
  std::string text = utf16le(kThreeObjects).substr(2);  // the mark lost
  std::string tmp = ::testing::TempDir() + "/nobom.yaml";
  std::ofstream(tmp, std::ios::binary) << text;
  Loaded loaded = load_file(tmp);
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_NE(loaded.problems[0].message.find("UTF-16"), std::string::npos);
  EXPECT_TRUE(loaded.objects.empty());
  // An odd number of bytes cannot be UTF-16.
  Loaded odd = load_text(utf16le("a: b") + "x", "odd.yaml");
  ASSERT_EQ(odd.problems.size(), 1u);
}

TEST(JsonStream, EveryValueIsReadWithItsPosition) {
  std::string text =
      "{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"a}{\"}}\n"
      "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}"
      "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"c\"}}\n";
  Loaded loaded = load_text(text, "stream.json");
  EXPECT_TRUE(loaded.problems.empty());
  ASSERT_EQ(loaded.objects.size(), 3u);
  EXPECT_EQ(meta_of(loaded.objects[0]).name, "a}{");
  EXPECT_EQ(meta_of(loaded.objects[2]).name, "c");
  EXPECT_EQ(meta_of(loaded.objects[2]).marks.self.line, 2);
  EXPECT_GT(meta_of(loaded.objects[2]).marks.self.column, 60);
  // One JSON document stays one document.
  EXPECT_EQ(load_text("[1, 2]\n", "one.json").problems.size(), 1u);  // not an object
  EXPECT_EQ(load_text("{\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": []}", "l.json")
                .problems.size(),
            0u);
}

TEST(FileLimit, AnOversizedFileIsNotReadAtAll) {
  std::string tmp = ::testing::TempDir() + "/big.yaml";
  std::ofstream(tmp) << std::string(2000, '#');
  LoadLimits limits;
  limits.max_file_bytes = 1000;
  FileText file = read_file(tmp, limits);
  ASSERT_TRUE(file.problem);
  EXPECT_TRUE(file.text.empty());
  EXPECT_NE(file.problem->message.find("not read"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::kube
