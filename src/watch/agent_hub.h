#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "verify/agent_watch.h"
#include "verify/agents.h"
#include "watch/measured.h"
#include "watch/metrics.h"

namespace zerodrop::watch {

// The agents' side of watch: each report (verify-agent --watcher) split into its targets' agent
// streams (verify's AgentStream: numbered lines, repeats skipped, gaps said), each line handed to
// the measurements of its Service that are running, or counted as the Service's baseline. Knows
// when each agent last reported. Thread-safe.
class AgentHub {
public:
  explicit AgentHub(Metrics& metrics);
  ~AgentHub();
  AgentHub(const AgentHub&) = delete;
  AgentHub& operator=(const AgentHub&) = delete;

  // One report; returns the answer's body (the targets). Throws Error for a malformed body.
  std::string report(const std::string& pod, const std::string& node, const std::string& body,
                     std::chrono::steady_clock::time_point now);

  // The targets handed to every agent from now on.
  void set_targets(std::vector<verify::ProbeTarget> targets);

  // A measurement of a Service begins (it gets the hellos already seen) or ends.
  void attach(const std::shared_ptr<Measured>& m);
  void detach(const std::shared_ptr<Measured>& m);

  // Agents silent for longer than `silence` are lost (their last report's pods).
  std::set<std::string> lost(std::chrono::steady_clock::time_point now,
                             std::chrono::seconds silence) const;
  int reporting(std::chrono::steady_clock::time_point now, std::chrono::seconds silence) const;

  // Forgets agents silent for longer than `forget` (pods the DaemonSet replaced).
  void prune(std::chrono::steady_clock::time_point now, std::chrono::seconds forget);

  // Target errors the agents reported ("svc: error"), each once.
  std::vector<std::string> take_problems();

private:
  struct Stream;  // one agent's stream of one target
  Stream& stream(const std::string& pod, const std::string& node, const std::string& svc);
  void on_bucket(const std::string& svc, const verify::AgentHello& h,
                 const verify::BackendBucket& b);

  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::string targets_json_ = R"({"targets":[]})";
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Stream>> streams_;  // pod, svc
  std::map<std::string, std::vector<std::shared_ptr<Measured>>> measured_;          // by svc
  std::map<std::string, std::chrono::steady_clock::time_point> last_report_;        // by pod
  std::set<std::string> problems_seen_;
  std::vector<std::string> problems_;
};

}  // namespace zerodrop::watch
