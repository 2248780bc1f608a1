#include "lab/recorder.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    throw Error(fmt::format("cannot write '{}'", path));
  }
  return out;
}

}  // namespace

Recorder::Recorder(const std::string& dir, const Clock& clock)
    : dir_(dir), clock_(clock), start_(clock.now()) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir) / "pods", ec);
  if (ec) {
    throw Error(fmt::format("cannot create the run folder '{}': {}", dir, ec.message()));
  }
  events_file_ = open_output(dir + "/events.ndjson");
  requests_file_ = open_output(dir + "/requests.ndjson");
}

record::Micros Recorder::since_start(Clock::time_point t) const {
  return std::chrono::duration_cast<record::Micros>(t - start_);
}

void Recorder::event(record::Event event) {
  std::lock_guard lock(mutex_);
  event.t = now();
  record::write_ndjson(events_file_, event);
  events_file_.flush();  // events are few; a killed lab still leaves them on disk
  events_.push_back(std::move(event));
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
  record::write_ndjson(requests_file_, request);
  failed_ += request.failed ? 1 : 0;
  requests_.push_back(std::move(request));
}

std::string Recorder::pod_log(const std::string& pod) const {
  return dir_ + "/pods/" + pod + ".log";
}

uint64_t Recorder::failed_requests() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

record::RunRecord Recorder::snapshot(std::map<std::string, std::string> scenario,
                                     record::Micros end) {
  std::lock_guard lock(mutex_);
  events_file_.flush();
  requests_file_.flush();
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
