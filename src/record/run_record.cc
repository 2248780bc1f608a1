#include "record/run_record.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <limits>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/enum_names.h"
#include "base/error.h"
#include "record/json_fields.h"

namespace zerodrop::record {
namespace {

using detail::goaway_from_json;
using detail::h2_error_of;
using detail::json;
using detail::read_lines;
using detail::time_of;
using detail::whole;
using detail::whole_or;

constexpr auto kFateNames =
    std::to_array<std::string_view>({"open", "refused", "reset", "closed", "idle_closed"});
static_assert(kFateNames.size() == static_cast<size_t>(BackendFate::idle_closed) + 1);

constexpr auto kH2ErrorNames = std::to_array<std::string_view>({
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
});

json optional_micros(const std::optional<Micros>& t) {
  return t ? json(t->count()) : json(nullptr);
}

std::optional<Micros> micros_or_null(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) {
    return std::nullopt;
  }
  return time_of(j, key);
}

Http2Facts h2_from_json(const json& j) {
  Http2Facts h;
  std::string proto = j.at("proto").get<std::string>();
  if (proto != "h2" && proto != "grpc") {
    throw Error(fmt::format("proto: expected h2 or grpc, got '{}'", proto));
  }
  h.proto = proto == "grpc" ? Proto::grpc : Proto::h2;
  h.conn = whole_or<uint32_t>(j, "conn", 0);
  h.stream = whole_or<uint32_t>(j, "stream", 0);
  h.attempts = whole_or<uint32_t>(j, "attempts", 1);
  if (j.contains("rst") && !j["rst"].is_null()) {
    h.rst = h2_error_of(j["rst"], "rst");
  }
  if (j.contains("goaway") && !j["goaway"].is_null()) {
    h.goaway = goaway_from_json(j["goaway"]);
  }
  if (j.contains("grpc_status") && !j["grpc_status"].is_null()) {
    h.grpc_status = whole<int>(j["grpc_status"], "grpc_status");
  }
  if (j.contains("grpc_message") && !j["grpc_message"].is_null()) {
    h.grpc_message = j["grpc_message"].get<std::string>();
  }
  if (j.contains("first_attempt")) {
    const json& f = j["first_attempt"];
    auto outcome = outcome_from_string(f.at("class").get<std::string>());
    if (!outcome) {
      throw Error(fmt::format("first_attempt: unknown class '{}'", f.at("class").dump()));
    }
    h.first_attempt = FirstAttemptRecord{*outcome, whole_or<uint32_t>(f, "conn", 0),
                                         whole_or<uint32_t>(f, "stream", 0), time_of(f, "done_us")};
  }
  return h;
}

RequestRecord request_from_json(const json& j) {
  RequestRecord r;
  r.seq = whole<uint64_t>(j.at("seq"), "seq");
  r.intended = time_of(j, "intended_us");
  r.sent = micros_or_null(j, "sent_us");
  r.first_byte = micros_or_null(j, "first_byte_us");
  r.done = time_of(j, "done_us");
  auto outcome = outcome_from_string(j.at("class").get<std::string>());
  if (!outcome) {
    throw Error(fmt::format("unknown class '{}'", j.at("class").get<std::string>()));
  }
  r.outcome = *outcome;
  r.failed = j.value("failed", r.outcome != Outcome::ok);
  r.status = whole_or<int>(j, "status", 0);
  r.connection = j.value("reused", false) ? Connection::reused : Connection::fresh;
  r.target = whole_or<uint32_t>(j, "target", 0);
  r.local_port = whole_or<uint16_t>(j, "local_port", 0);
  r.router = j.value("router", "");
  r.backend = j.value("backend", "");
  if (j.contains("backend_candidates")) {
    r.backend_candidates = j["backend_candidates"].get<std::vector<std::string>>();
  }
  r.error = j.value("error", "");
  r.router_error = j.value("router_error", "");
  r.body = j.value("body", "");
  if (j.contains("backend_fate")) {
    std::string name = j["backend_fate"].get<std::string>();
    r.backend_fate = backend_fate_from_string(name);
    if (!r.backend_fate) {
      throw Error(fmt::format("unknown backend_fate '{}'", name));
    }
    r.backend_fate_at = micros_or_null(j, "backend_fate_us");
  }
  r.bound = micros_or_null(j, "bound_us");
  r.retry_safe = j.value("retry_safe", false);
  r.attempt = whole_or<uint8_t>(j, "attempt", 1);
  r.resent = j.value("resent", false);
  if (r.attempt < 1 || r.attempt > 2) {
    throw Error(fmt::format("attempt: expected 1 or 2, got {}", int{r.attempt}));
  }
  if (j.contains("proto")) {
    r.h2 = h2_from_json(j);
  }
  return r;
}

// Counts by name ({"refused": 3}) into an array indexed like `names`; unknown names are errors.
template <size_t N>
void counts_from_json(const json& j, const char* field,
                      const std::array<std::string_view, N>& names, std::array<uint64_t, N>& out) {
  auto it = j.find(field);
  if (it == j.end()) {
    return;
  }
  for (const auto& [name, count] : it->items()) {
    auto known = std::find(names.begin(), names.end(), name);
    if (known == names.end()) {
      throw Error(fmt::format("{}: unknown name '{}'", field, name));
    }
    out[static_cast<size_t>(known - names.begin())] = whole<uint64_t>(count, field);
  }
}

TimeBucket bucket_from_json(const json& j) {
  TimeBucket b;
  b.start = time_of(j, "start_us");
  b.width = time_of(j, "width_us");
  if (b.width <= Micros{0}) {
    throw Error(fmt::format("width_us: must be more than 0, got {}", b.width.count()));
  }
  b.requests = whole<uint64_t>(j.at("requests"), "requests");
  counts_from_json(j, "outcomes", kOutcomeNames, b.outcomes);
  counts_from_json(j, "failures_by_hole", kHoleIds, b.failures_by_hole);
  // The writer leaves "ok" out: it is what the other outcomes leave of the requests.
  uint64_t failed = 0;
  for (size_t o = 1; o < kOutcomeCount; ++o) {
    failed += b.outcomes[o];
  }
  if (failed > b.requests) {
    throw Error(fmt::format("{} failed outcomes in a bucket of {} requests", failed, b.requests));
  }
  b.outcomes[0] = b.requests - failed;
  return b;
}

// The HTTP/2 fields of a record, added to `j`.
void add_h2(json& j, const Http2Facts& h) {
  j["proto"] = h.proto == Proto::grpc ? "grpc" : "h2";
  j["conn"] = h.conn;
  j["stream"] = h.stream;
  j["attempts"] = h.attempts;
  j["rst"] = h.rst ? json(h2_error_name(*h.rst)) : json(nullptr);
  if (h.goaway) {
    j["goaway"] = detail::to_json(*h.goaway);
  } else {
    j["goaway"] = nullptr;
  }
  j["grpc_status"] = h.grpc_status ? json(*h.grpc_status) : json(nullptr);
  j["grpc_message"] = h.grpc_status ? json(h.grpc_message) : json(nullptr);
  if (h.first_attempt) {
    const FirstAttemptRecord& f = *h.first_attempt;
    j["first_attempt"] = {{"class", to_string(f.outcome)},
                          {"conn", f.conn},
                          {"stream", f.stream},
                          {"done_us", f.done.count()}};
  }
}

}  // namespace

