#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "record/run_folder.h"
#include "verify/agents.h"
#include "verify/api_client.h"
#include "verify/timeline.h"
#include "verify/watches.h"
#include "watch/rollouts.h"
#include "watch/targets.h"
#include "watch/verdict.h"

namespace zerodrop::watch {

// What a measurement starts from.
struct MeasureSetup {
  RolloutChange start;                 // the tracker's `started`
  std::optional<ServiceInfo> service;  // the Service its agents probe (none: unmeasured)
  std::string folder;                  // the run folder to create
  std::string folder_name;             // its name under --out, for the Event and /runs/
  std::string server_version;          // the API server's, for the record
  std::chrono::milliseconds tail{std::chrono::seconds(5)};  // measured after the end
};

// One rollout measured: its own timeline (verify's), watches of its pods, its Service's
// EndpointSlices and the namespace's Events (verify's Watches), the workload fed from watch's
// informer, and the agents' traffic to its Service from the moment the rollout was seen.
// Thread-safe: the informer, the agents' reports and the controller's ticks call it.
class Measured {
public:
  static constexpr std::chrono::seconds kSettle{8};

  // Creates the run folder and starts the watches. Throws Error naming what failed.
  Measured(const verify::ApiClient& client, MeasureSetup setup);

  const WorkloadKey& key() const { return setup_.start.key; }

  const std::string& svc() const;

  const std::string& folder_name() const {
    return setup_.folder_name;
  }  // "NS/NAME" of the probed Service, "" when none

  // The workload as the informer saw it (any kind: a DaemonSet's status is read as a
  // Deployment's for verify's Observer, which logs the rollout's steps).
  void on_workload(const nlohmann::json& object);

  void note(const std::string& text) { timeline_.note(text); }

  // The agents' lines; false when outside this measurement (before its start).
  void agent_hello(const verify::AgentHello& h);
  bool agent_bucket(const verify::AgentHello& h, const verify::BackendBucket& b);
  bool agent_request(const verify::AgentHello& h, const record::RequestRecord& r);

  // The controller reported the end. The measurement goes on until every deleted pod is gone
  // (at most `drain_limit`), then for the tail: requests intended until then belong to the
  // rollout, later ones to the baseline. It is done once the agents have delivered them
  // (kSettle later: an agent writes a 100 ms bucket once its timeout and 1 s have passed, and
  // reports every second).
  void ended(RolloutEnd end, const std::string& reason);
  bool done(std::chrono::steady_clock::time_point now, std::chrono::seconds drain_limit);

  // Stops the watches, closes the record, runs `finish` (diagnosis, reports) and returns the
  // result. `lost` names agents that stopped reporting meanwhile (pod names).
  RolloutResult finish(const Finish& finish, const std::set<std::string>& lost);

private:
  MeasureSetup setup_;
  record::RunFolder folder_;
  verify::Timeline timeline_;
  std::unique_ptr<verify::Watches> watches_;
  std::mutex mutex_;
  std::map<std::string, int64_t> offsets_us_;  // agent pod -> its t = 0 on this clock
  std::optional<RolloutEnd> end_;
  std::string end_reason_;
  std::optional<std::chrono::steady_clock::time_point> ended_at_;
  std::optional<std::chrono::steady_clock::time_point> drained_at_;
  std::optional<record::Micros> window_end_;  // on the timeline: the tail's end
};

}  // namespace zerodrop::watch
