#include "base/int_or_percent.h"

namespace zerodrop {

IntOrPercent IntOrPercent::parse(std::string_view text, std::string_view what) {
  if (!text.empty() && text.back() == '%') {
    return percent(parse_integer(text.substr(0, text.size() - 1), what, 0, 100));
  }
  return count(parse_integer(text, what, 0, 1'000'000));
}

int64_t IntOrPercent::resolve(int64_t total, Round round) const {
  if (unit_ == Unit::count) {
    return value_;
  }
  int64_t scaled = value_ * total;
  return round == Round::up ? (scaled + 99) / 100 : scaled / 100;
}

std::string IntOrPercent::to_string() const {
  return unit_ == Unit::count ? std::to_string(value_) : std::to_string(value_) + "%";
}

}  // namespace zerodrop