std::string h2_error_name(uint32_t code) {
  if (code < kH2ErrorNames.size()) {
    return std::string(kH2ErrorNames[code]);
  }
  return fmt::format("0x{:x}", code);
}

std::optional<uint32_t> h2_error_from_name(std::string_view name) {
  for (size_t i = 0; i < kH2ErrorNames.size(); ++i) {
    if (kH2ErrorNames[i] == name) {
      return static_cast<uint32_t>(i);
    }
  }
  uint32_t code = 0;
  if (name.size() > 2 && name.substr(0, 2) == "0x") {
    const char* end = name.data() + name.size();
    auto [ptr, ec] = std::from_chars(name.data() + 2, end, code, 16);
    if (ec == std::errc() && ptr == end) {
      return code;
    }
  }
  return std::nullopt;
}

Micros run_time(int64_t us, std::string_view field) {
  // No run of zerodrop is longer than a week (the simulator stops at 24 h of virtual time).
  constexpr int64_t kMaxRunMicros = int64_t{7} * 24 * 3600 * 1'000'000;
  if (us < -kMaxRunMicros || us > kMaxRunMicros) {
    throw Error(fmt::format("{}: {} is more than a week from the run's start", field, us));
  }
  return Micros(us);
}

std::string_view to_string(BackendFate fate) {
  return kFateNames[static_cast<size_t>(fate)];
}

