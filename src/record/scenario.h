#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/duration.h"
#include "base/int_or_percent.h"

namespace zerodrop::record {

// A preStop hook as the run used it.
struct PreStop {
  std::string text;               // as the report shows it: "none", "sleep:2s", "exec:sleep 5"
  std::optional<Duration> delay;  // how long it holds the stop signal back, when known

  bool operator==(const PreStop&) const = default;
};

// "none" (delay 0), "sleep:DURATION" (that delay), "exec:…" or "http:…" (delay unknown).
// Throws Error naming `what` on anything else.
PreStop parse_prestop(std::string_view text, std::string_view what);

enum class ProbeKind : uint8_t { none, http, tcp, exec, grpc };

// A readiness probe as the run used it: "none", "tcp", "http:/readyz", "exec:cat /tmp/ready",
// "grpc", "grpc:SERVICE".
struct Readiness {
  ProbeKind kind = ProbeKind::none;
  std::string target;  // http: the path; exec: the command; tcp: empty or the port; grpc: the
                       // health service, empty for the whole server

  std::string text() const;  // the form above, which parse_readiness reads back
  bool operator==(const Readiness&) const = default;
};

// Throws Error naming `what` on a form other than those above.
Readiness parse_readiness(std::string_view text, std::string_view what);

// The settings a run used: what the diagnosis computes its advice from, typed, and whatever else
// the engine wants the report to show (`extra`, shown as given). Absent fields were not known.
struct Scenario {
  std::optional<int> replicas;
  std::optional<PreStop> prestop;
  std::optional<Duration> grace;  // terminationGracePeriodSeconds
  std::optional<Readiness> readiness;
  std::optional<IntOrPercent> max_surge;
  std::optional<IntOrPercent> max_unavailable;
  std::optional<std::string> k8s_version;    // "1.30"
  std::optional<uint16_t> port;              // the container's port; 0: a free one per pod (lab)
  std::optional<std::string> container;      // the container the run used, from the manifest
  std::map<std::string, std::string> extra;  // engine-specific: "nodes", "propagation", …

  bool operator==(const Scenario&) const = default;
};

// The scenario as run.json and report.json keep it: one string per key, the typed fields under
// "replicas", "prestop", "grace", "readiness", "max_surge", "max_unavailable", "k8s_version",
// "port" and "container", beside the extras. Its only serialization: engines and the diagnosis
// use the typed fields.
std::map<std::string, std::string> to_strings(const Scenario& scenario);

// Reads that form back; a typed key that does not parse is an Error naming it, any other key is
// an extra.
Scenario scenario_from_strings(const std::map<std::string, std::string>& strings);

}  // namespace zerodrop::record
