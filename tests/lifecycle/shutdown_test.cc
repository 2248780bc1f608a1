#include "zerodrop/lifecycle/shutdown.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zerodrop::lifecycle {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Time is injected: t0 is the signal, and the machine only moves when told the time.
const Clock::time_point t0{seconds(1000)};

Options five_and_twenty() {
  Options options;
  options.delay = seconds(5);
  options.drain_timeout = seconds(20);
  return options;
}

// Records every transition and the completion callback.
struct Recorder {
  std::vector<State> states;
  std::vector<StopReason> stops;

  explicit Recorder(Shutdown& shutdown) {
    shutdown.on_transition([this](State s) { states.push_back(s); });
    shutdown.on_stopped([this](StopReason r) { stops.push_back(r); });
  }
};

TEST(Shutdown, ServingIsReadyAndKeepsConnections) {
  Shutdown shutdown(five_and_twenty());
  EXPECT_EQ(shutdown.state(), State::serving);
  EXPECT_TRUE(shutdown.ready());
  EXPECT_TRUE(shutdown.live());
  EXPECT_TRUE(shutdown.keep_connection());
  EXPECT_TRUE(shutdown.accepting());
  EXPECT_FALSE(shutdown.next_timer());
}

TEST(Shutdown, AppNotReadyFailsReadinessWhileServing) {
  Shutdown shutdown(five_and_twenty());
  shutdown.set_app_ready(false);
  EXPECT_FALSE(shutdown.ready());
  EXPECT_TRUE(shutdown.keep_connection());
}

TEST(Shutdown, SignalMakesItUnreadyAtOnceButStillServing) {
  Shutdown shutdown(five_and_twenty());
  Recorder recorder(shutdown);
  EXPECT_TRUE(shutdown.begin(t0));
  EXPECT_EQ(shutdown.state(), State::unready);
  EXPECT_FALSE(shutdown.ready());
  EXPECT_TRUE(shutdown.live());
  EXPECT_TRUE(shutdown.accepting());
  EXPECT_FALSE(shutdown.keep_connection());
  EXPECT_TRUE(shutdown.enter().has_value());
  EXPECT_EQ(shutdown.next_timer(), t0 + seconds(5));
  EXPECT_EQ(recorder.states, std::vector<State>{State::unready});
}

TEST(Shutdown, LaterSignalsChangeNothing) {
  Shutdown shutdown(five_and_twenty());
  Recorder recorder(shutdown);
  ASSERT_TRUE(shutdown.begin(t0));
  EXPECT_FALSE(shutdown.begin(t0 + seconds(1)));
  EXPECT_EQ(shutdown.next_timer(), t0 + seconds(5));
  EXPECT_EQ(recorder.states.size(), 1u);
}

TEST(Shutdown, UnreadyBecomesDrainingExactlyAfterTheDelay) {
  Shutdown shutdown(five_and_twenty());
  Connection busy = shutdown.track([] {});
  ASSERT_TRUE(shutdown.begin(t0));
  EXPECT_EQ(shutdown.advance(t0 + seconds(5) - milliseconds(1)), State::unready);
  EXPECT_EQ(shutdown.advance(t0 + seconds(5)), State::draining);
  EXPECT_FALSE(shutdown.accepting());
  EXPECT_FALSE(shutdown.ready());
  EXPECT_TRUE(shutdown.live());
  EXPECT_EQ(shutdown.next_timer(), t0 + seconds(20));
}

TEST(Shutdown, DrainingClosesIdleConnectionsOnly) {
  Shutdown shutdown(five_and_twenty());
  int idle_closed = 0;
  int busy_closed = 0;
  Connection idle = shutdown.track([&] { ++idle_closed; });
  Connection busy = shutdown.track([&] { ++busy_closed; });
  idle.set_idle(true);
  ASSERT_TRUE(shutdown.begin(t0));
  EXPECT_EQ(idle_closed, 0) << "idle connections stay open during the delay";
  shutdown.advance(t0 + seconds(5));
  EXPECT_EQ(idle_closed, 1);
  EXPECT_EQ(busy_closed, 0);
  shutdown.advance(t0 + seconds(6));
  EXPECT_EQ(idle_closed, 1) << "closed once";
}

TEST(Shutdown, ConnectionGoingIdleWhileDrainingIsClosedAtOnce) {
  Shutdown shutdown(five_and_twenty());
  int closed = 0;
  Connection connection = shutdown.track([&] { ++closed; });
  ASSERT_TRUE(shutdown.begin(t0));
  shutdown.advance(t0 + seconds(5));
  EXPECT_EQ(closed, 0);
  connection.set_idle(true);
  EXPECT_EQ(closed, 1);
}

