#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "record/run_record.h"
#include "verify/agent_buckets.h"
#include "verify/api_client.h"

namespace zerodrop::verify {

// The Indexed Job of verify's agents, as verify creates it.
struct AgentJob {
  std::string namespace_name;
  std::string run_id;  // the Job is zerodrop-verify-RUN_ID; every object is labelled with it
  std::string image;
  int count = 1;
  bool per_node = true;  // required anti-affinity: at most one agent per node
  std::string service;   // NAME[:PORTNAME] of the Service the agents load
  double rate = 10;      // each agent's requests per second
  bool keepalive = false;
  double fresh_share = 0;  // with keepalive: the share of requests that close their connection
  Duration timeout = std::chrono::seconds(5);
  std::string backend_header = "X-Pod-Name";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string path = "/";
  AgentRecords records = AgentRecords::failed;
  Duration deadline = std::chrono::minutes(15);  // activeDeadlineSeconds and each agent's stop
  nlohmann::json owner;                          // the run's anchor's ownerReference (null: none)

  std::string name() const { return "zerodrop-verify-" + run_id; }
};

// The batch/v1 Job manifest: completionMode Indexed, completions = parallelism = count,
// backoffLimit 0, activeDeadlineSeconds, ttlSecondsAfterFinished; pods that pass PodSecurity
// "restricted", with the downward API's POD_NAME and NODE_NAME, running
// `/zerodrop verify-agent --service …`; owned by the run's anchor when `owner` is set.
nlohmann::json agent_job_manifest(const AgentJob& job);

// An agent as its hello line introduced it.
struct AgentHello {
  std::string pod;
  std::string node;
  int index = 0;
  int64_t wall_us = 0;                       // the wall-clock time of the agent's t = 0
  AgentRecords records = AgentRecords::all;  // what its stream carries (older agents: all)
};

// An agent's summary line: its own count of the requests it finished.
struct AgentSummary {
  uint64_t requests = 0;
  uint64_t failed = 0;
};

// What the agents' streams deliver, from their follow threads (the callee locks).
struct AgentSink {
  std::function<void(const AgentHello&)> on_hello;
  std::function<void(const AgentHello&, record::RequestRecord)> on_request;
  std::function<void(const AgentHello&, const BackendBucket&)> on_bucket;
  std::function<void(const AgentHello&, const AgentSummary&)> on_summary;
  std::function<void(const std::string&)> on_note;
};

// One agent's stream as verify reads it: each line handed to the sink once, in the order of its
// number; a line seen before (a resumed follow) is skipped, a gap in the numbers is said as a
// note naming the missing lines. Not thread-safe: one follow thread feeds it.
class AgentStream {
public:
  AgentStream(std::string pod, std::string node, const AgentSink& sink)
      : pod_(std::move(pod)), node_(std::move(node)), sink_(sink) {}

  // Reads one line of the log. Returns true when it was the agent's hello.
  bool feed(const std::string& text);

  bool said_bye() const { return bye_; }

  uint64_t next() const { return next_; }

private:
  std::string pod_;
  std::string node_;
  const AgentSink& sink_;
  std::optional<AgentHello> hello_;
  uint64_t next_ = 0;  // the line number expected next
  bool bye_ = false;
};

// verify's agents: creates their Job, follows each agent pod's log (pods/log?follow=true) as the
// pod appears, parses the agent stream (lines numbered: a gap is said), and deletes the Job
// (propagationPolicy Background) when stopped or destroyed, unless kept.
class Agents {
public:
  // Creates the Job. Throws Error with the API's reason when it is refused.
  Agents(const ApiClient& client, AgentJob job, AgentSink sink, bool keep);
  ~Agents();  // stop(), then joins every thread
  Agents(const Agents&) = delete;
  Agents& operator=(const Agents&) = delete;

  // Agents that said hello so far, and the pods that cannot start (why, one a line).
  int ready() const;
  std::vector<std::string> problems() const;
  // Ends the load: deletes the Job (its pods get SIGTERM, finish and say bye) unless kept, then
  // waits up to `drain` for every stream to end.
  void stop(Duration drain);

private:
  struct Follow;
  void discover();
  void follow(Follow& f);

  const ApiClient& client_;
  AgentJob job_;
  AgentSink sink_;
  bool keep_;
  bool deleted_ = false;
  std::atomic<bool> stopping_{false};
  Cancel discover_cancel_;
  std::thread discoverer_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Follow>> follows_;  // by pod
  std::set<std::string> problems_;
  int ready_ = 0;
};

// A short random id for a run's objects (lower-case letters and digits).
std::string new_run_id();

}  // namespace zerodrop::verify
