#include "lab/control/deployment_controller.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "base/timer.h"
#include "lab/control/endpoint_controller.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;
using record::EventKind;
using record::Micros;

// A rolling update in virtual time: the controller reconciles every 100 ms of it (the lab's
// control loop asks after every event, and at least every 20 ms of real time), and each
// reconcile, as start(), acts until nothing is left to do; pods are real `sleep` processes
// without probes (Ready as soon as they run), which die at SIGTERM.
class RolloutTest : public ::testing::Test {
protected:
  RolloutTest()
      : dir_(std::filesystem::temp_directory_path()
             / ("zerodrop-rollout-test-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        time_(boost::asio::use_service<VirtualTime>(io_)),
        recorder_(dir_.string(), time_.clock()),
        endpoints_(recorder_, {}, DelayDistribution::fixed(0s), 1) {
    spec_.command = {"sleep", "30"};
    spec_.grace = 5s;
  }

  ~RolloutTest() override { std::filesystem::remove_all(dir_); }

  // Reconciles every 100 ms of virtual time for `d`.
  void run_for(DeploymentController& cluster, Duration d) {
    for (Duration t{0}; t < d; t += 100ms) {
      time_.advance(100ms);
      cluster.reconcile();
    }
  }

  // What the controller did, as "t=<ms> <detail>" (ms since the recorder started).
  std::vector<std::string> steps() {
    std::vector<std::string> out;
    for (const record::Event& e : recorder_.snapshot({}, Micros(0)).events) {
      if (e.kind == EventKind::rollout_step || e.kind == EventKind::rollout_finished) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(e.t);
        out.push_back("t=" + std::to_string(ms.count()) + " " + e.detail);
      }
    }
    return out;
  }

  // Lets the deleted pods' processes exit (real time; virtual time stands still).
  void wait_until_settled(DeploymentController& cluster) {
    auto guard = boost::asio::make_work_guard(io_);
    auto deadline = std::chrono::steady_clock::now() + 15s;
    while (!cluster.reconcile() && std::chrono::steady_clock::now() < deadline) {
      io_.run_for(10ms);
    }
    ASSERT_EQ(cluster.terminating_count(), 0);
  }

  std::filesystem::path dir_;
  boost::asio::io_context io_;
  VirtualTime& time_;
  Recorder recorder_;
  EndpointController endpoints_;
  PodSpec spec_;
};

// maxSurge 1, maxUnavailable 0, minReadySeconds 5: one new pod at a time, and an old pod goes
// only once a new one has been Ready for 5 s.
TEST_F(RolloutTest, SurgeWaitsForMinReadySecondsBeforeEachOldPodGoes) {
  DeploymentController cluster(io_, recorder_, spec_, endpoints_, {2, 1, 0}, 5s, "127.0.");
  cluster.create_initial_pods();
  run_for(cluster, 5s);  // the first pods become available
  cluster.start(Action::restart, 0);
  run_for(cluster, 15s);
  EXPECT_EQ(steps(), (std::vector<std::string>{
                         "t=5000 created pod-3 (revision 2)",
                         "t=10000 deleting pod-1",
                         "t=10000 created pod-4 (revision 2)",
                         "t=15000 deleting pod-2",
                         "t=15000 2 pods of revision 2 available",
                     }));
  wait_until_settled(cluster);
  EXPECT_EQ(cluster.ready_count(), 2);
}

// maxSurge 0, maxUnavailable 1: an old pod goes first, its replacement is created at once (the
// deleted pod no longer counts), and the next old pod goes once that one is available.
TEST_F(RolloutTest, UnavailableFirstDeletesBeforeCreating) {
  DeploymentController cluster(io_, recorder_, spec_, endpoints_, {2, 0, 1}, 1s, "127.0.");
  cluster.create_initial_pods();
  run_for(cluster, 1s);
  cluster.start(Action::restart, 0);
  run_for(cluster, 5s);
  EXPECT_EQ(steps(), (std::vector<std::string>{
                         "t=1000 deleting pod-1",
                         "t=1000 created pod-3 (revision 2)",
                         "t=2000 deleting pod-2",
                         "t=2000 created pod-4 (revision 2)",
                         "t=3000 2 pods of revision 2 available",
                     }));
  wait_until_settled(cluster);
}

}  // namespace
}  // namespace zerodrop::lab
