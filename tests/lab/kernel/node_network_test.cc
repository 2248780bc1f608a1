#include "lab/kernel/node_network.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

// Two labs side by side: the second passes over the range the first holds, and gets it once the
// first has let go (its process ended: here, its socket closed).
TEST(LoopbackPrefix, ARangeIsHeldUntilItsHolderLetsGo) {
  LoopbackClaim first = claim_loopback_prefix(137);
  ASSERT_GE(first.b, 20);
  ASSERT_LE(first.b, 219);
  LoopbackClaim second = claim_loopback_prefix(first.b - 20);
  EXPECT_NE(second.b, first.b);
  ::close(first.fd);
  LoopbackClaim again = claim_loopback_prefix(first.b - 20);
  EXPECT_EQ(again.b, first.b);
  ::close(second.fd);
  ::close(again.fd);
}

// The search wraps around from the last range to the first.
TEST(LoopbackPrefix, TheSearchWrapsAround) {
  LoopbackClaim last = claim_loopback_prefix(199);
  LoopbackClaim next = claim_loopback_prefix(last.b - 20);
  EXPECT_GE(next.b, 20);
  EXPECT_LE(next.b, 219);
  EXPECT_NE(next.b, last.b);
  ::close(last.fd);
  ::close(next.fd);
}

}  // namespace
}  // namespace zerodrop::lab
