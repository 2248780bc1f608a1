#pragma once

// zerodrop/lifecycle: graceful shutdown for C++ servers (Boost and the standard library only).
// shutdown.h is the state machine (no Asio); driver.h runs it on signals and timers;
// beast.h answers /readyz, /healthz, /metrics and sets Connection: close for Boost.Beast.
#include "zerodrop/lifecycle/beast.h"
#include "zerodrop/lifecycle/driver.h"
#include "zerodrop/lifecycle/gate.h"
#include "zerodrop/lifecycle/shutdown.h"
#include "zerodrop/lifecycle/state.h"
