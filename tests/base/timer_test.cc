#include "base/timer.h"

#include <string>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

namespace zerodrop {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// An io_context in virtual time, and a log of which handler ran when (ms of virtual time).
class VirtualTimeTest : public ::testing::Test {
protected:
  VirtualTimeTest() : time_(asio::use_service<VirtualTime>(io_)), start_(time_.now()) {}

  // A handler that logs `name`, the virtual time and whether it was cancelled.
  auto log(std::string name) {
    return [this, name](boost::system::error_code ec) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time_.now() - start_);
      log_.push_back(name + "@" + std::to_string(ms.count())
                     + (ec == asio::error::operation_aborted ? " aborted" : ""));
    };
  }

  asio::io_context io_;
  VirtualTime& time_;
  Clock::time_point start_;
  std::vector<std::string> log_;
};

TEST_F(VirtualTimeTest, FiresEachTimerAtItsInstantInOrder) {
  Timer late(io_);
  Timer early(io_);
  late.expires_after(3s);
  late.async_wait(log("late"));
  early.expires_after(1200ms);
  early.async_wait(log("early"));
  time_.advance(1199ms);
  EXPECT_TRUE(log_.empty());
  time_.advance(10s);
  EXPECT_EQ(log_, (std::vector<std::string>{"early@1200", "late@3000"}));
  EXPECT_EQ(time_.now() - start_, 11199ms);
}

TEST_F(VirtualTimeTest, TimersDueTogetherFireInTheOrderTheyWereArmed) {
  Timer a(io_);
  Timer b(io_);
  Timer c(io_);
  b.expires_after(1s);
  b.async_wait(log("b"));
  a.expires_after(1s);
  a.async_wait(log("a"));
  c.expires_after(0s);
  c.async_wait(log("c"));
  time_.advance(0s);
  EXPECT_EQ(log_, (std::vector<std::string>{"c@0"}));
  time_.advance(1s);
  EXPECT_EQ(log_, (std::vector<std::string>{"c@0", "b@1000", "a@1000"}));
}

TEST_F(VirtualTimeTest, CancelAndRearmAbortThePendingWait) {
  Timer t(io_);
  t.expires_after(1s);
  t.async_wait(log("first"));
  time_.advance(500ms);
  t.cancel();
  time_.advance(0s);
  EXPECT_EQ(log_, (std::vector<std::string>{"first@500 aborted"}));
  t.expires_after(1s);
  t.async_wait(log("second"));
  time_.advance(100ms);
  t.expires_after(2s);  // like steady_timer: re-arming aborts the pending wait
  t.async_wait(log("third"));
  time_.advance(5s);
  EXPECT_EQ(log_,
            (std::vector<std::string>{"first@500 aborted", "second@600 aborted", "third@2600"}));
}

TEST_F(VirtualTimeTest, AHandlerCanArmTheNextWaitWithinOneAdvance) {
  Timer t(io_);
  int fired = 0;
  std::function<void(boost::system::error_code)> again = [&](boost::system::error_code ec) {
    if (!ec && ++fired < 4) {
      t.expires_after(250ms);
      t.async_wait(again);
    }
  };
  t.expires_after(250ms);
  t.async_wait(again);
  time_.advance(1s);
  EXPECT_EQ(fired, 4);
}

TEST_F(VirtualTimeTest, AdvanceRunsWorkPostedMeanwhile) {
  bool ran = false;
  asio::post(io_, [&] { ran = true; });
  time_.advance(0s);
  EXPECT_TRUE(ran);
}

TEST(Timer, WithoutVirtualTimeIsASteadyTimer) {
  asio::io_context io;
  Timer t(io);
  auto before = Timer::now(io);
  EXPECT_LE(before, std::chrono::steady_clock::now());
  bool fired = false;
  t.expires_after(1ms);
  t.async_wait([&](boost::system::error_code ec) { fired = !ec; });
  io.run();  // returns once the timer fired: it is the only work
  EXPECT_TRUE(fired);
  EXPECT_GE(Timer::now(io) - before, 1ms);
}

}  // namespace
}  // namespace zerodrop
