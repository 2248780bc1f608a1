// kube::sidecar_exit: when a mesh's proxy stops forwarding, plain (stopped with the app) or
// native (stopped after it), with Istio's drain settings (docs/sim.md, "Sidecar meshes").
#include "kube/sidecar.h"

#include <gtest/gtest.h>

namespace zerodrop::kube {
namespace {

using std::chrono::seconds;

TEST(SidecarExit, PlainStopsWithTheAppNativeAfterIt) {
  SidecarProxy plain{SidecarOrder::plain};
  // Its own stop at the pod's, terminationDrainDuration 5 s later it is gone, whatever the app.
  EXPECT_EQ(kube::sidecar_exit(plain, seconds(20), seconds(30)), seconds(5));
  // Killed at the grace period when the drain outlasts it (kill_delay: at least 2 s).
  plain.termination_drain = seconds(60);
  EXPECT_EQ(kube::sidecar_exit(plain, seconds(20), seconds(30)), seconds(30));
  EXPECT_EQ(kube::sidecar_exit(plain, seconds(1), seconds(0)), seconds(2));
  // EXIT_ON_ZERO_ACTIVE_CONNECTIONS: MINIMUM_DRAIN_DURATION, and never before the app is gone.
  SidecarProxy zero{SidecarOrder::plain, seconds(5), true, seconds(5)};
  EXPECT_EQ(kube::sidecar_exit(zero, seconds(20), seconds(30)), seconds(20));
  EXPECT_EQ(kube::sidecar_exit(zero, seconds(2), seconds(30)), seconds(5));
  // Native: its stop when the app exited, the drain after, killed when the grace period ends.
  SidecarProxy native{SidecarOrder::native};
  EXPECT_EQ(kube::sidecar_exit(native, seconds(20), seconds(30)), seconds(25));
  EXPECT_EQ(kube::sidecar_exit(native, seconds(28), seconds(30)), seconds(30));
  EXPECT_EQ(kube::sidecar_exit(SidecarProxy{}, seconds(1), seconds(30)), Duration::max());
}

}  // namespace
}  // namespace zerodrop::kube
