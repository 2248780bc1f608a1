#pragma once

#include <fstream>
#include <string>
#include <string_view>

#include "record/run_record.h"

namespace zerodrop::record {

// The run folder every engine leaves behind and `zerodrop report` reads; the one place that
// knows its file names:
//   events.ndjson     the run's events, one JSON object a line
//   requests.ndjson   single request records (lab, load), or
//   buckets.ndjson    request counts per time bucket (sim)
//   run.json          the engine, the scenario and the end time
//   report.json, report.html   the diagnosis, rendered by report/
//   pods/POD.log      each pod's output (lab)
class RunFolder {
public:
  // Names a folder; nothing is created or read until asked.
  explicit RunFolder(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }

  std::string events() const { return path("events.ndjson"); }

  std::string requests() const { return path("requests.ndjson"); }

  std::string buckets() const { return path("buckets.ndjson"); }

  std::string run_json() const { return path("run.json"); }

  std::string report_json() const { return path("report.json"); }

  std::string report_html() const { return path("report.html"); }

  std::string sweep_json() const { return path("sweep.json"); }

  std::string sweep_svg() const { return path("sweep.svg"); }

  std::string pods() const { return path("pods"); }

  std::string pod_log(std::string_view pod) const;

  // Creates the folder and its parents. Throws Error naming the folder.
  void create() const;

  // Writes run.json: the engine, the scenario and the end time, so the folder re-renders.
  // Throws Error naming the file it cannot write.
  void write_run_json(const RunRecord& run) const;

  // Writes sweep.json (`sim --sweep`'s table, already JSON text), creating the folder.
  // Throws Error naming the file it cannot write.
  void write_sweep_json(std::string_view text) const;
  // Writes sweep.svg (`sim --sweep`'s plot), creating the folder. Throws Error as above.
  void write_sweep_svg(std::string_view text) const;

  // Reads the folder back: events.ndjson, requests.ndjson (either may be absent, not both),
  // buckets.ndjson and run.json (optional; without it the record is a lab run). Throws Error
  // naming the folder, or the file and line of malformed content.
  RunRecord read() const;

private:
  std::string path(std::string_view file) const;

  std::string dir_;
};

// The records that stream into a folder beside the events.
enum class Traffic : uint8_t { requests, buckets };

// Streams a run record into a folder as it happens. Creates the folder and starts events.ndjson
// and the traffic's file afresh (a stale file of the other traffic kind is removed, so it cannot
// join this run's record). Events are flushed at once: they are few, and a killed run still leaves
// them on disk; traffic is buffered until flush(). Not thread-safe: callers serialize. Throws
// Error naming the folder or file it cannot create or write.
class RunWriter {
public:
  RunWriter(const RunFolder& folder, Traffic traffic);

  const RunFolder& folder() const { return folder_; }

  void write(const Event& event);
  void write(const RequestRecord& request);
  void write(const TimeBucket& bucket);
  void flush();

  // Flushes and closes both files; throws Error naming the file if a write failed.
  void close();

private:
  RunFolder folder_;
  Traffic traffic_;
  std::ofstream events_;
  std::ofstream traffic_out_;
};

}  // namespace zerodrop::record
