#include "record/scenario.h"

#include <algorithm>
#include <cassert>
#include <iterator>

#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"

namespace zerodrop::record {
namespace {

constexpr const char* kReplicas = "replicas";
constexpr const char* kPreStop = "prestop";
constexpr const char* kGrace = "grace";
constexpr const char* kReadiness = "readiness";
constexpr const char* kMaxSurge = "max_surge";
constexpr const char* kMaxUnavailable = "max_unavailable";
constexpr const char* kK8sVersion = "k8s_version";
constexpr const char* kPort = "port";
constexpr const char* kContainer = "container";

// The most replicas a run folder may name: above the sim's 100,000 and the lab's 1,000, so that
// any engine's run reads back, yet a corrupt value is refused rather than believed.
constexpr int64_t kMaxReplicas = 1 << 20;

constexpr std::string_view kTypedKeys[] = {kReplicas,   kPreStop,  kGrace,
                                           kReadiness,  kMaxSurge, kMaxUnavailable,
                                           kK8sVersion, kPort,     kContainer};

bool is_typed_key(std::string_view key) {
  return std::find(std::begin(kTypedKeys), std::end(kTypedKeys), key) != std::end(kTypedKeys);
}

constexpr std::string_view kProbeNames[] = {"none", "http", "tcp", "exec", "grpc"};

// `text` split at its first colon: "http:/readyz" -> {"http", "/readyz"}; "tcp" -> {"tcp", ""}.
std::pair<std::string_view, std::optional<std::string_view>> split_kind(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return {text, std::nullopt};
  }
  return {text.substr(0, colon), text.substr(colon + 1)};
}

std::string what_of(const char* key) {
  return fmt::format("scenario.{}", key);
}

template <typename T, typename Parse>
void read_key(const std::map<std::string, std::string>& strings, const char* key,
              std::optional<T>& field, Parse parse) {
  auto it = strings.find(key);
  if (it != strings.end()) {
    field = parse(it->second, what_of(key));
  }
}

}  // namespace

PreStop parse_prestop(std::string_view text, std::string_view what) {
  auto [kind, rest] = split_kind(text);
  if (kind == "none" && !rest) {
    return {std::string(text), Duration{0}};
  }
  if (kind == "sleep" && rest) {
    return {std::string(text), parse_duration(*rest, what)};
  }
  if ((kind == "exec" || kind == "http") && rest) {
    return {std::string(text), std::nullopt};
  }
  throw Error(fmt::format("{}: expected none, sleep:DURATION, exec:COMMAND or http:PATH, got '{}'",
                          what, text));
}

std::string Readiness::text() const {
  std::string_view name = kProbeNames[static_cast<size_t>(kind)];
  bool bare = kind == ProbeKind::none
              || ((kind == ProbeKind::tcp || kind == ProbeKind::grpc) && target.empty());
  return bare ? std::string(name) : fmt::format("{}:{}", name, target);
}

Readiness parse_readiness(std::string_view text, std::string_view what) {
  auto [kind, rest] = split_kind(text);
  for (size_t i = 0; i < std::size(kProbeNames); ++i) {
    auto probe = static_cast<ProbeKind>(i);
    bool needs_target = probe == ProbeKind::http || probe == ProbeKind::exec;
    bool takes_target = needs_target || probe == ProbeKind::tcp || probe == ProbeKind::grpc;
    if (kind == kProbeNames[i] && (rest ? takes_target : !needs_target)) {
      return {probe, std::string(rest.value_or(""))};
    }
  }
  throw Error(fmt::format(
      "{}: expected none, tcp, http:PATH, exec:COMMAND or grpc[:SERVICE], got '{}'", what, text));
}

std::map<std::string, std::string> to_strings(const Scenario& s) {
  std::map<std::string, std::string> out = s.extra;
  // An engine that put a typed setting among the extras would have its text silently replaced
  // (or silently ignored by the diagnosis): a bug, caught here in debug builds.
  assert(
      std::none_of(out.begin(), out.end(), [](const auto& kv) { return is_typed_key(kv.first); }));
  auto put = [&out](const char* key, const auto& field, auto format) {
    if (field) {
      out[key] = format(*field);
    }
  };
  put(kReplicas, s.replicas, [](int n) { return std::to_string(n); });
  put(kPreStop, s.prestop, [](const PreStop& p) { return p.text; });
  put(kGrace, s.grace, format_duration);
  put(kReadiness, s.readiness, [](const Readiness& r) { return r.text(); });
  put(kMaxSurge, s.max_surge, [](const IntOrPercent& v) { return v.to_string(); });
  put(kMaxUnavailable, s.max_unavailable, [](const IntOrPercent& v) { return v.to_string(); });
  put(kK8sVersion, s.k8s_version, [](const std::string& v) { return v; });
  put(kPort, s.port, [](uint16_t p) { return std::to_string(p); });
  put(kContainer, s.container, [](const std::string& v) { return v; });
  return out;
}

Scenario scenario_from_strings(const std::map<std::string, std::string>& strings) {
  Scenario s;
  auto text = [](std::string_view v, const std::string&) {
    return std::string(v);
  };
  read_key(strings, kReplicas, s.replicas, [](std::string_view v, const std::string& what) {
    return static_cast<int>(parse_integer(v, what, 0, kMaxReplicas));
  });
  read_key(strings, kPreStop, s.prestop, parse_prestop);
  read_key(strings, kGrace, s.grace, parse_duration);
  read_key(strings, kReadiness, s.readiness, parse_readiness);
  read_key(strings, kMaxSurge, s.max_surge, IntOrPercent::parse);
  read_key(strings, kMaxUnavailable, s.max_unavailable, IntOrPercent::parse);
  read_key(strings, kK8sVersion, s.k8s_version, text);
  read_key(strings, kPort, s.port, [](std::string_view v, const std::string& what) {
    return static_cast<uint16_t>(parse_integer(v, what, 0, 65535));
  });
  read_key(strings, kContainer, s.container, text);
  for (const auto& [key, value] : strings) {
    if (!is_typed_key(key)) {
      s.extra.emplace(key, value);
    }
  }
  return s;
}

}  // namespace zerodrop::record
