#pragma once

// Internal to src/record: reading and writing the fields the NDJSON files share.

#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "record/run_record.h"

namespace zerodrop::record::detail {

using nlohmann::json;

template <typename Parse>
auto read_lines(const std::string& path, Parse parse) {
  std::ifstream in(path);
  if (!in) {
    throw Error(fmt::format("cannot read {}", path));
  }
  std::vector<decltype(parse(json{}))> items;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) {
      continue;
    }
    try {
      items.push_back(parse(json::parse(line)));
    } catch (const json::exception& e) {
      throw Error(fmt::format("{}:{}: {}", path, number, e.what()));
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", path, number, e.what()));
    }
  }
  return items;
}

// A whole number in T's range. JSON floats (1e308), numbers beyond 64 bits and other types are
// errors: converting them would be undefined behaviour or a silent wrap.
template <typename T>
T whole(const json& v, std::string_view field) {
  using limits = std::numeric_limits<T>;
  bool fits = false;
  if (v.is_number_unsigned()) {
    fits = v.get<uint64_t>() <= static_cast<uint64_t>(limits::max());
  } else if (v.is_number_integer()) {
    int64_t x = v.get<int64_t>();
    fits = x < 0 ? x >= static_cast<int64_t>(limits::min())
                 : static_cast<uint64_t>(x) <= static_cast<uint64_t>(limits::max());
  }
  if (!fits) {
    throw Error(fmt::format("{}: expected a whole number from {} to {}, got {}", field,
                            limits::min(), limits::max(), v.dump()));
  }
  return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                : static_cast<T>(v.get<int64_t>());
}

// whole<T>(j[key]), or `fallback` when the key is missing.
template <typename T>
T whole_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() ? fallback : whole<T>(*it, key);
}

inline Micros time_of(const json& j, const char* key) {
  return run_time(whole<int64_t>(j.at(key), key), key);
}

// An HTTP/2 error code by name; Error naming `field` on an unknown one.
uint32_t h2_error_of(const json& v, std::string_view field);

GoawayRecord goaway_from_json(const json& g);
json to_json(const GoawayRecord& g);

}  // namespace zerodrop::record::detail
