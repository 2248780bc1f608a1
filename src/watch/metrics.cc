#include "watch/metrics.h"

#include <fmt/format.h>

namespace zerodrop::watch {

std::string label_value(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Metrics::rollout_ended(const RolloutResult& r) {
  std::lock_guard lock(mutex_);
  const WorkloadKey& k = r.key;
  ++rollouts_[{k.namespace_name, k.kind, k.name, std::string(verdict_label(r))}];
  requests_[{k.namespace_name, k.kind, k.name}] += r.verdict.requests;
  for (const auto& [hole_class, n] : r.verdict.by_hole_class) {
    failed_[{k.namespace_name, k.kind, k.name, hole_class.first, hole_class.second}] += n;
  }
  for (const auto& [node, seconds] : r.propagation) {
    Histogram& h = propagation_[node];
    for (size_t i = 0; i < kPropagationBounds.size(); ++i) {
      if (seconds <= kPropagationBounds[i]) {
        ++h.buckets[i];
        break;
      }
    }
    ++h.count;
    h.sum += seconds;
  }
}

void Metrics::baseline(const std::string& namespace_name, const std::string& service,
                       uint64_t requests, uint64_t failed) {
  std::lock_guard lock(mutex_);
  auto& [total, bad] = baseline_[{namespace_name, service}];
  total += requests;
  bad += failed;
}

void Metrics::probed(const std::string& namespace_name, const std::string& service, Target target,
                     bool during_rollout, uint64_t requests, uint64_t failed) {
  std::lock_guard lock(mutex_);
  auto& [total, bad] =
      probed_[{namespace_name, service, target == Target::ingress ? "ingress" : "service",
               during_rollout ? "rollout" : "baseline"}];
  total += requests;
  bad += failed;
}

void Metrics::agents(int reporting, int lost) {
  std::lock_guard lock(mutex_);
  agents_reporting_ = reporting;
  agents_lost_ = lost;
}

void Metrics::leader(bool is_leader) {
  std::lock_guard lock(mutex_);
  leader_ = is_leader;
}

void Metrics::in_progress(int rollouts) {
  std::lock_guard lock(mutex_);
  in_progress_ = rollouts;
}

void Metrics::event_failed() {
  std::lock_guard lock(mutex_);
  ++events_failed_;
}

namespace {

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# TYPE {} {}\n# HELP {} {}\n", name, type, name, help);
}

std::string workload_labels(const std::string& ns, const std::string& kind,
                            const std::string& name) {
  return fmt::format(R"(namespace="{}",kind="{}",workload="{}")", label_value(ns),
                     label_value(kind), label_value(name));
}

}  // namespace

std::string Metrics::text() const {
  std::lock_guard lock(mutex_);
  std::string out;
  family(out, "zerodrop_watch_rollouts", "counter",
         "Rollouts measured, by workload and verdict (clean, dropped, partial, unmeasured).");
  for (const auto& [key, n] : rollouts_) {
    const auto& [ns, kind, name, verdict] = key;
    out += fmt::format("zerodrop_watch_rollouts_total{{{},verdict=\"{}\"}} {}\n",
                       workload_labels(ns, kind, name), label_value(verdict), n);
  }
  family(out, "zerodrop_watch_rollout_requests", "counter",
         "Agent requests sent during measured rollouts, by workload.");
  for (const auto& [key, n] : requests_) {
    const auto& [ns, kind, name] = key;
    out += fmt::format("zerodrop_watch_rollout_requests_total{{{}}} {}\n",
                       workload_labels(ns, kind, name), n);
  }
  family(out, "zerodrop_watch_failed_requests", "counter",
         "Requests that failed during measured rollouts, by workload, hole and outcome class.");
  for (const auto& [key, n] : failed_) {
    const auto& [ns, kind, name, hole, cls] = key;
    out += fmt::format("zerodrop_watch_failed_requests_total{{{},hole=\"{}\",class=\"{}\"}} {}\n",
                       workload_labels(ns, kind, name), label_value(hole), label_value(cls), n);
  }
  family(out, "zerodrop_watch_propagation_seconds", "histogram",
         "When each node's routing had surely dropped a deleted pod, from its deletion (upper "
         "bound inferred from the node's agent traffic).");
  for (const auto& [node, h] : propagation_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kPropagationBounds.size(); ++i) {
      cumulative += h.buckets[i];
      out += fmt::format("zerodrop_watch_propagation_seconds_bucket{{node=\"{}\",le=\"{}\"}} {}\n",
                         label_value(node), kPropagationBounds[i], cumulative);
    }
    out += fmt::format(
        "zerodrop_watch_propagation_seconds_bucket{{node=\"{}\",le=\"+Inf\"}} {}\n"
        "zerodrop_watch_propagation_seconds_count{{node=\"{}\"}} {}\n"
        "zerodrop_watch_propagation_seconds_sum{{node=\"{}\"}} {}\n",
        label_value(node), h.count, label_value(node), h.count, label_value(node), h.sum);
  }
  family(out, "zerodrop_watch_baseline_requests", "counter",
         "Agent requests outside any rollout (the baseline), by Service.");
  family(out, "zerodrop_watch_baseline_failed_requests", "counter",
         "Agent requests outside any rollout that failed (not the rollouts'), by Service.");
  for (const auto& [key, counts] : baseline_) {
    std::string labels = fmt::format(R"(namespace="{}",service="{}")", label_value(key.first),
                                     label_value(key.second));
    out += fmt::format("zerodrop_watch_baseline_requests_total{{{}}} {}\n", labels, counts.first);
    out += fmt::format("zerodrop_watch_baseline_failed_requests_total{{{}}} {}\n", labels,
                       counts.second);
  }
  family(out, "zerodrop_watch_probe_requests", "counter",
         "Agent requests by Service, target (service: its ClusterIP or the node's routing; "
         "ingress: the Ingress host through its controller) and phase (rollout, baseline).");
  family(out, "zerodrop_watch_probe_failed_requests", "counter",
         "Agent requests that failed, by Service, target and phase.");
  for (const auto& [key, counts] : probed_) {
    const auto& [ns, service, target, phase] = key;
    std::string labels = fmt::format(R"(namespace="{}",service="{}",target="{}",phase="{}")",
                                     label_value(ns), label_value(service), target, phase);
    out += fmt::format("zerodrop_watch_probe_requests_total{{{}}} {}\n", labels, counts.first);
    out +=
        fmt::format("zerodrop_watch_probe_failed_requests_total{{{}}} {}\n", labels, counts.second);
  }
  family(out, "zerodrop_watch_agents", "gauge",
         "Agents by state: reporting, or lost (no report for 5 s; not counted as drops).");
  out += fmt::format("zerodrop_watch_agents{{state=\"reporting\"}} {}\n", agents_reporting_);
  out += fmt::format("zerodrop_watch_agents{{state=\"lost\"}} {}\n", agents_lost_);
  family(out, "zerodrop_watch_rollouts_in_progress", "gauge", "Rollouts being measured now.");
  out += fmt::format("zerodrop_watch_rollouts_in_progress {}\n", in_progress_);
  family(out, "zerodrop_watch_leader", "gauge", "1 when this replica holds the Lease.");
  out += fmt::format("zerodrop_watch_leader {}\n", leader_ ? 1 : 0);
  family(out, "zerodrop_watch_event_failures", "counter", "Events the API refused.");
  out += fmt::format("zerodrop_watch_event_failures_total {}\n", events_failed_);
  out += "# EOF\n";
  return out;
}

}  // namespace zerodrop::watch
