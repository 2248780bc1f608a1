// The run folder: report files out, run.json + NDJSON records in.
#include "report/report.h"

#include <filesystem>
#include <fstream>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::report {
namespace {

using nlohmann::json;

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
  return out;
}

void finish(std::ofstream& out, const std::string& path) {
  out.close();
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
}

// run.json is optional: a folder holding only NDJSON records re-renders as a lab run.
void read_run_json(const std::string& path, record::RunRecord& run) {
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
      run.end = record::run_time(end->get<int64_t>(), "end_us");
    }
    auto scenario = j.find("scenario");
    if (scenario != j.end() && scenario->is_object()) {
      for (const auto& [key, value] : scenario->items()) {
        run.scenario[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace

void write_reports(const std::string& dir, const record::RunRecord& run,
                   const diagnose::Diagnosis& diagnosis) {
  std::string json_path = dir + "/report.json";
  std::ofstream json_out = open_for_writing(json_path);
  write_json(json_out, run, diagnosis);
  finish(json_out, json_path);
  std::string html_path = dir + "/report.html";
  std::ofstream html_out = open_for_writing(html_path);
  write_html(html_out, run, diagnosis);
  finish(html_out, html_path);
}

void write_run_json(const std::string& dir, const record::RunRecord& run) {
  std::string path = dir + "/run.json";
  std::ofstream out = open_for_writing(path);
  json j = {{"engine", run.engine}, {"scenario", run.scenario}, {"end_us", run.end.count()}};
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  finish(out, path);
}

record::RunRecord read_run(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    throw Error(fmt::format("{}: not a run folder (no such directory)", dir));
  }
  std::string events = dir + "/events.ndjson";
  std::string requests = dir + "/requests.ndjson";
  std::string buckets = dir + "/buckets.ndjson";  // the simulator's traffic, per time bucket
  if (!fs::exists(events) && !fs::exists(requests)) {
    throw Error(fmt::format("{}: not a run folder (no events.ndjson or requests.ndjson)", dir));
  }
  record::RunRecord run;
  run.engine = "lab";
  if (fs::exists(events)) {
    run.events = record::read_events(events);
  }
  if (fs::exists(requests)) {
    run.requests = record::read_requests(requests);
  }
  if (fs::exists(buckets)) {
    run.buckets = record::read_buckets(buckets);
  }
  read_run_json(dir + "/run.json", run);
  return run;
}

}  // namespace zerodrop::report
