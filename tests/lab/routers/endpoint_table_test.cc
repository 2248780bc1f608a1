#include "lab/routers/endpoint_table.h"

#include <gtest/gtest.h>

#include "base/clock.h"

namespace zerodrop::lab {
namespace {

EndpointChange change(const std::string& pod, bool ready, bool serving, bool terminating) {
  return {{pod, "127.0.0.1", 80, {ready, serving, terminating}}, false};
}

std::vector<std::string> pods(const EndpointTable& table) {
  std::vector<std::string> out;
  for (const Endpoint* e : table.usable()) {
    out.push_back(e->pod);
  }
  return out;
}

TEST(EndpointTable, UsesReadyEndpointsOnly) {
  EndpointTable table;
  table.apply(change("a", true, true, false));
  table.apply(change("b", false, false, false));  // starting: not ready yet
  table.apply(change("c", false, true, true));    // terminating but serving
  EXPECT_EQ(pods(table), (std::vector<std::string>{"a"}));
}

TEST(EndpointTable, FallsBackToServingTerminatingOnlyWhenNoneIsReady) {
  EndpointTable table;
  table.apply(change("a", false, true, true));
  table.apply(change("b", false, false, true));  // terminating and failing readiness: never
  EXPECT_EQ(pods(table), (std::vector<std::string>{"a"}));
  table.apply(change("c", true, true, false));
  EXPECT_EQ(pods(table), (std::vector<std::string>{"c"}));
}

TEST(EndpointTable, StopsUsingAPodAtTheFirstTerminatingUpdate) {
  EndpointTable table;
  table.apply(change("a", true, true, false));
  table.apply(change("b", true, true, false));
  table.apply(change("a", false, true, true));
  EXPECT_EQ(pods(table), (std::vector<std::string>{"b"}));
  table.apply({{"b", "", 0, {}}, true});
  EXPECT_EQ(pods(table), (std::vector<std::string>{"a"}));
  EXPECT_EQ(table.size(), 1u);
}

// The propagation schedule in virtual time: what is due when, on a FakeClock.
class PropagationScheduleTest : public ::testing::Test {
protected:
  Clock::time_point add(const std::string& pod, bool removed, Duration delay) {
    return schedule_.add({{pod, "127.0.0.1", 80, {true, true, false}}, removed}, clock_.now(),
                         delay);
  }

  // The due changes after `d` more, as "pod" or "-pod" for a removal.
  std::vector<std::string> due_after(Duration d) {
    clock_.advance(d);
    std::vector<std::string> out;
    for (const EndpointChange& c : schedule_.take_due(clock_.now())) {
      out.push_back((c.removed ? "-" : "") + c.endpoint.pod);
    }
    return out;
  }

  FakeClock clock_;
  PropagationSchedule schedule_;
};

using namespace std::chrono_literals;
using Pods = std::vector<std::string>;

TEST_F(PropagationScheduleTest, AChangeIsDueAfterItsDelay) {
  Clock::time_point start = clock_.now();
  EXPECT_EQ(add("a", false, 300ms), start + 300ms);
  EXPECT_EQ(due_after(299ms), Pods{});
  EXPECT_EQ(due_after(1ms), Pods{"a"});
  EXPECT_EQ(schedule_.pending(), 0u);
}

TEST_F(PropagationScheduleTest, AShorterDelayWaitsForTheChangeBeforeIt) {
  Clock::time_point start = clock_.now();
  add("a", false, 300ms);
  EXPECT_EQ(add("a", true, 0ms), start + 300ms);  // a removal drawn shorter: still after the add
  EXPECT_EQ(due_after(0ms), Pods{});
  EXPECT_EQ(due_after(300ms), (Pods{"a", "-a"}));
}

TEST_F(PropagationScheduleTest, ChangesDueTogetherComeInTheOrderTheyWereAdded) {
  add("slow", false, 100ms);
  for (const char* pod : {"p0", "p1", "p2"}) {
    add(pod, false, 0ms);
    add(pod, true, 50ms);
  }
  add("late", false, 200ms);
  EXPECT_EQ(due_after(100ms), (Pods{"slow", "p0", "-p0", "p1", "-p1", "p2", "-p2"}));
  EXPECT_EQ(due_after(99ms), Pods{});
  EXPECT_EQ(due_after(1ms), Pods{"late"});
}

TEST_F(PropagationScheduleTest, ALaterChangeWithAShortDelayDoesNotWaitForAnAppliedOne) {
  add("a", false, 100ms);
  EXPECT_EQ(due_after(1s), Pods{"a"});
  Clock::time_point now = clock_.now();
  EXPECT_EQ(add("b", false, 10ms), now + 10ms);
  EXPECT_EQ(due_after(10ms), Pods{"b"});
}

}  // namespace
}  // namespace zerodrop::lab
