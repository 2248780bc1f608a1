#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "load/load.h"
#include "record/run_record.h"
#include "verify/agent_buckets.h"

namespace zerodrop::verify {

// `zerodrop verify-agent`: one of verify's load pods. It sends its share of the load to the
// Service from inside the cluster (through its node's routing) and writes the agent stream on
// stdout, which verify follows through the API's pods/log.
struct AgentOptions {
  std::string url;      // the target; empty: from --service and the service link variables
  std::string service;  // NAME[:PORTNAME]: http://$NAME_SERVICE_HOST:$NAME_SERVICE_PORT[_PORTNAME]
  std::string path = "/";
  load::Options load;  // rate (this agent's share), keep-alive, headers, timeouts
  Duration duration = std::chrono::minutes(30);  // a hard stop even if nobody stops it
  std::string pod;                               // $POD_NAME
  std::string node;                              // $NODE_NAME
  int index = 0;                                 // $JOB_COMPLETION_INDEX
  int count = 1;
  AgentRecords records = AgentRecords::failed;
  const std::atomic<bool>* stop = nullptr;  // SIGTERM: finish in-flight requests, then bye
};

// The target URL of an agent: `url`, else the Service's link variables from `env` (a getenv).
// Throws Error naming the variable that is missing.
std::string agent_target(const AgentOptions& options,
                         const std::function<const char*(const char*)>& env);

// Runs the load and writes the stream to `out`, one JSON object a line, each with "k" (kind)
// and "n" (its line number from 0): hello (pod, node, index/count, target, rate, records,
// wall_us = the wall-clock time of the load's t = 0), req (one request in requests.ndjson's form,
// times from t = 0) for every failed request (every request with AgentRecords::all), bucket (one
// backend's 100 ms, AgentRecords::failed only), summary, bye (the line count). Returns the exit
// code.
int run_agent(const AgentOptions& options, std::ostream& out);

// One line of an agent stream, as verify reads it.
struct AgentLine {
  std::string kind;
  uint64_t n = 0;
  nlohmann::json body;                           // the whole line
  std::optional<record::RequestRecord> request;  // kind "req"
  std::optional<BackendBucket> bucket;           // kind "bucket"
};

// Parses one stream line; nullopt for text that is not one (a runtime's own words in the log).
// Throws Error for a req or bucket line whose content is malformed.
std::optional<AgentLine> parse_agent_line(std::string_view line);

}  // namespace zerodrop::verify
