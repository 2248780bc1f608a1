#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zerodrop::record {

// The closed set of holes through which a rollout drops requests. Audit rules, lab and sim
// diagnosis and every report use these ids (docs/ARCHITECTURE.md has the table).
enum class Hole : uint8_t {
  deregistration_race,   // stops accepting while routers still send new connections
  no_drain,              // exits or closes connections with requests in flight
  grace_overrun,         // SIGKILL at the end of the grace period cuts the drain
  keepalive_stale,       // reused keep-alive connections carry requests to a terminating pod
  readiness_lies,        // a new pod is routed before it can serve
  capacity_dip,          // fewer serving replicas than the load needs
  liveness_kills_drain,  // the liveness probe kills or restarts the pod during shutdown
  unexplained,           // a failure no rule explains (the diagnosis says why)
};

inline constexpr size_t kHoleCount = 8;

inline constexpr std::array<std::string_view, kHoleCount> kHoleIds = {
    "deregistration-race", "no-drain",    "grace-overrun",        "keepalive-stale",
    "readiness-lies",      "capacity-dip", "liveness-kills-drain", "unexplained",
};

constexpr std::string_view to_string(Hole h) { return kHoleIds[static_cast<size_t>(h)]; }

constexpr std::optional<Hole> hole_from_string(std::string_view id) {
  for (size_t i = 0; i < kHoleCount; ++i) {
    if (kHoleIds[i] == id) {
      return static_cast<Hole>(i);
    }
  }
  return std::nullopt;
}

}  // namespace zerodrop::record
