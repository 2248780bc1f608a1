#include "record/run_folder.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::record {
namespace {

namespace fs = std::filesystem;

class RunFolderTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir())
           / ("run_folder_"
              + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }

  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

Event refusal() {
  Event e;
  e.t = Micros(4'310'000);
  e.kind = EventKind::router_refused;
  e.pod = "web-0";
  e.router = "node-1";
  e.detail = "connection refused";
  return e;
}

TEST(EventJson, KeysInOrderAndSortedOnEachNdjsonLine) {
  Event e = refusal();
  e.conditions = Conditions{false, true, true};
  nlohmann::ordered_json j = to_json(e);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.push_back(key);
  }
  EXPECT_EQ(keys,
            (std::vector<std::string>{"t_us", "kind", "pod", "router", "conditions", "detail"}));
  std::ostringstream line;
  write_ndjson(line, e);
  EXPECT_EQ(line.str(), R"({"conditions":{"ready":false,"serving":true,"terminating":true},)"
                        R"("detail":"connection refused","kind":"router_refused","pod":"web-0",)"
                        R"("router":"node-1","t_us":4310000})"
                        "\n");
}

TEST_F(RunFolderTest, AnEventKnownToAnIntervalKeepsItsLowerEnd) {
  Event e = refusal();
  e.kind = EventKind::router_applied;
  e.t_min = Micros(4'000'000);
  RunFolder folder((dir_ / "interval").string());
  {
    RunWriter writer(folder, Traffic::requests);
    writer.write(e);
    writer.write(refusal());
  }
  std::vector<Event> back = read_events(folder.events());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].t_min, Micros(4'000'000));
  EXPECT_EQ(back[0].t, Micros(4'310'000));
  EXPECT_FALSE(back[1].t_min);  // files without the field read as before
}

TEST_F(RunFolderTest, NamesItsFiles) {
  RunFolder folder("/runs/a");
  EXPECT_EQ(folder.events(), "/runs/a/events.ndjson");
  EXPECT_EQ(folder.requests(), "/runs/a/requests.ndjson");
  EXPECT_EQ(folder.buckets(), "/runs/a/buckets.ndjson");
  EXPECT_EQ(folder.run_json(), "/runs/a/run.json");
  EXPECT_EQ(folder.report_json(), "/runs/a/report.json");
  EXPECT_EQ(folder.report_html(), "/runs/a/report.html");
  EXPECT_EQ(folder.pod_log("pod-1"), "/runs/a/pods/pod-1.log");
}

TEST_F(RunFolderTest, WriterStreamsWhatTheReaderReadsBack) {
  RunFolder folder((dir_ / "nested" / "run").string());
  RunWriter writer(folder, Traffic::requests);
  writer.write(refusal());
  // Events reach the disk at once, before any flush: a killed run still leaves them.
  EXPECT_EQ(read_events(folder.events()).size(), 1u);
  RequestRecord r;
  r.seq = 3;
  r.done = Micros(5'000'000);
  r.outcome = Outcome::connect_refused;
  r.failed = true;
  writer.write(r);
  writer.close();
  RunRecord run;
  run.engine = "load";
  run.end = Micros(9'000'000);
  folder.write_run_json(run);

  RunRecord back = folder.read();
  EXPECT_EQ(back.engine, "load");
  EXPECT_EQ(back.end, Micros(9'000'000));
  ASSERT_EQ(back.events.size(), 1u);
  EXPECT_EQ(back.events[0].detail, "connection refused");
  ASSERT_EQ(back.requests.size(), 1u);
  EXPECT_EQ(back.requests[0].seq, 3u);
  EXPECT_TRUE(back.buckets.empty());
}

TEST_F(RunFolderTest, AWriterStartsTheRecordAfreshAndDropsTheOtherTrafficKind) {
  RunFolder folder(dir_.string());
  {
    RunWriter sim(folder, Traffic::buckets);
    sim.write(TimeBucket{Micros(0), Micros(1'000'000), 10, {}, {}});
    sim.write(refusal());
    sim.close();
  }
  ASSERT_TRUE(fs::exists(folder.buckets()));
  RunWriter lab(folder, Traffic::requests);
  lab.close();
  EXPECT_FALSE(fs::exists(folder.buckets())) << "a stale buckets.ndjson would join the new run";
  EXPECT_TRUE(read_events(folder.events()).empty());
}

TEST_F(RunFolderTest, ReadingWithoutRunJsonIsALabRun) {
  RunFolder folder(dir_.string());
  RunWriter(folder, Traffic::requests).close();
  EXPECT_EQ(folder.read().engine, "lab");
  std::ofstream(folder.run_json()) << R"({"engine": "sim", "end_us": 1.5})";
  EXPECT_THROW(folder.read(), Error);
}

TEST_F(RunFolderTest, CannotCreateUnderAFile) {
  std::ofstream(dir_.string()) << "a file";
  try {
    RunWriter writer(RunFolder((dir_ / "run").string()), Traffic::requests);
    FAIL() << "a folder under a file was created";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the run folder"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zerodrop::record
