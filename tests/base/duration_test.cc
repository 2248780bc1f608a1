#include "base/duration.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop {
namespace {

using namespace std::chrono_literals;

TEST(Duration, ParsesUnitsAndFractions) {
  EXPECT_EQ(parse_duration("1.5s", "x"), 1500ms);
  EXPECT_EQ(parse_duration("300ms", "x"), 300ms);
  EXPECT_EQ(parse_duration("250us", "x"), 250us);
  EXPECT_EQ(parse_duration("2m", "x"), 120s);
  EXPECT_EQ(parse_duration("1h", "x"), 3600s);
  EXPECT_EQ(parse_duration("1m30s", "x"), 90s);
  EXPECT_EQ(parse_duration("10", "x"), 10s);
  EXPECT_EQ(parse_duration("0", "x"), 0s);
}

TEST(Duration, RejectsGarbageNamingTheFlag) {
  for (const char* bad : {"", "x", "-1s", "1.5q", "s", "1m30", "+3s", "nan", "inf"}) {
    try {
      parse_duration(bad, "--duration");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--duration"), std::string::npos) << e.what();
    }
  }
}

TEST(Duration, FormatsRoundTrip) {
  for (const char* text : {"1.5s", "300ms", "2s", "250us", "0s"}) {
    EXPECT_EQ(format_duration(parse_duration(text, "x")), text);
  }
}

}  // namespace
}  // namespace zerodrop
