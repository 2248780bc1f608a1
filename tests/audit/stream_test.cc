// audit_stream (what `zerodrop audit` runs): two passes, one file at a time, findings handed to a
// sink as they are made. It must find exactly what the in-memory audit finds, across files.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "audit/cluster.h"
#include "audit/output.h"
#include "audit_testing.h"

namespace zerodrop::audit {
namespace {

namespace fs = std::filesystem;
using testing::deployment;
using testing::kGoodContainer;
using testing::service;

// Every finding of a JSON document, as its sorted dumps, and its summary.
std::pair<std::multiset<std::string>, nlohmann::json> parse(const std::string& text) {
  nlohmann::json doc = nlohmann::json::parse(text);
  std::multiset<std::string> findings;
  for (const auto& f : doc["findings"]) {
    findings.insert(f.dump());
  }
  return {findings, doc["summary"]};
}

std::string streamed(const Options& o) {
  std::ostringstream out;
  auto sink = json_sink(out);
  audit_stream(o, *sink);
  return out.str();
}

class TempDir {
public:
  TempDir() {
    path_ = fs::temp_directory_path()
            / ("zerodrop-stream-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }

  ~TempDir() { fs::remove_all(path_); }

  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }

  std::string str() const { return path_.string(); }

private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(AuditStream, FindsWhatTheInMemoryAuditFindsOnEveryFixture) {
  Options o;
  o.paths = {ZERODROP_AUDIT_DATA};
  std::ostringstream in_memory;
  write_json(audit_paths(o), in_memory);
  auto [want, want_summary] = parse(in_memory.str());
  auto [got, got_summary] = parse(streamed(o));
  EXPECT_GT(want.size(), 10u);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_summary, want_summary);
}

TEST(AuditStream, MatchesAServiceHpaAndPdbFromLaterFiles) {
  TempDir dir;
  // The workload comes first; what routes to it, scales it and guards it, in files after it.
  dir.write("a-deployment.yaml", deployment(kGoodContainer));
  dir.write("b-service.yaml", service());
  dir.write("c-hpa.yaml", R"(apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 5
)");
  dir.write("d-pdb.yaml", R"(apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
)");
  Options o;
  o.paths = {dir.str()};
  auto [got, summary] = parse(streamed(o));
  std::multiset<std::string> rules;
  for (const std::string& f : got) {
    rules.insert(nlohmann::json::parse(f)["rule"].get<std::string>());
  }
  // A Service selects it (no no-traffic); the HPA's minReplicas 1 is the floor, its finding
  // points into c-hpa.yaml; the PDB allows no eviction with one replica.
  EXPECT_EQ(rules.count("no-traffic"), 0u);
  EXPECT_EQ(rules.count("replicas-too-few"), 1u);
  EXPECT_EQ(rules.count("pdb-blocks-eviction"), 1u);
  bool hpa_file = false;
  for (const std::string& f : got) {
    auto j = nlohmann::json::parse(f);
    hpa_file = hpa_file
               || (j["rule"] == "replicas-too-few"
                   && j["file"].get<std::string>().ends_with("c-hpa.yaml") && j["line"] == 6);
  }
  EXPECT_TRUE(hpa_file) << "the replica finding should point at minReplicas in c-hpa.yaml";
  EXPECT_EQ(summary["files"], 4);
  EXPECT_EQ(summary["objects"], 4);
  EXPECT_EQ(summary["workloads"], 1);
}

TEST(AuditStream, ReadsStdinOnceForBothPasses) {
  // The Deployment precedes its Service on stdin: the first pass must have seen the Service.
  std::istringstream input(
      deployment("          image: web:1\n          ports: [{name: http, containerPort: 8080}]\n")
      + "---\n" + service());
  std::streambuf* saved = std::cin.rdbuf(input.rdbuf());
  Options o;
  o.paths = {"-"};
  std::string text = streamed(o);
  std::cin.rdbuf(saved);
  auto [got, summary] = parse(text);
  bool prestop = false;
  for (const std::string& f : got) {
    auto j = nlohmann::json::parse(f);
    prestop = prestop || (j["rule"] == "prestop-missing" && j["file"] == "<stdin>");
  }
  EXPECT_TRUE(prestop) << text;
  EXPECT_EQ(summary["objects"], 2);
}

TEST(AuditStream, ProblemsAreReportedOnceAndCountTowardTheExitCode) {
  TempDir dir;
  dir.write("bad.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: [1, 2\n");
  Options o;
  o.paths = {dir.str()};
  std::ostringstream out;
  auto sink = text_sink(out);
  Summary s = audit_stream(o, *sink);
  EXPECT_EQ(s.by_severity[static_cast<int>(Severity::error)], 1);
  EXPECT_TRUE(failed(s, o));
  EXPECT_NE(out.str().find("invalid-manifest"), std::string::npos) << out.str();
}

TEST(Cluster, MayRouteNamesEveryRoutingKind) {
  EXPECT_TRUE(Cluster::may_route("kind: Service\n"));
  EXPECT_TRUE(Cluster::may_route("{\"kind\": \"Ingress\"}"));
  EXPECT_TRUE(Cluster::may_route("kind: PodDisruptionBudget"));
  EXPECT_TRUE(Cluster::may_route("kind: HorizontalPodAutoscaler"));
  EXPECT_TRUE(Cluster::may_route("kind: List\nitems:\n- kind: Service\n"));
  EXPECT_FALSE(Cluster::may_route("kind: Deployment\nmetadata: {name: web}\n"));
  EXPECT_FALSE(Cluster::may_route("kind: ConfigMap\n"));
}

}  // namespace
}  // namespace zerodrop::audit
