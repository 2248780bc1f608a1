#include <algorithm>
#include <array>
#include <ostream>

#include "base/enum_names.h"
#include "record/json_fields.h"
#include "record/run_record.h"

namespace zerodrop::record {
namespace detail {

uint32_t h2_error_of(const json& v, std::string_view field) {
  std::optional<uint32_t> code = h2_error_from_name(v.get<std::string>());
  if (!code) {
    throw Error(fmt::format("{}: unknown HTTP/2 error '{}'", field, v.get<std::string>()));
  }
  return *code;
}

GoawayRecord goaway_from_json(const json& g) {
  return {time_of(g, "t_us"), whole<uint32_t>(g.at("last_stream_id"), "goaway"),
          h2_error_of(g.at("error"), "goaway"), g.value("debug", "")};
}

json to_json(const GoawayRecord& g) {
  return {{"t_us", g.t.count()},
          {"last_stream_id", g.last_stream_id},
          {"error", h2_error_name(g.error)},
          {"debug", g.debug}};
}

}  // namespace detail

namespace {

using detail::json;
using detail::time_of;
using detail::whole;
using detail::whole_or;

constexpr auto kEventNames = std::to_array<std::string_view>({
    "pod_created",
    "pod_started",
    "pod_ready",
    "pod_unready",
    "probe_failed",
    "liveness_restart",
    "deletion_started",
    "prestop_started",
    "prestop_finished",
    "prestop_failed",
    "signal_sent",
    "signal_ignored",
    "pod_exited",
    "process_exited",
    "endpoint_changed",
    "router_applied",
    "router_refused",
    "rollout_started",
    "rollout_step",
    "rollout_finished",
    "disruption_started",
    "disruption_ended",
    "note",
    "migration_started",
    "migration_finished",
    "goaway_received",
    "connection_closed",
});
static_assert(kEventNames.size() == static_cast<size_t>(EventKind::connection_closed) + 1);
constexpr auto kCloseNames = std::to_array<std::string_view>({"eof", "reset", "protocol_error"});

nlohmann::ordered_json to_json(const Conditions& c) {
  return {{"ready", c.ready}, {"serving", c.serving}, {"terminating", c.terminating}};
}

ConnectionFacts connection_from_json(const json& j) {
  ConnectionFacts c{whole<uint32_t>(j.at("conn"), "conn"),
                    whole<uint16_t>(j.at("local_port"), "local_port")};
  if (j.contains("goaway")) {
    c.goaway = detail::goaway_from_json(j["goaway"]);
  }
  std::string closed = j.value("closed", "eof");
  auto it = std::find(kCloseNames.begin(), kCloseNames.end(), closed);
  if (it == kCloseNames.end()) {
    throw Error(fmt::format("closed: expected eof, reset or protocol_error, got '{}'", closed));
  }
  c.closed = static_cast<CloseKind>(it - kCloseNames.begin());
  c.open_streams = whole_or<uint32_t>(j, "open_streams", 0);
  return c;
}

Event event_from_json(const json& j) {
  Event e;
  e.t = time_of(j, "t_us");
  if (j.contains("t_min_us")) {
    e.t_min = time_of(j, "t_min_us");
  }
  auto kind = event_kind_from_string(j.at("kind").get<std::string>());
  if (!kind) {
    throw Error(fmt::format("unknown event kind '{}'", j.at("kind").get<std::string>()));
  }
  e.kind = *kind;
  e.pod = j.value("pod", "");
  e.router = j.value("router", "");
  if (j.contains("conditions")) {
    const json& c = j["conditions"];
    e.conditions = Conditions{c.at("ready").get<bool>(), c.at("serving").get<bool>(),
                              c.at("terminating").get<bool>()};
  }
  if (j.contains("exit_code")) {
    e.exit_code = whole<int>(j["exit_code"], "exit_code");
  }
  if (j.contains("signal")) {
    e.signal = whole<int>(j["signal"], "signal");
  }
  e.version = j.value("version", "");
  e.detail = j.value("detail", "");
  if (j.contains("connection")) {
    e.connection = connection_from_json(j["connection"]);
  }
  return e;
}

}  // namespace

std::string_view to_string(EventKind kind) {
  return kEventNames[static_cast<size_t>(kind)];
}

std::optional<EventKind> event_kind_from_string(std::string_view name) {
  return enum_from_name<EventKind>(kEventNames, name);
}

std::string_view to_string(CloseKind kind) {
  return kCloseNames[static_cast<size_t>(kind)];
}

nlohmann::ordered_json to_json(const Event& e) {
  nlohmann::ordered_json j = {{"t_us", e.t.count()}, {"kind", to_string(e.kind)}};
  if (e.t_min) {
    j["t_min_us"] = e.t_min->count();
  }
  if (!e.pod.empty()) {
    j["pod"] = e.pod;
  }
  if (!e.router.empty()) {
    j["router"] = e.router;
  }
  if (e.conditions) {
    j["conditions"] = to_json(*e.conditions);
  }
  if (e.exit_code) {
    j["exit_code"] = *e.exit_code;
  }
  if (e.signal) {
    j["signal"] = *e.signal;
  }
  if (!e.version.empty()) {
    j["version"] = e.version;
  }
  if (!e.detail.empty()) {
    j["detail"] = e.detail;
  }
  if (const std::optional<ConnectionFacts>& c = e.connection) {
    j["connection"] = {{"conn", c->conn}, {"local_port", c->local_port}};
    if (c->goaway) {
      j["connection"]["goaway"] = detail::to_json(*c->goaway);
    }
    if (e.kind == EventKind::connection_closed) {
      j["connection"]["closed"] = to_string(c->closed);
      j["connection"]["open_streams"] = c->open_streams;
    }
  }
  return j;
}

void write_ndjson(std::ostream& out, const Event& e) {
  // A plain json sorts the keys, as events.ndjson has always had them.
  json j = to_json(e);
  out << j.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
}

std::vector<Event> read_events(const std::string& path) {
  return detail::read_lines(path, event_from_json);
}

}  // namespace zerodrop::record
