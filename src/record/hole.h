#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/enum_names.h"

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
  schema_race,           // old and new versions disagree with the database schema mid-rollout
  proxy_sync_loss,       // the node's proxy loses a new connect while it rewrites its rules
  ingress_reload_reset,  // an ingress reload closes a kept-alive client connection under a request
  unexplained,           // a failure no rule explains (the diagnosis says why)
};

inline constexpr size_t kHoleCount = static_cast<size_t>(Hole::unexplained) + 1;

// Everything a hole shows to users, in one row: `zerodrop --help`, report.html's palette, the
// terminal timeline and the docs' tables (tests/record/hole_test.cc checks the docs) read it.
struct HoleInfo {
  Hole hole;
  std::string_view id;           // the stable id in every output
  std::string_view meaning;      // one line: what is wrong
  std::string_view html_colour;  // the fill of its failures in report.html
  std::string_view ansi_colour;  // the SGR colour of its letter in the terminal timeline
  char letter;                   // its failures in the terminal timeline
};

inline constexpr HoleInfo kHoles[] = {
    {Hole::deregistration_race, "deregistration-race",
     "the process stops accepting while routers still send it new connections", "#d32f2f", "31",
     'D'},
    {Hole::no_drain, "no-drain", "the process exits or closes connections with requests in flight",
     "#8e24aa", "35", 'N'},
    {Hole::grace_overrun, "grace-overrun", "SIGKILL at the end of the grace period cuts the drain",
     "#f57c00", "33", 'G'},
    {Hole::keepalive_stale, "keepalive-stale",
     "reused keep-alive connections keep carrying requests to a terminating pod", "#0097a7", "36",
     'K'},
    {Hole::readiness_lies, "readiness-lies", "a new pod is routed before it can serve", "#1e88e5",
     "34", 'R'},
    {Hole::capacity_dip, "capacity-dip",
     "fewer serving replicas than the load needs during the rollout", "#fbc02d", "93", 'C'},
    {Hole::liveness_kills_drain, "liveness-kills-drain",
     "the liveness probe fails during shutdown and the pod is killed", "#6d4c41", "91", 'L'},
    {Hole::schema_race, "schema-race",
     "a migration changes the schema under the version still serving", "#43a047", "32", 'S'},
    {Hole::proxy_sync_loss, "proxy-sync-loss",
     "the node's proxy loses a new connection while it rewrites its rules for an endpoint change",
     "#ec407a", "95", 'P'},
    {Hole::ingress_reload_reset, "ingress-reload-reset",
     "an ingress reload closes idle kept-alive client connections under the next request sent on "
     "one",
     "#5e35b1", "94", 'I'},
    {Hole::unexplained, "unexplained", "a failure no rule explains (the diagnosis says why)",
     "#757575", "37", '?'},
};

constexpr bool holes_in_enum_order() {
  for (size_t i = 0; i < std::size(kHoles); ++i) {
    if (static_cast<size_t>(kHoles[i].hole) != i || kHoles[i].id.empty()
        || kHoles[i].meaning.empty() || kHoles[i].html_colour.empty()
        || kHoles[i].ansi_colour.empty()) {
      return false;
    }
  }
  return true;
}

static_assert(std::size(kHoles) == kHoleCount, "one kHoles row per Hole");
static_assert(holes_in_enum_order(), "kHoles rows complete and in the order of enum Hole");

constexpr const HoleInfo& info(Hole h) {
  return kHoles[static_cast<size_t>(h)];
}

inline constexpr std::array<std::string_view, kHoleCount> kHoleIds = [] {
  std::array<std::string_view, kHoleCount> ids{};
  for (size_t i = 0; i < kHoleCount; ++i) {
    ids[i] = kHoles[i].id;
  }
  return ids;
}();

constexpr std::string_view to_string(Hole h) {
  return info(h).id;
}

constexpr std::optional<Hole> hole_from_string(std::string_view id) {
  return enum_from_name<Hole>(kHoleIds, id);
}

}  // namespace zerodrop::record
