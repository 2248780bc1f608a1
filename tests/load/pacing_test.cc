// The open-loop pacer keeps its schedule against a healthy server (the pacing test).
#include <gtest/gtest.h>

#include "load/load.h"
#include "testing/misbehaving_server.h"

namespace zerodrop::load {
namespace {

using namespace std::chrono_literals;

TEST(Pacing, ThousandPerSecondForThreeSeconds) {
  testing::MisbehavingServer server({});
  Options o;
  o.targets = {{"GET", server.url()}};
  o.rate = 1000;
  o.duration = 3s;
  o.connections = 64;
  Summary s = run(o, {});
  EXPECT_NEAR(static_cast<double>(s.requests), 3000.0, 30.0) << "within 1 % of 3,000";
  EXPECT_EQ(s.late, 0u);
  EXPECT_EQ(s.unsent, 0u);
  EXPECT_EQ(s.failed, 0u);
}

}  // namespace
}  // namespace zerodrop::load
