// Run folders: names, retention, the index page and the read-only file lookup of /runs/.
#include "watch/runs.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zerodrop::watch {
namespace {

namespace fs = std::filesystem;

class Runs : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("runs-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }

  void TearDown() override { fs::remove_all(root_); }

  std::string make(const std::string& name, const std::string& verdict) {
    fs::create_directories(root_ / name);
    std::ofstream(root_ / name / "report.html") << "<html>" << name << "</html>";
    RolloutResult r;
    r.key = {"Deployment", "shop", "web"};
    r.folder = name;
    r.verdict.requests = verdict == "clean" ? 10 : 0;
    write_result((root_ / name).string(), r);
    return name;
  }

  fs::path root_;
};

TEST_F(Runs, NamesAreUniqueAndSortByTime) {
  WorkloadKey key{"Deployment", "shop", "web"};
  SystemTime t = SystemTime(std::chrono::seconds(1'800'000'000));
  std::string first = new_run_name(root_.string(), key, t);
  EXPECT_EQ(first, "shop.web.20270115T080000Z");
  fs::create_directories(root_ / first);
  EXPECT_EQ(new_run_name(root_.string(), key, t), "shop.web.20270115T080000Z.2");
}

TEST_F(Runs, RetentionRemovesTheOldestRunsOnly) {
  make("shop.web.20270115T080000Z", "clean");
  make("a.api.20270115T080100Z", "clean");
  make("shop.web.20270115T080200Z", "clean");
  fs::create_directories(root_ / "not-a-run");
  EXPECT_EQ(retain(root_.string(), 2), 1u);
  EXPECT_FALSE(fs::exists(root_ / "shop.web.20270115T080000Z"));
  EXPECT_TRUE(fs::exists(root_ / "a.api.20270115T080100Z"));
  EXPECT_TRUE(fs::exists(root_ / "not-a-run"));
  EXPECT_EQ(retain(root_.string(), 2), 0u);
}

TEST_F(Runs, TheIndexListsNewestFirstWithVerdicts) {
  make("shop.web.20270115T080000Z", "clean");
  make("shop.web.20270115T080200Z", "unmeasured");
  std::string html = index_html(root_.string());
  size_t newer = html.find("shop.web.20270115T080200Z/report.html");
  size_t older = html.find("shop.web.20270115T080000Z/report.html");
  ASSERT_NE(newer, std::string::npos);
  ASSERT_NE(older, std::string::npos);
  EXPECT_LT(newer, older);
  EXPECT_NE(html.find(">clean<"), std::string::npos);
  EXPECT_NE(html.find(">unmeasured<"), std::string::npos);
  EXPECT_NE(html.find("2 runs"), std::string::npos);
}

TEST_F(Runs, AFolderLeftInProgressIsMarkedAbandonedWithWhy) {
  make("shop.web.20261206T100000Z", "clean");
  // A watcher killed mid-rollout: events.ndjson, no reports, no watch.json.
  fs::create_directories(root_ / "shop.my.api.20261206T110000Z.2");
  std::ofstream(root_ / "shop.my.api.20261206T110000Z.2" / "events.ndjson") << "{}\n";
  EXPECT_NE(index_html(root_.string()).find("in progress"), std::string::npos);
  SystemTime now = SystemTime(std::chrono::seconds(1'800'000'000));
  auto marked = mark_abandoned(root_.string(), now);
  ASSERT_EQ(marked, std::vector<std::string>{"shop.my.api.20261206T110000Z.2"});
  std::ifstream in(root_ / marked[0] / "watch.json");
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["verdict"], "abandoned");
  EXPECT_EQ(j["namespace"], "shop");
  EXPECT_EQ(j["workload"], "my.api");
  EXPECT_EQ(j["whole"], false);
  EXPECT_NE(j["ended_reason"].get<std::string>().find("killed"), std::string::npos);
  std::string index = index_html(root_.string());
  EXPECT_EQ(index.find("in progress"), std::string::npos);
  EXPECT_NE(index.find("<td class=\"abandoned\">abandoned</td>"), std::string::npos);
  // Its link goes to what it has (no report.html was written).
  EXPECT_NE(index.find("shop.my.api.20261206T110000Z.2/events.ndjson"), std::string::npos);
  EXPECT_NE(index.find("shop.web.20261206T100000Z/report.html"), std::string::npos);
  // Once marked, nothing more to mark; finished runs were never touched.
  EXPECT_TRUE(mark_abandoned(root_.string(), now).empty());
  std::ifstream clean(root_ / "shop.web.20261206T100000Z" / "watch.json");
  EXPECT_NE(nlohmann::json::parse(clean)["verdict"], "abandoned");
}

TEST_F(Runs, OnlyPlainFilesOfARunAreServed) {
  std::string name = make("shop.web.20270115T080000Z", "clean");
  EXPECT_EQ(run_file(root_.string(), name + "/report.html"),
            (root_ / name / "report.html").string());
  EXPECT_EQ(run_file(root_.string(), name), (root_ / name / "report.html").string());
  EXPECT_EQ(run_file(root_.string(), name + "/../../etc/passwd"), std::nullopt);
  EXPECT_EQ(run_file(root_.string(), "../" + name + "/report.html"), std::nullopt);
  EXPECT_EQ(run_file(root_.string(), name + "/missing.json"), std::nullopt);
  EXPECT_EQ(run_file(root_.string(), "not-a-run/x"), std::nullopt);
}

}  // namespace
}  // namespace zerodrop::watch
