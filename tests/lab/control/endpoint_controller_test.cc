#include "lab/control/endpoint_controller.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "lab/recording/recorder.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

// A router that only notes what it is asked to schedule.
class NotingRouter final : public Router {
public:
  const std::string& name() const override { return name_; }

  uint16_t port() const override { return 0; }

  void schedule(const EndpointChange& change, Duration delay) override {
    scheduled.emplace_back((change.removed ? "-" : "") + change.endpoint.pod, delay);
  }

  std::optional<std::string> backend_of(uint16_t) const override { return std::nullopt; }

  std::optional<ClientConnection> connection_of(uint16_t) const override { return std::nullopt; }

  uint64_t refusals() const override { return 0; }

  std::vector<std::pair<std::string, Duration>> scheduled;

private:
  std::string name_ = "noting";
};

// The endpoint controller on a FakeClock, in front of two noting routers.
class EndpointControllerTest : public ::testing::Test {
protected:
  EndpointControllerTest()
      : dir_(std::filesystem::temp_directory_path()
             / ("zerodrop-endpoints-test-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        recorder_(dir_.string(), clock_) {}

  ~EndpointControllerTest() override { std::filesystem::remove_all(dir_); }

  static Endpoint endpoint(const std::string& pod, bool ready, bool terminating) {
    return {pod, "127.0.0.2", 8080, conditions_of(ready, terminating)};
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  Recorder recorder_;
  NotingRouter a_;
  NotingRouter b_;
};

TEST_F(EndpointControllerTest, EachRouterGetsItsOwnDelayAndSettledAtIsTheLatest) {
  EndpointController endpoints(recorder_, {&a_, &b_}, DelayDistribution::uniform(1s, 3s), 7);
  Clock::time_point start = clock_.now();
  endpoints.publish(endpoint("pod-1", true, false));
  ASSERT_EQ(a_.scheduled.size(), 1u);
  ASSERT_EQ(b_.scheduled.size(), 1u);
  Duration da = a_.scheduled[0].second;
  Duration db = b_.scheduled[0].second;
  for (Duration d : {da, db}) {
    EXPECT_GE(d, 1s);
    EXPECT_LE(d, 3s);
  }
  EXPECT_NE(da, db);  // drawn per router (a tie of two uniform draws would be a bug here)
  EXPECT_EQ(endpoints.settled_at(), start + std::max(da, db));

  // Later changes settle later on the clock; an earlier settle time never moves back.
  clock_.advance(10s);
  endpoints.publish(endpoint("pod-1", false, true));
  Duration latest = std::max(a_.scheduled[1].second, b_.scheduled[1].second);
  EXPECT_EQ(endpoints.settled_at(), start + 10s + latest);
}

TEST_F(EndpointControllerTest, SendsOnlyChangesAndTheRemovalOnce) {
  EndpointController endpoints(recorder_, {&a_}, DelayDistribution::fixed(2s), 1);
  endpoints.publish(endpoint("pod-1", false, false));
  endpoints.publish(endpoint("pod-1", false, false));  // unchanged: not sent again
  endpoints.publish(endpoint("pod-1", true, false));
  endpoints.publish(endpoint("pod-1", true, true));  // terminating: serving, not ready
  endpoints.remove("pod-1");
  endpoints.remove("pod-1");  // already gone
  std::vector<std::pair<std::string, Duration>> want = {
      {"pod-1", 2s}, {"pod-1", 2s}, {"pod-1", 2s}, {"-pod-1", 2s}};
  EXPECT_EQ(a_.scheduled, want);
  EXPECT_EQ(endpoints.settled_at(), clock_.now() + 2s);
}

TEST_F(EndpointControllerTest, TheSameSeedDrawsTheSameSchedule) {
  NotingRouter again;
  EndpointController first(recorder_, {&a_}, DelayDistribution::quantiles(1s, 4s), 42);
  EndpointController second(recorder_, {&again}, DelayDistribution::quantiles(1s, 4s), 42);
  for (const char* pod : {"pod-1", "pod-2", "pod-3"}) {
    first.publish(endpoint(pod, true, false));
    second.publish(endpoint(pod, true, false));
  }
  EXPECT_EQ(a_.scheduled, again.scheduled);
  EXPECT_EQ(first.settled_at(), second.settled_at());
}

}  // namespace
}  // namespace zerodrop::lab
