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

// Only A-Z fold: '^' (0x5E) and '~' (0x7E), both token characters in a header name, differ in
// bit 0x20 alone and must stay different, as must bytes above 0x7F.
TEST(Text, FoldsOnlyAsciiLetters) {
  EXPECT_EQ(ascii_lower("X-Pod-Name"), "x-pod-name");
  EXPECT_EQ(ascii_lower("HTTPS"), "https");
  EXPECT_EQ(ascii_lower("a^[@\xC4"), "a^[@\xC4");
  EXPECT_TRUE(equals_ignore_case("Content-Length", "content-LENGTH"));
  EXPECT_FALSE(equals_ignore_case("x^", "x~"));
  EXPECT_FALSE(equals_ignore_case("@", "`"));
  EXPECT_FALSE(equals_ignore_case("\xC4", "\xE4"));
  EXPECT_FALSE(equals_ignore_case("host", "hosts"));
  EXPECT_TRUE(equals_ignore_case("", ""));
}

}  // namespace
}  // namespace zerodrop
