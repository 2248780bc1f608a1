#include "sim/profile.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::sim {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string message_of(const std::string& path) {
  try {
    load_profile(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Profile, BuiltinsLoadAndUnknownNamesSuggest) {
  for (auto name : builtin_profiles()) {
    EXPECT_EQ(load_profile(name).name, name);
  }
  EXPECT_TRUE(load_profile("lab").propagation.has_value());
  EXPECT_DOUBLE_EQ(load_profile("kind").proxy.min_sync_period, 5);
  try {
    load_profile("gek");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'gke'"), std::string::npos);
  }
}

TEST(Profile, YamlOverridesABase) {
  std::string path = write_temp("zerodrop-sim-profile.yaml", R"(
base: eks
nodes: 1200
dataplane: kube-proxy-nftables
kubeProxy:
  minSyncPeriod: 2s
  burst: 3
control:
  watchBase: p50=20ms,p99=400ms
)");
  Profile p = load_profile(path);
  EXPECT_EQ(p.nodes, 1200);
  EXPECT_EQ(p.dataplane, Dataplane::nftables);
  EXPECT_DOUBLE_EQ(p.proxy.min_sync_period, 2);
  EXPECT_EQ(p.proxy.burst, 3);
  EXPECT_DOUBLE_EQ(p.proxy.pods_per_node, load_profile("eks").proxy.pods_per_node);
  EXPECT_NEAR(p.control.watch_base.median(), 0.02, 1e-9);
  std::remove(path.c_str());
}

TEST(Profile, BadYamlNamesFileLineAndKey) {
  std::string path = write_temp("zerodrop-sim-bad.yaml", "kubeProxy:\n  minSyncPerod: 1s\n");
  std::string m = message_of(path);
  EXPECT_NE(m.find("line 2"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'kubeProxy.minSyncPeriod'"), std::string::npos) << m;
  std::ofstream(path) << "kubeProxy:\n  burst: lots\n";
  EXPECT_NE(message_of(path).find("kubeProxy.burst"), std::string::npos);
  std::ofstream(path) << "[1, 2";
  EXPECT_NE(message_of(path).find(path), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(message_of("/nonexistent/p.yaml").find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::sim
