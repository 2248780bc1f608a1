#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zerodrop {

// Number parsing for flags and files. Each throws Error "<what>: expected …, got '<text>'".
double parse_number(std::string_view text, std::string_view what);
int64_t parse_integer(std::string_view text, std::string_view what, int64_t min, int64_t max);

// A share written as a percentage, "25%" or "12.5%", from 0% to 100%, as a fraction (0.25).
double parse_share(std::string_view text, std::string_view what);

// "25%" of `total` or an absolute "2"; percentages round up or down as Kubernetes' intstr does.
enum class Round { up, down };
int64_t parse_int_or_percent(std::string_view text, std::string_view what, int64_t total,
                             Round round);

// An address and port to listen on or dial.
struct HostPort {
  std::string host;  // without the brackets of an IPv6 literal
  uint16_t port = 0;
};

// "8081", ":8081", "127.0.0.1:8081", "[::1]:8081": the host defaults to `default_host`; with an
// empty default a host is required. Throws Error starting with `what` when malformed.
HostPort parse_host_port(std::string_view text, std::string_view what,
                         std::string_view default_host);

}  // namespace zerodrop
