#pragma once

#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "record/run_record.h"

namespace zerodrop::lab {

// The run folder and the run record being built: every event and request is kept in memory and
// appended to DIR/events.ndjson and DIR/requests.ndjson as it happens; pod logs go to
// DIR/pods/<pod>.log. Times are microseconds since the recorder's start. Thread-safe.
class Recorder {
public:
  // Creates DIR (and DIR/pods). Throws Error naming the folder or file it cannot create.
  Recorder(const std::string& dir, const Clock& clock);

  const std::string& dir() const { return dir_; }

  Clock::time_point start() const { return start_; }

  record::Micros now() const { return since_start(clock_.now()); }

  record::Micros since_start(Clock::time_point t) const;

  // Stamps the event with now() and records it.
  void event(record::Event event);
  // Shorthand for an event about a pod.
  void pod_event(record::EventKind kind, const std::string& pod, std::string detail = {});
  void request(record::RequestRecord request);
  std::string pod_log(const std::string& pod) const;

  uint64_t failed_requests() const;
  // The record so far (events sorted by time), with `scenario` and `end`; flushes the files.
  record::RunRecord snapshot(std::map<std::string, std::string> scenario, record::Micros end);

private:
  std::string dir_;
  const Clock& clock_;
  Clock::time_point start_;
  mutable std::mutex mutex_;
  std::ofstream events_file_;
  std::ofstream requests_file_;
  std::vector<record::Event> events_;
  std::vector<record::RequestRecord> requests_;
  uint64_t failed_ = 0;
};

}  // namespace zerodrop::lab
