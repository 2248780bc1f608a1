#include "base/parse.h"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "base/error.h"
#include "base/int_or_percent.h"

namespace zerodrop {

double parse_number(std::string_view text, std::string_view what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()
      || !std::isfinite(value)) {
    throw Error(fmt::format("{}: expected a number, got '{}'", what, text));
  }
  return value;
}

int64_t parse_integer(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw Error(fmt::format("{}: expected a whole number, got '{}'", what, text));
  }
  if (value < min || value > max) {
    throw Error(fmt::format("{}: expected a number from {} to {}, got '{}'", what, min, max, text));
  }
  return value;
}

double parse_share(std::string_view text, std::string_view what) {
  double value = -1;
  if (!text.empty() && text.back() == '%') {
    std::string_view digits = text.substr(0, text.size() - 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    value =
        ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() ? value : -1;
  }
  if (!(value >= 0 && value <= 100)) {
    throw Error(fmt::format("{}: expected a percentage from 0% to 100%, got '{}'", what, text));
  }
  return value / 100;
}

int64_t parse_int_or_percent(std::string_view text, std::string_view what, int64_t total,
                             Round round) {
  return IntOrPercent::parse(text, what).resolve(total, round);
}

HostPort parse_host_port(std::string_view text, std::string_view what,
                         std::string_view default_host) {
  std::string_view host = default_host;
  std::string_view port = text;
  if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    port = text.substr(colon + 1);
    if (colon > 0) {
      host = text.substr(0, colon);
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
  }
  if (host.empty()) {
    throw Error(fmt::format("{}: expected HOST:PORT, got '{}'", what, text));
  }
  return HostPort{std::string(host), static_cast<uint16_t>(parse_integer(port, what, 0, 65535))};
}

}  // namespace zerodrop
