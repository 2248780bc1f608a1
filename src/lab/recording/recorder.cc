#include "lab/recording/recorder.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

// The folder and its pods/ for the logs; throws Error naming what it cannot create.
record::RunWriter start_folder(const std::string& dir) {
  record::RunWriter writer(record::RunFolder(dir), record::Traffic::requests);
  std::error_code ec;
  std::filesystem::create_directories(writer.folder().pods(), ec);
  if (ec) {
    throw Error(fmt::format("cannot create the run folder '{}': {}", dir, ec.message()));
  }
  return writer;
}

}  // namespace

Recorder::Recorder(const std::string& dir, const Clock& clock)
    : clock_(clock), start_(clock.now()), writer_(start_folder(dir)) {}

record::Micros Recorder::since_start(Clock::time_point t) const {
  return std::chrono::duration_cast<record::Micros>(t - start_);
}

void Recorder::event(record::Event event) {
  event_at(clock_.now(), std::move(event));
}

void Recorder::event_at(Clock::time_point t, record::Event event) {
  std::lock_guard lock(mutex_);
  event.t = since_start(t);
  writer_.write(event);  // flushed at once: a killed lab still leaves its events on disk
  if (observer_) {
    observer_(event);
  }
  events_.push_back(std::move(event));
}

void Recorder::observe(std::function<void(const record::Event&)> observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

void Recorder::pod_event(record::EventKind kind, const std::string& pod, std::string detail) {
  record::Event e;
  e.kind = kind;
  e.pod = pod;
  e.detail = std::move(detail);
  event(std::move(e));
}

void Recorder::request(record::RequestRecord request) {
  std::lock_guard lock(mutex_);
  writer_.write(request);
  failed_ += request.failed ? 1 : 0;
  requests_.push_back(std::move(request));
}

std::string Recorder::pod_log(const std::string& pod) const {
  return writer_.folder().pod_log(pod);
}

uint64_t Recorder::failed_requests() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

record::RunRecord Recorder::snapshot(record::Scenario scenario, record::Micros end) {
  std::lock_guard lock(mutex_);
  writer_.flush();
  record::RunRecord run;
  run.engine = "lab";
  run.scenario = std::move(scenario);
  run.events = events_;
  std::stable_sort(run.events.begin(), run.events.end(),
                   [](const record::Event& a, const record::Event& b) { return a.t < b.t; });
  run.requests = requests_;
  std::sort(run.requests.begin(), run.requests.end(),
            [](const auto& a, const auto& b) { return a.intended < b.intended; });
  run.end = end;
  return run;
}

}  // namespace zerodrop::lab
