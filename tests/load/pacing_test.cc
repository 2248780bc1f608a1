// The open-loop pacer keeps an honest schedule: every request keeps its own intended time, none
// leaves before it, and every request intended before the end is sent or counted unsent. What
// a loaded machine changes (how late requests go out) is not asserted.
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "load/load.h"
#include "load/schedule.h"
#include "testing/misbehaving_server.h"

namespace zerodrop::load {
namespace {

using namespace std::chrono_literals;

// The records of a run against a healthy server, checked against the schedule of `rate`.
struct Paced {
  Summary summary;
  uint64_t early = 0;         // sent before their intended time
  uint64_t off_schedule = 0;  // intended elsewhere than start + seq / rate
  std::vector<bool> seen;     // by seq
  uint64_t duplicates = 0;
};

Paced run_paced(double rate, Duration duration, uint32_t connections) {
  testing::MisbehavingServer server({});
  Options o;
  o.targets = {{"GET", server.url()}};
  o.rate = rate;
  o.duration = duration;
  o.connections = connections;
  Paced p;
  p.seen.resize(static_cast<size_t>(rate * std::chrono::duration<double>(duration).count()));
  std::mutex mutex;
  Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    std::lock_guard lock(mutex);
    p.early += r.sent && *r.sent < r.intended ? 1 : 0;
    auto on_schedule = std::chrono::round<record::Micros>(
        std::chrono::duration<double>(static_cast<double>(r.seq) / rate));
    p.off_schedule += r.intended != on_schedule ? 1 : 0;
    if (r.seq < p.seen.size()) {
      p.duplicates += p.seen[r.seq] ? 1 : 0;
      p.seen[r.seq] = true;
    }
  };
  p.summary = run(o, hooks);
  return p;
}

// The requests sent are the first ones of the schedule (one thread sends in order; the unsent,
// if the machine held the pacer back at the end, are the last).
void expect_prefix(const Paced& p) {
  uint64_t sent = 0;
  while (sent < p.seen.size() && p.seen[sent]) {
    ++sent;
  }
  EXPECT_EQ(sent, p.summary.requests) << "the requests done are seq 0 to requests - 1";
}

TEST(Pacing, ThousandPerSecondForThreeSeconds) {
  Paced p = run_paced(1000, 3s, 64);
  const Summary& s = p.summary;
  EXPECT_EQ(s.requests + s.unsent, 3000u) << "every request intended before the end is counted";
  EXPECT_GT(s.requests, 0u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_LE(s.late, s.requests + s.unsent);
  EXPECT_EQ(p.early, 0u) << "no request leaves before its intended time";
  EXPECT_EQ(p.off_schedule, 0u) << "request k is intended at k / rate, however late it went";
  EXPECT_EQ(p.duplicates, 0u);
  expect_prefix(p);
}

// At 20,000 a second the pacer sends the requests of each send window at one wake: still none
// early, every one on its own intended time.
TEST(Pacing, BatchedWakesSendNothingEarly) {
  Paced p = run_paced(20000, 200ms, 16);
  const Summary& s = p.summary;
  EXPECT_EQ(s.requests + s.unsent, 4000u);
  EXPECT_GT(s.requests, 0u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(p.early, 0u);
  EXPECT_EQ(p.off_schedule, 0u);
  EXPECT_EQ(p.duplicates, 0u);
  expect_prefix(p);
}

Schedule schedule_of(double rate, std::chrono::nanoseconds window) {
  Schedule s;
  s.start = TimePoint{};
  s.end = s.start + 1s;
  s.rate = rate;
  s.window = window;
  return s;
}

TEST(Schedule, AWakeSendsTheRequestsOfOneWindowAndNoneEarly) {
  Schedule s = schedule_of(10000, 1ms);  // 100 us apart: 10 per window
  EXPECT_EQ(s.wake_for(0), s.start + 900us) << "requests 0 to 9 go at the intended time of 9";
  EXPECT_EQ(s.wake_for(10), s.start + 1900us);
  EXPECT_EQ(s.wake_for(9995), s.start + 999900us) << "the last window ends at the end";
  EXPECT_EQ(s.wake_for(10000), s.end) << "nothing left before the end";
  s.limit = 5;
  EXPECT_EQ(s.wake_for(0), s.start + 400us) << "nothing past --requests";
  EXPECT_EQ(s.wake_for(5), s.end);
}

TEST(Schedule, SlowRatesWakeForEveryRequest) {
  Schedule s = schedule_of(1000, 1ms);  // 1 ms apart: the next one is outside the window
  EXPECT_EQ(s.wake_for(0), s.start);
  EXPECT_EQ(s.wake_for(7), s.start + 7ms);
  s = schedule_of(10000, 0ms);
  EXPECT_EQ(s.wake_for(3), s.start + 300us) << "no window: every request at its own time";
}

TEST(Schedule, WorkersShareOneSchedule) {
  Schedule s = schedule_of(10000, 1ms);
  s.count = 4;
  s.index = 1;
  EXPECT_EQ(s.intended(0), s.start + 100us) << "global request 1";
  EXPECT_EQ(s.intended(2), s.start + 900us) << "global request 9";
  EXPECT_EQ(s.wake_for(0), s.start + 900us) << "its requests 1, 5 and 9 of the first window";
}

}  // namespace
}  // namespace zerodrop::load
