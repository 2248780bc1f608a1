#include "audit/output.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "audit/rule.h"
#include "audit_testing.h"
#include "base/error.h"
#include "kube/yaml_tree.h"

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

using kube::detail::YamlNode;

// The non-empty documents of a multi-document text, read by the parser the auditor uses (the
// patches must be YAML that parser and kubectl accept).
struct YamlDocs {
  explicit YamlDocs(const std::string& text) {
    std::istringstream in(text);
    std::string chunk;
    auto flush = [&] {
      auto doc = std::make_unique<kube::detail::YamlDocument>();
      doc->parse(chunk);
      if (doc->root() != nullptr && !doc->root()->is_null()) {
        docs.push_back(std::move(doc));
      }
      chunk.clear();
    };
    for (std::string line; std::getline(in, line);) {
      if (line == "---") {
        flush();
      } else {
        chunk += line + "\n";
      }
    }
    flush();
  }

  std::vector<std::unique_ptr<kube::detail::YamlDocument>> docs;
};

// The node at a dotted path ("spec.containers.0.name": a number indexes a list); null if absent.
const YamlNode* at(const YamlNode* node, std::string_view path) {
  while (node != nullptr && !path.empty()) {
    std::string_view step = path.substr(0, path.find('.'));
    path.remove_prefix(std::min(path.size(), step.size() + 1));
    size_t index = 0;
    const YamlNode* next = nullptr;
    if (node->is_sequence()
        && std::from_chars(step.data(), step.data() + step.size(), index).ec == std::errc{}) {
      next = index < node->items.size() ? node->items[index] : nullptr;
    } else if (node->is_map()) {
      for (size_t i = 0; i + 1 < node->items.size(); i += 2) {
        if (node->items[i]->scalar == step) {
          next = node->items[i + 1];
        }
      }
    }
    node = next;
  }
  return node;
}

std::string scalar_at(const YamlNode* node, std::string_view path) {
  const YamlNode* n = at(node, path);
  return n != nullptr && n->is_scalar() ? n->scalar : "(no scalar at " + std::string(path) + ")";
}

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

// The finding lines are written by hand, byte for byte as nlohmann::json would dump them.
TEST(Output, JsonFindingLinesAreWhatNlohmannDumps) {
  Finding f;
  f.rule = id::kPreStopMissing;
  f.hole = record::Hole::deregistration_race;
  f.object = {"Deployment", "shop", "web", "app"};
  f.file = "dir/a \"b\".yaml";
  f.mark = {12, 7};
  f.message = "quote \" backslash \\ \b\f\n\r\t \x01\x1f\x7f é ✓ / end";
  f.fix = "";
  std::ostringstream out;
  auto sink = json_sink(out);
  sink->problem(f);
  f.hole.reset();
  sink->problem(f);
  sink->finish(Summary{});
  std::istringstream lines(out.str());
  std::vector<std::string> found;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("    {")) {
      found.push_back(line.substr(4, line.back() == ',' ? line.size() - 5 : std::string::npos));
    }
  }
  ASSERT_EQ(found.size(), 2u) << out.str();
  for (const std::string& line : found) {
    EXPECT_EQ(line, nlohmann::json::parse(line).dump());
  }
  auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["findings"][0]["message"], f.message);
  EXPECT_EQ(doc["findings"][0]["hole"], "deregistration-race");
  EXPECT_TRUE(doc["findings"][1]["hole"].is_null());
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
  YamlDocs yaml(text);
  ASSERT_EQ(yaml.docs.size(), 2u) << text;  // the Deployment patch and a new PDB? no: 1 replica
  const YamlNode* spec = at(yaml.docs[0]->root(), "spec.template.spec");
  EXPECT_EQ(scalar_at(spec, "terminationGracePeriodSeconds"), "12");  // 5 + 5 + 2
  const YamlNode* c = at(spec, "containers.0");
  EXPECT_EQ(scalar_at(c, "name"), "app");
  EXPECT_EQ(scalar_at(c, "lifecycle.preStop.sleep.seconds"), "5");
  const YamlNode* tcp = at(c, "readinessProbe.tcpSocket");
  EXPECT_TRUE(tcp == nullptr || tcp->is_null());
  EXPECT_EQ(scalar_at(c, "readinessProbe.httpGet.port"), "http");
  EXPECT_EQ(scalar_at(c, "livenessProbe.periodSeconds"), "10");
  EXPECT_EQ(scalar_at(yaml.docs[0]->root(), "spec.replicas"), "2");
}

TEST(Fix, OlderKubernetesGetsExecAndDistrolessGetsZerodropSleep) {
  Options o;
  o.kube_version = parse_kube_version("1.29", "--k8s-version");
  std::ostringstream out;
  write_patches(audit_text(service() + deployment(kBare)), o, out);
  YamlDocs yaml(out.str());
  ASSERT_FALSE(yaml.docs.empty()) << out.str();
  const YamlNode* command =
      at(yaml.docs[0]->root(), "spec.template.spec.containers.0.lifecycle.preStop.exec.command");
  ASSERT_TRUE(command != nullptr && command->is_sequence()) << out.str();
  std::vector<std::string> words;
  for (const YamlNode* word : command->items) {
    words.push_back(word->scalar);
  }
  EXPECT_EQ(words, (std::vector<std::string>{"/zerodrop", "sleep", "5"}));
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
  YamlDocs yaml(out.str());
  ASSERT_FALSE(yaml.docs.empty()) << out.str();
  EXPECT_EQ(scalar_at(yaml.docs[0]->root(), "spec.replicas"), "2");
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

  auto path = std::filesystem::temp_directory_path()
              / ("zerodrop-audit-config-" + std::to_string(::getpid()) + ".yaml");
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
