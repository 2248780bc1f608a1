#include "lab/recording/rollout_slice.h"

namespace zerodrop::lab {

using record::EventKind;

namespace {

// The events that say what a rollout (or the load during one) did, not what a pod is.
bool of_a_rollout(EventKind kind) {
  switch (kind) {
    case EventKind::rollout_started:
    case EventKind::rollout_step:
    case EventKind::rollout_finished:
    case EventKind::disruption_started:
    case EventKind::disruption_ended:
      return true;
    default:
      return false;
  }
}

}  // namespace

record::RunRecord rollout_slice(const record::RunRecord& run, record::Micros from,
                                record::Micros to) {
  record::RunRecord out;
  out.engine = run.engine;
  out.scenario = run.scenario;
  out.end = to;
  for (const record::Event& e : run.events) {
    if (e.t <= to && !(e.t < from && of_a_rollout(e.kind))) {
      out.events.push_back(e);
    }
  }
  for (const record::RequestRecord& r : run.requests) {
    if (r.intended >= from && r.intended < to) {
      out.requests.push_back(r);
    }
  }
  for (const record::TimeBucket& b : run.buckets) {
    if (b.start >= from && b.start < to) {
      out.buckets.push_back(b);
    }
  }
  return out;
}

}  // namespace zerodrop::lab
