#include "lab/recording/rollout_slice.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

using record::EventKind;
using std::chrono::seconds;

record::Event slice_event(int t, EventKind kind, const std::string& pod = "pod-1") {
  record::Event e;
  e.t = seconds(t);
  e.kind = kind;
  e.pod = pod;
  return e;
}

record::RequestRecord slice_request(int t, bool failed) {
  record::RequestRecord r;
  r.intended = seconds(t);
  r.done = seconds(t) + seconds(1);
  r.failed = failed;
  return r;
}

// Two rollouts, at 10 s and 30 s, with tails ending at 20 s and 40 s.
record::RunRecord slice_two_rollouts() {
  record::RunRecord run;
  run.engine = "lab";
  run.events = {slice_event(0, EventKind::pod_created),      slice_event(1, EventKind::pod_ready),
                slice_event(10, EventKind::rollout_started), slice_event(11, EventKind::pod_created, "pod-2"),
                slice_event(15, EventKind::rollout_finished), slice_event(30, EventKind::rollout_started),
                slice_event(31, EventKind::deletion_started), slice_event(35, EventKind::rollout_finished)};
  for (int t = 0; t < 45; ++t) {
    run.requests.push_back(slice_request(t, t == 12 || t == 31 || t == 32));
  }
  return run;
}

TEST(RolloutSlice, EachRolloutHasItsRequestsAndOnlyItsOwnRolloutEvents) {
  record::RunRecord run = slice_two_rollouts();
  record::RunRecord first = rollout_slice(run, seconds(0), seconds(20));
  record::RunRecord second = rollout_slice(run, seconds(20), seconds(40));
  EXPECT_EQ(first.requests.size(), 20u);
  EXPECT_EQ(second.requests.size(), 20u);
  EXPECT_EQ(second.requests.front().intended, seconds(20));
  EXPECT_EQ(second.end, seconds(40));
  auto failed = [](const record::RunRecord& r) {
    return std::count_if(r.requests.begin(), r.requests.end(), [](auto& q) { return q.failed; });
  };
  EXPECT_EQ(failed(first), 1);
  EXPECT_EQ(failed(second), 2);
  // The second keeps the pods' lives from before it, but not the first rollout's own events.
  auto kinds = [](const record::RunRecord& r, EventKind k) {
    return std::count_if(r.events.begin(), r.events.end(), [&](auto& e) { return e.kind == k; });
  };
  EXPECT_EQ(kinds(second, EventKind::rollout_started), 1);
  EXPECT_EQ(kinds(second, EventKind::pod_created), 2);
  EXPECT_EQ(kinds(first, EventKind::deletion_started), 0);  // after its end
  EXPECT_EQ(second.events.back().kind, EventKind::rollout_finished);
}

}  // namespace
}  // namespace zerodrop::lab
