#include "lab/propagation.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

TEST(Propagation, ParsesTheThreeForms) {
  EXPECT_EQ(parse_propagation("2s", "--propagation").a, 2s);
  Propagation uniform = parse_propagation("1s..4s", "--propagation");
  EXPECT_EQ(uniform.kind, Propagation::Kind::uniform);
  EXPECT_EQ(uniform.b, 4s);
  Propagation lognormal = parse_propagation("p50=1s,p99=6s", "--propagation");
  EXPECT_EQ(lognormal.kind, Propagation::Kind::lognormal);
  EXPECT_EQ(lognormal.describe(), "p50=1s,p99=6s");
}

TEST(Propagation, RejectsBadTextNamingTheFlag) {
  try {
    parse_propagation("soon", "--propagation");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--propagation: expected 2s, 1s..4s or p50=1s,p99=6s, got 'soon'");
  }
  EXPECT_THROW(parse_propagation("4s..1s", "--propagation"), Error);
  EXPECT_THROW(parse_propagation("p50=1s", "--propagation"), Error);
}

TEST(Propagation, UniformStaysInItsBounds) {
  Propagation p = parse_propagation("1s..4s", "--propagation");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    Duration d = p.sample(rng);
    EXPECT_GE(d, 1s);
    EXPECT_LE(d, 4s);
  }
}

TEST(Propagation, LognormalMatchesItsQuantiles) {
  Propagation p = parse_propagation("p50=1s,p99=6s", "--propagation");
  std::mt19937_64 rng(42);
  std::vector<double> s;
  for (int i = 0; i < 20000; ++i) {
    s.push_back(to_seconds(p.sample(rng)));
  }
  std::sort(s.begin(), s.end());
  EXPECT_NEAR(s[10000], 1.0, 0.05);
  EXPECT_NEAR(s[19800], 6.0, 0.6);
}

TEST(Propagation, SameSeedSameDelays) {
  Propagation p = parse_propagation("1s..4s", "--propagation");
  std::mt19937_64 a(3), b(3);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(p.sample(a), p.sample(b));
  }
}

}  // namespace
}  // namespace zerodrop::lab
