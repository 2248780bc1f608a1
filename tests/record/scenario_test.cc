#include "record/scenario.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::record {
namespace {

using namespace std::chrono_literals;

// What `zerodrop lab` wrote into run.json before the scenario was typed: read back and written
// again, it is the same text, key for key.
TEST(Scenario, LabAndSimStringsRoundTripUnchanged) {
  const std::map<std::string, std::string> lab = {
      {"action", "restart"},    {"grace", "5s"},       {"max_surge", "25%"},
      {"max_unavailable", "0"}, {"nodes", "2"},        {"port", "0"},
      {"prestop", "sleep:1s"},  {"readiness", "tcp"},  {"replicas", "2"},
      {"container", "web"},     {"propagation", "1s"}, {"k8s_version", "1.29"}};
  Scenario s = scenario_from_strings(lab);
  EXPECT_EQ(s.replicas, 2);
  EXPECT_EQ(s.grace, Duration(5s));
  EXPECT_EQ(s.prestop->delay, Duration(1s));
  EXPECT_EQ(s.readiness->kind, ProbeKind::tcp);
  EXPECT_EQ(s.max_surge, IntOrPercent::percent(25));
  EXPECT_EQ(s.max_unavailable, IntOrPercent::count(0));
  EXPECT_EQ(s.port, 0);
  EXPECT_EQ(s.container, "web");
  EXPECT_EQ(s.k8s_version, "1.29");
  EXPECT_EQ(s.extra, (std::map<std::string, std::string>{
                         {"action", "restart"}, {"nodes", "2"}, {"propagation", "1s"}}));
  EXPECT_EQ(to_strings(s), lab);

  // The simulator writes a preStop sleep in bare seconds and an http probe.
  const std::map<std::string, std::string> sim = {
      {"prestop", "sleep:2.5"}, {"readiness", "http:/ready"}, {"grace", "30s"}};
  Scenario t = scenario_from_strings(sim);
  EXPECT_EQ(t.prestop->delay, Duration(2500ms));
  EXPECT_EQ(t.readiness, (Readiness{ProbeKind::http, "/ready"}));
  EXPECT_EQ(to_strings(t), sim);
}

TEST(Scenario, HooksAndProbesKnowWhatTheyCanSay) {
  EXPECT_EQ(parse_prestop("none", "p").delay, Duration(0));
  EXPECT_FALSE(parse_prestop("exec:sh -c 'sleep 5'", "p").delay);
  EXPECT_FALSE(parse_prestop("http:/drain", "p").delay);
  EXPECT_EQ(parse_readiness("exec:cat /tmp/ready", "r").target, "cat /tmp/ready");
  EXPECT_EQ(parse_readiness("none", "r").text(), "none");
  for (const char* bad : {"sleep", "sleep:soon", "exec", "wait:5s", ""}) {
    EXPECT_THROW(parse_prestop(bad, "p"), Error) << bad;
  }
  EXPECT_EQ(parse_readiness("grpc", "r").text(), "grpc");
  EXPECT_EQ(parse_readiness("grpc:zd.Echo", "r").target, "zd.Echo");
  for (const char* bad : {"http", "grpcx:1", "none:x", ""}) {
    EXPECT_THROW(parse_readiness(bad, "r"), Error) << bad;
  }
}

// A typed setting that does not parse used to weaken the advice silently; now it is an error
// naming the key.
TEST(Scenario, AMalformedTypedKeyIsAnErrorNamingIt) {
  for (const auto& [key, value] : std::map<std::string, std::string>{{"grace", "soon"},
                                                                     {"replicas", "three"},
                                                                     {"max_unavailable", "150%"},
                                                                     {"port", "70000"},
                                                                     {"prestop", "sleep 5"}}) {
    try {
      scenario_from_strings({{key, value}});
      FAIL() << key << " = " << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("scenario." + key), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(scenario_from_strings({{"anything", "goes"}}).extra.at("anything"), "goes");
}

}  // namespace
}  // namespace zerodrop::record
