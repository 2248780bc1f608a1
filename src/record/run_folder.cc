#include "record/run_folder.h"

#include <cassert>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::record {
namespace {

using nlohmann::json;

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
  return out;
}

void close_checked(std::ofstream& out, const std::string& path) {
  if (!out.is_open()) {
    return;
  }
  out.close();
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
}

// run.json is optional: a folder holding only NDJSON records re-renders as a lab run.
void read_run_json(const std::string& path, RunRecord& run) {
  std::ifstream in(path);
  if (!in) {
    return;
  }
  try {
    json j = json::parse(in);
    run.engine = j.value("engine", run.engine);
    if (auto end = j.find("end_us"); end != j.end()) {
      if (!end->is_number_integer()) {
        throw Error(fmt::format("end_us: expected whole microseconds, got {}", end->dump()));
      }
      run.end = run_time(end->get<int64_t>(), "end_us");
    }
    auto scenario = j.find("scenario");
    if (scenario != j.end() && scenario->is_object()) {
      std::map<std::string, std::string> strings;
      for (const auto& [key, value] : scenario->items()) {
        strings[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
      run.scenario = scenario_from_strings(strings);
    }
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace

std::string RunFolder::path(std::string_view file) const {
  return fmt::format("{}/{}", dir_, file);
}

std::string RunFolder::pod_log(std::string_view pod) const {
  return fmt::format("{}/{}.log", pods(), pod);
}

void RunFolder::create() const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    throw Error(fmt::format("cannot create the run folder '{}': {}", dir_, ec.message()));
  }
}

void RunFolder::write_run_json(const RunRecord& run) const {
  std::string file = run_json();
  std::ofstream out = open_for_writing(file);
  json j = {
      {"engine", run.engine}, {"scenario", to_strings(run.scenario)}, {"end_us", run.end.count()}};
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  close_checked(out, file);
}

void RunFolder::write_sweep_json(std::string_view text) const {
  create();
  std::string file = sweep_json();
  std::ofstream out = open_for_writing(file);
  out << text << '\n';
  close_checked(out, file);
}

void RunFolder::write_sweep_svg(std::string_view text) const {
  create();
  std::string file = sweep_svg();
  std::ofstream out = open_for_writing(file);
  out << text;
  close_checked(out, file);
}

RunRecord RunFolder::read() const {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir_)) {
    throw Error(fmt::format("{}: not a run folder (no such directory)", dir_));
  }
  if (!fs::exists(events()) && !fs::exists(requests())) {
    throw Error(fmt::format("{}: not a run folder (no events.ndjson or requests.ndjson)", dir_));
  }
  RunRecord run;
  run.engine = "lab";
  if (fs::exists(events())) {
    run.events = read_events(events());
  }
  if (fs::exists(requests())) {
    run.requests = read_requests(requests());
  }
  if (fs::exists(buckets())) {
    run.buckets = read_buckets(buckets());
  }
  read_run_json(run_json(), run);
  return run;
}

RunWriter::RunWriter(const RunFolder& folder, Traffic traffic)
    : folder_(folder), traffic_(traffic) {
  folder_.create();
  std::string stale = traffic == Traffic::requests ? folder_.buckets() : folder_.requests();
  std::error_code ignored;  // absent is fine; one we cannot remove fails read() later, loudly
  std::filesystem::remove(stale, ignored);
  events_ = open_for_writing(folder_.events());
  traffic_out_ =
      open_for_writing(traffic == Traffic::requests ? folder_.requests() : folder_.buckets());
}

void RunWriter::write(const Event& event) {
  write_ndjson(events_, event);
  events_.flush();
}

void RunWriter::write(const RequestRecord& request) {
  assert(traffic_ == Traffic::requests);  // the constructor opened the file for this kind
  write_ndjson(traffic_out_, request);
}

void RunWriter::write(const TimeBucket& bucket) {
  assert(traffic_ == Traffic::buckets);  // the constructor opened the file for this kind
  write_ndjson(traffic_out_, bucket);
}

void RunWriter::flush() {
  events_.flush();
  traffic_out_.flush();
}

void RunWriter::close() {
  close_checked(events_, folder_.events());
  close_checked(traffic_out_,
                traffic_ == Traffic::requests ? folder_.requests() : folder_.buckets());
}

}  // namespace zerodrop::record
