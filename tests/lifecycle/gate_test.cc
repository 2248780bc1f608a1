#include "zerodrop/lifecycle/gate.h"

#include <gtest/gtest.h>

namespace zerodrop::lifecycle {
namespace {

TEST(Gate, AdmitsUntilClosed) {
  Gate gate;
  EXPECT_TRUE(gate.try_enter());
  EXPECT_TRUE(gate.try_enter());
  EXPECT_EQ(gate.size(), 2u);
  gate.close();
  EXPECT_FALSE(gate.try_enter());
  EXPECT_EQ(gate.size(), 2u);
}

TEST(Gate, LeaveReportsWhenEmpty) {
  Gate gate;
  ASSERT_TRUE(gate.try_enter());
  ASSERT_TRUE(gate.try_enter());
  EXPECT_FALSE(gate.leave());
  EXPECT_TRUE(gate.leave());
  EXPECT_EQ(gate.size(), 0u);
}

}  // namespace
}  // namespace zerodrop::lifecycle
