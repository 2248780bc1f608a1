#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "record/run_folder.h"
#include "record/run_record.h"

namespace zerodrop::lab {

// The run folder and the run record being built: every event and request is kept in memory and
// streamed into the folder (record::RunWriter) as it happens; pod logs go to its pods/ folder.
// Times are microseconds since the recorder's start. Thread-safe.
class Recorder {
public:
  // Creates DIR (and DIR/pods). Throws Error naming the folder or file it cannot create.
  Recorder(const std::string& dir, const Clock& clock);

  const std::string& dir() const { return writer_.folder().dir(); }

  Clock::time_point start() const { return start_; }

  // The clock every stamp comes from (a FakeClock under test).
  const Clock& clock() const { return clock_; }

  record::Micros now() const { return since_start(clock_.now()); }

  record::Micros since_start(Clock::time_point t) const;

  // Stamps the event with now() and records it, then hands it to the observer, if any.
  void event(record::Event event);
  // Calls `observer` with every event recorded from now on, in order, under the recorder's
  // lock (so it must not call back into the recorder). Empty: no observer.
  void observe(std::function<void(const record::Event&)> observer);
  // Records an event that happened at `t` (a time stamp from elsewhere, e.g. the kernel's).
  void event_at(Clock::time_point t, record::Event event);
  // Shorthand for an event about a pod.
  void pod_event(record::EventKind kind, const std::string& pod, std::string detail = {});
  void request(record::RequestRecord request);
  std::string pod_log(const std::string& pod) const;

  uint64_t failed_requests() const;
  // The record so far (events sorted by time), with `scenario` and `end`; flushes the files.
  record::RunRecord snapshot(record::Scenario scenario, record::Micros end);

private:
  const Clock& clock_;
  Clock::time_point start_;
  mutable std::mutex mutex_;
  record::RunWriter writer_;
  std::vector<record::Event> events_;
  std::function<void(const record::Event&)> observer_;
  std::vector<record::RequestRecord> requests_;
  uint64_t failed_ = 0;
};

}  // namespace zerodrop::lab
