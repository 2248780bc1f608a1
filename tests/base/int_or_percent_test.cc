#include "base/int_or_percent.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop {
namespace {

TEST(IntOrPercent, ParsesCountsAndPercentages) {
  EXPECT_EQ(IntOrPercent::parse("2", "x"), IntOrPercent::count(2));
  EXPECT_EQ(IntOrPercent::parse("25%", "x"), IntOrPercent::percent(25));
  EXPECT_NE(IntOrPercent::parse("25", "x"), IntOrPercent::percent(25));
  EXPECT_THROW(IntOrPercent::parse("150%", "x"), Error);
  EXPECT_THROW(IntOrPercent::parse("-1", "x"), Error);
  EXPECT_THROW(IntOrPercent::parse("%", "x"), Error);
  EXPECT_THROW(IntOrPercent::parse("", "x"), Error);
}

TEST(IntOrPercent, ResolvesWithKubernetesRounding) {
  struct Case {
    const char* text;
    int64_t total;
    Round round;
    int64_t want;
  };
  const Case cases[] = {
      {"25%", 3, Round::up, 1},   {"25%", 3, Round::down, 0}, {"50%", 10, Round::down, 5},
      {"2", 10, Round::down, 2},  {"0%", 7, Round::up, 0},    {"100%", 7, Round::down, 7},
      {"33%", 10, Round::up, 4},  {"33%", 10, Round::down, 3},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IntOrPercent::parse(c.text, "x").resolve(c.total, c.round), c.want) << c.text;
  }
}

TEST(IntOrPercent, PrintsWhatItParses) {
  for (const char* text : {"0", "3", "25%", "100%"}) {
    EXPECT_EQ(IntOrPercent::parse(text, "x").to_string(), text);
  }
}

}  // namespace
}  // namespace zerodrop
