#include "audit/output.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "audit/rule.h"
#include "audit_testing.h"
#include "base/error.h"

namespace zerodrop::audit {
namespace {

using testing::audit_text;
using testing::deployment;
using testing::has;
using testing::service;
namespace id = rule_id;

constexpr const char* kBare = R"(          image: gcr.io/distroless/static
          ports: [{name: http, containerPort: 8080}]
          readinessProbe: {tcpSocket: {port: http}}
          livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 2, failureThreshold: 2}
)";

std::string render(void (*write)(const Report&, std::ostream&), const Report& r) {
  std::ostringstream out;
  write(r, out);
  return out.str();
}

TEST(Output, TextIsCompilerStyleGroupedPerObject) {
  std::string text = render(write_text, audit_text(service() + deployment(kBare)));
  EXPECT_NE(text.find("Deployment web (t.yaml:8)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t.yaml:17:11: error: container 'app' takes traffic from Service 'web' but "
                      "has no preStop delay"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[prestop-missing, deregistration-race]\n  fix: "), std::string::npos);
  EXPECT_NE(text.find("audited 0 files, 2 objects, 1 workload: 1 error, 3 warnings, 0 infos"),
            std::string::npos)
      << text;
}

TEST(Output, JsonHasEveryFieldOfAFinding) {
  auto doc = nlohmann::json::parse(render(write_json, audit_text(service() + deployment(kBare))));
  EXPECT_EQ(doc["version"], 1);
  ASSERT_FALSE(doc["findings"].empty());
  const auto& f = doc["findings"][0];
  for (const char* key :
       {"rule", "hole", "severity", "object", "file", "line", "column", "message", "fix"}) {
    EXPECT_TRUE(f.contains(key)) << key;
  }
  EXPECT_EQ(f["object"]["kind"], "Deployment");
  EXPECT_EQ(f["object"]["container"], "app");
  EXPECT_EQ(doc["summary"]["errors"], 1);
  EXPECT_EQ(doc["summary"]["holes"]["readiness-lies"], 1);
}

TEST(Output, GithubAnnotationsEscapeTheirProperties) {
  kube::Loaded loaded = kube::load_text("a: [\n", "dir/a,b.yaml");
  Report r = audit_objects({}, loaded.problems, {});
  std::string text = render(write_github, r);
  EXPECT_EQ(text.rfind("::error file=dir/a%2Cb.yaml,line=", 0), 0u) << text;
  EXPECT_NE(text.find(",title=invalid-manifest::invalid YAML"), std::string::npos) << text;
  EXPECT_NE(text.find("%0Afix: "), std::string::npos);
}

TEST(Output, SarifCarriesRulesAndLocations) {
  auto doc = nlohmann::json::parse(render(write_sarif, audit_text(service() + deployment(kBare))));
  EXPECT_EQ(doc["version"], "2.1.0");
  const auto& run = doc["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "zerodrop");
  EXPECT_EQ(run["tool"]["driver"]["rules"].size(), rules().size());
  const auto& result = run["results"][0];
  int index = result["ruleIndex"];
  EXPECT_EQ(run["tool"]["driver"]["rules"][index]["id"], result["ruleId"]);
  const auto& region = result["locations"][0]["physicalLocation"]["region"];
  EXPECT_GE(region["startLine"].get<int>(), 1);
  EXPECT_EQ(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "t.yaml");
}

TEST(Fix, PatchClosesTheHolesAndParsesAsYaml) {
  Options o;
  std::ostringstream out;
  write_patches(
      audit_text(service() + deployment(kBare, "", "      terminationGracePeriodSeconds: 5\n")), o,
      out);
  std::string text = out.str();
  EXPECT_NE(text.find("# closes: prestop-missing (app)"), std::string::npos) << text;
  std::vector<YAML::Node> docs = YAML::LoadAll(text);
  ASSERT_EQ(docs.size(), 2u) << text;  // the Deployment patch and a new PDB? no: 1 replica
  YAML::Node spec = docs[0]["spec"]["template"]["spec"];
  EXPECT_EQ(spec["terminationGracePeriodSeconds"].as<int>(), 12);  // 5 + 5 + 2
  YAML::Node c = spec["containers"][0];
  EXPECT_EQ(c["name"].as<std::string>(), "app");
  EXPECT_EQ(c["lifecycle"]["preStop"]["sleep"]["seconds"].as<int>(), 5);
  EXPECT_TRUE(c["readinessProbe"]["tcpSocket"].IsNull());
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"].as<std::string>(), "http");
  EXPECT_EQ(c["livenessProbe"]["periodSeconds"].as<int>(), 10);
  EXPECT_EQ(docs[0]["spec"]["replicas"].as<int>(), 2);
}

TEST(Fix, OlderKubernetesGetsExecAndDistrolessGetsZerodropSleep) {
  Options o;
  o.kube_version = parse_kube_version("1.29", "--k8s-version");
  std::ostringstream out;
  write_patches(audit_text(service() + deployment(kBare)), o, out);
  YAML::Node c = YAML::LoadAll(out.str())[0]["spec"]["template"]["spec"]["containers"][0];
  auto command = c["lifecycle"]["preStop"]["exec"]["command"].as<std::vector<std::string>>();
  EXPECT_EQ(command, (std::vector<std::string>{"/zerodrop", "sleep", "5"}));
  EXPECT_NE(out.str().find("copy the static zerodrop binary"), std::string::npos);
}

TEST(Fix, UnpatchedContainerFindingsLeaveNoEmptyTemplate) {
  Options o;
  std::ostringstream out;
  std::string probes = R"(          image: web:1
          ports: [{name: http, containerPort: 8080}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          readinessProbe: {httpGet: {path: /healthz, port: http}}
          livenessProbe: {httpGet: {path: /healthz, port: http}}
)";
  write_patches(audit_text(service() + deployment(probes)), o, out);
  EXPECT_NE(out.str().find("# not patched: liveness-same-as-readiness (app)"), std::string::npos);
  EXPECT_EQ(out.str().find("template:"), std::string::npos) << out.str();
  YAML::Node patch = YAML::LoadAll(out.str())[0];
  EXPECT_EQ(patch["spec"]["replicas"].as<int>(), 2);
}

TEST(Ignores, AnnotationOnPodTemplateAndConfigEntries) {
  std::string dep = deployment(kBare);
  dep.replace(dep.find("metadata: {labels: {app: web}}"), 30,
              "metadata: {labels: {app: web}, annotations: {zerodrop.dev/ignore: "
              "\"prestop-missing, readiness-lies\"}}");
  Report r = audit_text(service() + dep);
  EXPECT_FALSE(has(r, id::kPreStopMissing));
  EXPECT_FALSE(has(r, id::kReadinessTcpOnHttp)) << "a hole id ignores its rules";
  EXPECT_TRUE(has(r, id::kLivenessAggressive));

  auto path = std::filesystem::temp_directory_path() / "zerodrop-audit-config.yaml";
  std::ofstream(path) << "propagation: 8s\nignore:\n  - {rule: liveness-aggressive, name: we*}\n";
  ConfigFile config = read_config(path.string());
  EXPECT_EQ(config.propagation, "8s");
  Options o;
  o.ignores = config.ignores;
  EXPECT_FALSE(has(audit_text(service() + deployment(kBare), o), id::kLivenessAggressive));
  std::ofstream(path) << "ignore:\n  - {rule: no-such-rule}\n";
  EXPECT_THROW(read_config(path.string()), Error);
  std::ofstream(path) << "propagaton: 8s\n";
  try {
    read_config(path.string());
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":1:1: unknown setting 'propagaton'"), std::string::npos);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace zerodrop::audit
