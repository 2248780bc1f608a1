#include "load/input.h"

#include <fstream>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::load {
namespace {

std::string error_of(auto f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Input, ParsesStatusRanges) {
  auto ranges = parse_status_ranges("200-399, 404");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].first, 200);
  EXPECT_EQ(ranges[0].last, 399);
  EXPECT_EQ(ranges[1].first, 404);
  EXPECT_EQ(ranges[1].last, 404);
  EXPECT_NE(error_of([] { parse_status_ranges("2xx"); }).find("--ok-status"), std::string::npos);
  EXPECT_NE(error_of([] { parse_status_ranges("399-200"); }).find("ends before"),
            std::string::npos);
}

TEST(Input, ParsesHeaders) {
  auto [name, value] = parse_header("X-Token:  abc def ");
  EXPECT_EQ(name, "X-Token");
  EXPECT_EQ(value, "abc def");
  EXPECT_EQ(error_of([] { parse_header("novalue"); }), "-H: expected 'Name: value', got 'novalue'");
}

TEST(Input, ReadsTargetsFiles) {
  std::string path = ::testing::TempDir() + "/targets.txt";
  std::ofstream(path) << "# comment\nGET http://a/\n\n  POST   http://b/x \n";
  auto targets = read_targets(path);
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[1].method, "POST");
  EXPECT_EQ(targets[1].url, "http://b/x");
  std::ofstream(path) << "http://only-a-url/\n";
  EXPECT_NE(error_of([&] { read_targets(path); }).find("targets.txt:1: expected 'METHOD URL'"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_targets("/nonexistent/targets"); }).find("cannot read"),
            std::string::npos);
}

}  // namespace
}  // namespace zerodrop::load
