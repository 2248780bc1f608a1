#include "base/text.h"

#include <gtest/gtest.h>

namespace zerodrop {
namespace {

TEST(Text, SuggestsCloseCommand) {
  std::string_view names[] = {"lab", "load", "audit", "sim"};
  EXPECT_EQ(closest_match("laod", names), "load");
  EXPECT_EQ(closest_match("audt", names), "audit");
  EXPECT_EQ(closest_match("frobnicate", names), "");
}

TEST(Text, SplitKeepsEmptyFieldsAndTrimTrims) {
  auto f = split("a,,b", ',');
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(trim("  x y \n"), "x y");
  EXPECT_EQ(trim("   "), "");
}

}  // namespace
}  // namespace zerodrop
