#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kube/pre_stop.h"
#include "kube/workload.h"

namespace zerodrop::audit {

// How long a hook delays SIGTERM is Kubernetes' rule, shared with lab and sim.
using kube::pre_stop_delay;
using kube::PreStopDelay;

// The delay in seconds, for the rules' arithmetic; nullopt when unknown.
std::optional<double> delay_seconds(const PreStopDelay& delay);

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