TEST(Shutdown, DrainingStopsWhenTheLastConnectionCloses) {
  Shutdown shutdown(five_and_twenty());
  Recorder recorder(shutdown);
  std::optional<Connection> connection(shutdown.track([] {}));
  std::optional<Work> work = shutdown.enter();
  ASSERT_TRUE(work);
  ASSERT_TRUE(shutdown.begin(t0));
  shutdown.advance(t0 + seconds(5));
  work.reset();
  EXPECT_EQ(shutdown.state(), State::draining) << "a connection is still open";
  connection->closing_after_response();
  connection.reset();
  EXPECT_EQ(shutdown.state(), State::stopped);
  EXPECT_EQ(recorder.stops, std::vector<StopReason>{StopReason::drained});
  EXPECT_EQ(recorder.states, (std::vector<State>{State::unready, State::draining, State::stopped}));
  EXPECT_EQ(shutdown.counters().closed_after_response, 1u);
}

TEST(Shutdown, NothingInFlightStopsAsSoonAsTheDelayEnds) {
  Shutdown shutdown(five_and_twenty());
  Recorder recorder(shutdown);
  ASSERT_TRUE(shutdown.begin(t0));
  EXPECT_EQ(shutdown.advance(t0 + seconds(5)), State::stopped);
  EXPECT_EQ(recorder.stops, std::vector<StopReason>{StopReason::drained});
}

TEST(Shutdown, DeadlineStopsWithWorkInFlight) {
  Shutdown shutdown(five_and_twenty());
  Recorder recorder(shutdown);
  std::optional<Work> work = shutdown.enter();
  ASSERT_TRUE(shutdown.begin(t0));
  shutdown.advance(t0 + seconds(5));
  EXPECT_EQ(shutdown.advance(t0 + seconds(20) - milliseconds(1)), State::draining);
  EXPECT_EQ(shutdown.advance(t0 + seconds(20)), State::stopped);
  EXPECT_EQ(shutdown.counters().stop_reason, StopReason::deadline);
  EXPECT_FALSE(shutdown.enter()) << "the gate is closed once stopped";
  work.reset();
  EXPECT_EQ(recorder.stops, std::vector<StopReason>{StopReason::deadline}) << "called once";
  EXPECT_FALSE(shutdown.next_timer());
}

TEST(Shutdown, DelayLongerThanTheDeadlineIsCutByIt) {
  Options options;
  options.delay = seconds(30);
  options.drain_timeout = seconds(10);
  Shutdown shutdown(options);
  Recorder recorder(shutdown);
  std::optional<Work> work = shutdown.enter();
  ASSERT_TRUE(shutdown.begin(t0));
  EXPECT_EQ(shutdown.next_timer(), t0 + seconds(10));
  EXPECT_EQ(shutdown.advance(t0 + seconds(10)), State::stopped);
  EXPECT_EQ(recorder.states, (std::vector<State>{State::unready, State::draining, State::stopped}));
  EXPECT_EQ(recorder.stops, std::vector<StopReason>{StopReason::deadline});
}

TEST(Shutdown, ZeroDelayDrainsAtTheSignal) {
  Options options;
  options.delay = seconds(0);
  Shutdown shutdown(options);
  Connection connection = shutdown.track([] {});
  ASSERT_TRUE(shutdown.begin(t0));
  EXPECT_EQ(shutdown.state(), State::draining);
}

TEST(Shutdown, CountsIdleConnectionsClosedByDrain) {
  Shutdown shutdown(five_and_twenty());
  std::optional<Connection> connection;
  connection.emplace(shutdown.track([&] { connection.reset(); }));
  connection->set_idle(true);
  ASSERT_TRUE(shutdown.begin(t0));
  shutdown.advance(t0 + seconds(5));
  Counters counters = shutdown.counters();
  EXPECT_EQ(counters.closed_idle_by_drain, 1u);
  EXPECT_EQ(counters.connections, 0u);
  EXPECT_EQ(counters.state, State::stopped);
}

TEST(Shutdown, MetricsAreValidPrometheusText) {
  Shutdown shutdown(five_and_twenty());
  std::optional<Work> work = shutdown.enter();
  Connection connection = shutdown.track([] {});
  ASSERT_TRUE(shutdown.begin(t0));
  std::string text = shutdown.metrics();
  EXPECT_NE(text.find("zerodrop_lifecycle_state{state=\"unready\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_lifecycle_state{state=\"serving\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_lifecycle_in_flight_requests 1\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_lifecycle_open_connections 1\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_lifecycle_requests_total 1\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE zerodrop_lifecycle_connections_closed_by_drain_total counter\n"),
            std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace zerodrop::lifecycle
