#include "verify/anchor.h"

#include <yaml.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "verify/agents.h"
#include "verify/rbac.h"
#include "verify/yaml_out.h"

namespace zerodrop::verify {
namespace {

using nlohmann::json;

TEST(Anchor, LabelledConfigMapNamedAfterTheRunOwnsTheAgentsJob) {
  json anchor = anchor_manifest("shop", "abc123", "web");
  EXPECT_EQ(anchor["kind"], "ConfigMap");
  EXPECT_EQ(anchor["metadata"]["name"], "zerodrop-verify-abc123");
  EXPECT_EQ(anchor["metadata"]["namespace"], "shop");
  const json& labels = anchor["metadata"]["labels"];
  EXPECT_EQ(labels["app.kubernetes.io/managed-by"], "zerodrop");
  EXPECT_EQ(labels["app.kubernetes.io/name"], "zerodrop-verify");  // what --cleanup selects
  EXPECT_EQ(labels["zerodrop.dev/run"], "abc123");
  EXPECT_EQ(anchor["data"]["deployment"], "web");

  AgentJob j;
  j.run_id = "abc123";
  EXPECT_FALSE(agent_job_manifest(j)["metadata"].contains("ownerReferences"));
  j.owner = anchor_reference("zerodrop-verify-abc123", "uid-1");
  json owners = agent_job_manifest(j)["metadata"]["ownerReferences"];
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0], json({{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"name", "zerodrop-verify-abc123"},
                             {"uid", "uid-1"}}));
  EXPECT_EQ(agent_job_manifest(j)["metadata"]["labels"]["app.kubernetes.io/name"],
            "zerodrop-verify-agent");
}

// Parses YAML with LibYAML's parser and returns the scalars in order, each tagged with how it
// was written: "plain:x" or "quoted:x".
std::vector<std::string> scalars(const std::string& text) {
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  std::vector<std::string> out;
  for (bool done = false; !done;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&parser, &e)) {
      out.push_back("error");
      break;
    }
    if (e.type == YAML_SCALAR_EVENT) {
      std::string value(reinterpret_cast<char*>(e.data.scalar.value), e.data.scalar.length);
      out.push_back((e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "plain:" : "quoted:")
                    + value);
    }
    done = e.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&parser);
  return out;
}

TEST(YamlOut, BlockStyleWithStringsThatLookLikeOtherTypesQuoted) {
  json j = {{"a", "web"},      {"b", "80"},  {"c", "true"}, {"d", ""},
            {"e", 80},         {"f", false}, {"g", "yes"},  {"h", json::array()},
            {"i", {"x", "y"}}, {"j", "1.5"}, {"k", nullptr}};
  std::string text = to_yaml(j);
  EXPECT_EQ(text.rfind("a: web\n", 0), 0u) << text;
  EXPECT_NE(text.find("i:\n- x\n- \"y\"\n"), std::string::npos) << text;  // y: YAML 1.1 true
  std::vector<std::string> want = {
      "plain:a", "plain:web",  "plain:b", "quoted:80", "plain:c", "quoted:true",
      "plain:d", "quoted:",    "plain:e", "plain:80",  "plain:f", "plain:false",
      "plain:g", "quoted:yes", "plain:h", "plain:i",   "plain:x", "quoted:y",
      "plain:j", "quoted:1.5", "plain:k", "plain:null"};
  EXPECT_EQ(scalars(text), want) << text;
}

TEST(RoleYaml, AgentsNeedTheAnchorAndCleanupListsIt) {
  std::string yaml = role_yaml("shop", Action::restart, AgentMode::per_node);
  EXPECT_NE(yaml.find("resources: [configmaps]\n  verbs: [create, delete, list]"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("resources: [jobs]\n  verbs: [create, delete, list]"), std::string::npos)
      << yaml;
  EXPECT_EQ(role_yaml("shop", Action::restart).find("configmaps"), std::string::npos);
  // set-image patches the Deployment as restart does.
  bool patch = false;
  for (const Permission& p : needed_permissions(Action::set_image)) {
    patch = patch || p.text() == "deployments.apps patch";
  }
  EXPECT_TRUE(patch);
}

}  // namespace
}  // namespace zerodrop::verify
