#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "watch/verdict.h"

namespace zerodrop::watch {

// watch's metrics and their OpenMetrics text (/metrics). Labels are bounded: namespace, kind,
// workload, verdict, hole (the closed set), class (the closed outcome set), service, node, target
// (service, ingress), phase (rollout, baseline); never a pod. Thread-safe.
//
// Hand-written rather than Debian's prometheus-cpp (1.0.1): its TextSerializer writes only the
// Prometheus 0.0.4 text format, not OpenMetrics (`# EOF`, counter families without `_total`), and
// its -dev package pulls civetweb and libcurl for the exposer and push gateway, which watch does
// not need (it serves /metrics from its own server). These are eight families computed from a
// few maps.
class Metrics {
public:
  // Upper bounds (s) of the propagation histogram's buckets; +Inf follows.
  static constexpr std::array<double, 9> kPropagationBounds = {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60};

  void rollout_ended(const RolloutResult& r);
  void baseline(const std::string& namespace_name, const std::string& service, uint64_t requests,
                uint64_t failed);
  // Every agent request by the target it went through: target "service" (the ClusterIP or the
  // node's routing) or "ingress" (the Ingress host through its controller); phase "rollout"
  // while a rollout of a workload behind the Service is measured, else "baseline".
  enum class Target { service, ingress };
  void probed(const std::string& namespace_name, const std::string& service, Target target,
              bool during_rollout, uint64_t requests, uint64_t failed);
  void agents(int reporting, int lost);
  void leader(bool is_leader);
  void in_progress(int rollouts);
  void event_failed();

  // The exposition, ending in "# EOF\n".
  std::string text() const;

private:
  struct Histogram {
    std::array<uint64_t, kPropagationBounds.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };

  using Workload = std::tuple<std::string, std::string, std::string>;  // namespace, kind, name

  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, uint64_t> rollouts_;
  std::map<Workload, uint64_t> requests_;
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, uint64_t>
      failed_;
  std::map<std::string, Histogram> propagation_;  // by node
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> baseline_;
  // namespace, service, target, phase -> requests, failed
  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           std::pair<uint64_t, uint64_t>>
      probed_;
  int agents_reporting_ = 0;
  int agents_lost_ = 0;
  bool leader_ = false;
  int in_progress_ = 0;
  uint64_t events_failed_ = 0;
};

// A label value escaped for the exposition: backslash, double quote and newline.
std::string label_value(std::string_view text);

}  // namespace zerodrop::watch
