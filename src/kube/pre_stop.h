#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/duration.h"
#include "kube/workload.h"

namespace zerodrop::kube {

// How long a preStop hook delays the stop signal, as far as the manifest tells.
struct PreStopDelay {
  std::optional<Duration> delay;  // nullopt: the hook runs something whose duration is unknown
  std::string how;                // "native sleep 5s", "exec sleep 5", "exec /wait-shutdown"
};

// Native `sleep`, `exec: [sleep, N]`, `[zerodrop, sleep, N]` and a shell script's first
// `sleep N` (`sh -c "sleep 5s"`, `sleep 5 && nginx -s quit`); GNU sleep's units s, m, h, d.
// httpGet, tcpSocket and any other program: unknown. Pure.
PreStopDelay pre_stop_delay(const Handler& hook);

// The last component of a program path: "sh" for "/bin/sh".
std::string_view program_name(std::string_view path);

// Whether `program` is a POSIX shell (sh, bash, ash, dash, zsh), by its name.
bool is_shell(std::string_view program);

}  // namespace zerodrop::kube
