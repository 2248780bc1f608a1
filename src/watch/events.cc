#include "watch/events.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::watch {

using Json = nlohmann::json;

std::string thousands(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

std::string_view verdict_label(const RolloutResult& r) {
  if (!r.whole) {
    return "partial";
  }
  if (r.verdict.requests == 0) {
    return "unmeasured";
  }
  return r.verdict.failed > 0 ? "dropped" : "clean";
}

namespace {

std::string holes_text(const Verdict& v) {
  std::string out;
  for (const auto& [hole, n] : v.holes) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", hole, thousands(n));
  }
  return out;
}

std::string ending(const RolloutResult& r) {
  std::string lost = r.agents_lost > 0 ? fmt::format(
                         "; {} of {} agents stopped reporting (their silence is not counted)",
                         r.agents_lost, r.agents)
                                       : "";
  std::string end = r.end == RolloutEnd::complete ? ""
                                                  : fmt::format("; the rollout ended {} ({})",
                                                                to_string(r.end), r.end_reason);
  return fmt::format("{}{}; run {}", lost, end, r.folder);
}

}  // namespace

EventText event_text(const RolloutResult& r) {
  const Verdict& v = r.verdict;
  std::string counts =
      fmt::format("{} of {} requests failed", thousands(v.failed), thousands(v.requests));
  std::string_view label = verdict_label(r);
  if (label == "partial") {
    return {"RolloutPartial",
            fmt::format("measured from the middle (watch started after the rollout began): "
                        "{}{}; no verdict for the whole rollout{}",
                        counts, v.failed > 0 ? ": " + holes_text(v) : "", ending(r)),
            false};
  }
  if (label == "unmeasured") {
    return {"RolloutUnmeasured",
            fmt::format("no agent probed the workload's Service during the rollout{}", ending(r)),
            true};
  }
  if (label == "clean") {
    return {"RolloutClean", counts + ending(r), false};
  }
  return {"RolloutDroppedRequests",
          fmt::format("{}: {}{}{}", counts, holes_text(v), v.fix.empty() ? "" : "; fix: " + v.fix,
                      ending(r)),
          true};
}

Json event_object(const Json& object, const WorkloadKey& key, const EventText& text,
                  const std::string& now) {
  std::string uid;
  if (object.is_object() && object.contains("metadata") && object["metadata"].contains("uid")
      && object["metadata"]["uid"].is_string()) {
    uid = object["metadata"]["uid"].get<std::string>();
  }
  static thread_local std::mt19937_64 random{std::random_device{}()};
  std::string message = text.message.substr(0, 1024);  // the API server's limit
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", fmt::format("{}.{:016x}", key.name, random())},
            {"namespace", key.namespace_name}}},
          {"involvedObject",
           {{"apiVersion", std::string(api_version(key.kind))},
            {"kind", key.kind},
            {"name", key.name},
            {"namespace", key.namespace_name},
            {"uid", uid}}},
          {"reason", text.reason},
          {"message", message},
          {"type", text.warning ? "Warning" : "Normal"},
          {"source", {{"component", "zerodrop-watch"}}},
          {"reportingComponent", "zerodrop-watch"},
          {"reportingInstance", "zerodrop-watch"},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"count", 1}};
}

std::string post_event(const verify::ApiClient& client, const Json& event) {
  std::string ns = event["metadata"]["namespace"].get<std::string>();
  try {
    verify::ApiResponse r =
        client.request(verify::Method::post, "/api/v1/namespaces/" + ns + "/events", event.dump());
    return r.ok() ? "" : verify::error_text(r);
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace zerodrop::watch