bool retry_safe(Outcome outcome, Connection connection, ResponseBytes bytes, Idempotent method) {
  bool broke =
      outcome == Outcome::reset_before_response || outcome == Outcome::closed_before_response;
  return broke && connection == Connection::reused && bytes == ResponseBytes::none
         && method == Idempotent::yes;
}

std::optional<BackendFate> backend_fate_from_string(std::string_view name) {
  return enum_from_name<BackendFate>(kFateNames, name);
}

void write_ndjson(std::ostream& out, const RequestRecord& r) {
  json j = {{"seq", r.seq},
            {"intended_us", r.intended.count()},
            {"sent_us", optional_micros(r.sent)},
            {"first_byte_us", optional_micros(r.first_byte)},
            {"done_us", r.done.count()},
            {"class", to_string(r.outcome)},
            {"failed", r.failed},
            {"status", r.status},
            {"reused", r.connection == Connection::reused},
            {"target", r.target},
            {"local_port", r.local_port},
            {"backend", r.backend}};
  if (!r.router.empty()) {
    j["router"] = r.router;
  }
  if (!r.backend_candidates.empty()) {
    j["backend_candidates"] = r.backend_candidates;
  }
  if (!r.error.empty()) {
    j["error"] = r.error;
  }
  if (!r.router_error.empty()) {
    j["router_error"] = r.router_error;
  }
  if (!r.body.empty()) {
    j["body"] = r.body;
  }
  if (r.backend_fate) {
    j["backend_fate"] = to_string(*r.backend_fate);
    if (r.backend_fate_at) {
      j["backend_fate_us"] = r.backend_fate_at->count();
    }
  }
  if (r.bound) {
    j["bound_us"] = r.bound->count();
  }
  if (r.failed) {
    j["retry_safe"] = r.retry_safe;
  }
  if (r.attempt != 1) {
    j["attempt"] = r.attempt;
  }
  if (r.resent) {
    j["resent"] = true;
  }
  if (r.h2) {
    add_h2(j, *r.h2);
  }
  out << j.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
}

void write_ndjson(std::ostream& out, const TimeBucket& b) {
  json j = {{"start_us", b.start.count()}, {"width_us", b.width.count()}, {"requests", b.requests}};
  for (size_t o = 1; o < kOutcomeCount; ++o) {
    if (b.outcomes[o]) {
      j["outcomes"][std::string(kOutcomeNames[o])] = b.outcomes[o];
    }
  }
  for (size_t h = 0; h < kHoleCount; ++h) {
    if (b.failures_by_hole[h]) {
      j["failures_by_hole"][std::string(kHoleIds[h])] = b.failures_by_hole[h];
    }
  }
  out << j.dump() << '\n';
}

std::vector<TimeBucket> read_buckets(const std::string& path) {
  return read_lines(path, bucket_from_json);
}

std::vector<RequestRecord> read_requests(const std::string& path) {
  return read_lines(path, request_from_json);
}

RequestRecord read_request(const nlohmann::json& line) {
  try {
    return request_from_json(line);
  } catch (const json::exception& e) {
    throw Error(fmt::format("a request record: {}", e.what()));
  }
}

}  // namespace zerodrop::record
