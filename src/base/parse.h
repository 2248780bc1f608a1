#pragma once

#include <cstdint>
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

}  // namespace zerodrop
