#include "base/delay_distribution.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop {
namespace {

using namespace std::chrono_literals;
using Kind = DelayDistribution::Kind;

struct ParseCase {
  const char* text;
  Kind kind;
  Duration a, b;
  const char* shown;  // to_string()
};

TEST(DelayDistribution, ParsesTheThreeForms) {
  const ParseCase cases[] = {
      {"2s", Kind::fixed, 2s, 0s, "2s"},
      {" 250ms ", Kind::fixed, 250ms, 0s, "250ms"},
      {"0", Kind::fixed, 0s, 0s, "0s"},
      {"1s..4s", Kind::uniform, 1s, 4s, "1s..4s"},
      {"2s..2s", Kind::uniform, 2s, 2s, "2s..2s"},
      {"p50=1s,p99=6s", Kind::lognormal, 1s, 6s, "p50=1s,p99=6s"},
      {"p50=20ms, p99=200ms", Kind::lognormal, 20ms, 200ms, "p50=20ms,p99=200ms"},
  };
  for (const ParseCase& c : cases) {
    DelayDistribution d = parse_delay_distribution(c.text, "--x");
    EXPECT_EQ(d.kind, c.kind) << c.text;
    EXPECT_EQ(d.a, c.a) << c.text;
    EXPECT_EQ(d.b, c.b) << c.text;
    EXPECT_EQ(d.to_string(), c.shown) << c.text;
  }
}

TEST(DelayDistribution, RejectsBadTextNamingTheCulprit) {
  const std::pair<const char*, const char*> cases[] = {
      {"soon", "--propagation: expected 2s, 1s..4s or p50=1s,p99=6s, got 'soon'"},
      {"4s..1s", "--propagation: range '4s..1s' ends before it starts"},
      {"p50=1s", "--propagation: expected 2s, 1s..4s or p50=1s,p99=6s, got 'p50=1s'"},
      {"p50=5s,p99=1s", "--propagation: need 0 < p50 <= p99, got 'p50=5s,p99=1s'"},
      {"p50=0s,p99=1s", "--propagation: need 0 < p50 <= p99, got 'p50=0s,p99=1s'"},
  };
  for (const auto& [text, message] : cases) {
    try {
      parse_delay_distribution(text, "--propagation");
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), message);
    }
  }
  EXPECT_THROW(parse_delay_distribution("x..4s", "--propagation"), Error);
}

TEST(DelayDistribution, UniformStaysInItsBounds) {
  DelayDistribution p = parse_delay_distribution("1s..4s", "--propagation");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    Duration d = p.sample(rng);
    EXPECT_GE(d, 1s);
    EXPECT_LE(d, 4s);
  }
}

TEST(DelayDistribution, LognormalMatchesItsQuantiles) {
  DelayDistribution p = parse_delay_distribution("p50=1s,p99=6s", "--propagation");
  std::mt19937_64 rng(42);
  std::vector<double> s;
  for (int i = 0; i < 20000; ++i) {
    s.push_back(to_seconds(p.sample(rng)));
  }
  std::sort(s.begin(), s.end());
  EXPECT_NEAR(s[10000], 1.0, 0.05);
  EXPECT_NEAR(s[19800], 6.0, 0.6);
}

TEST(DelayDistribution, SameSeedSameDelays) {
  DelayDistribution p = parse_delay_distribution("1s..4s", "--propagation");
  std::mt19937_64 a(3), b(3);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(p.sample(a), p.sample(b));
  }
  EXPECT_EQ(DelayDistribution::fixed(2s).sample(a), 2s);
}

}  // namespace
}  // namespace zerodrop
