#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kube/workload.h"

namespace zerodrop::audit {

// How long a preStop hook delays SIGTERM, as far as the manifest tells.
struct PreStopDelay {
  std::optional<double> seconds;  // nullopt: the hook runs something whose duration is unknown
  std::string how;                // "native sleep 5s", "exec sleep 5", "exec /wait-shutdown"
};

PreStopDelay pre_stop_delay(const kube::Handler& hook);

// Why `image` is known to ship no shell and no sleep (distroless, chiseled, chainguard), or
// nullopt when nothing in its name says so (unknown images are not flagged).
std::optional<std::string> shell_less_image(std::string_view image);

// The program an exec hook needs from the image: "/bin/sh" for a shell (`sh -c "sleep 5"`),
// "sleep" for `sleep 5`; nullopt for anything else (the app's own binary is assumed present).
std::optional<std::string> needed_program(const kube::Handler& hook);

// True when the container runs `zerodrop run` as its entrypoint: a drain-aware PID 1 that keeps
// serving through the propagation delay, so no preStop is needed.
bool runs_zerodrop(const kube::Container& container);

}  // namespace zerodrop::audit
