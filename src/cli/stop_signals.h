#pragma once
// SIGINT and SIGTERM as a flag that an engine polls (load, verify, verify-agent): the run stops
// and still writes what it has, rather than dying with it unwritten.
#include <atomic>

namespace zerodrop::cli {

// What a second SIGINT or SIGTERM does once the first has set the flag.
enum class SecondSignal {
  kills,  // the default action: a second Ctrl-C ends a run that does not stop fast enough
  stops,  // sets the flag again: verify-agent finishes its in-flight requests whatever comes
};

// Installs the handlers and returns the flag they set. One flag per process: a process runs one
// command.
const std::atomic<bool>* catch_stop_signals(SecondSignal second);

}  // namespace zerodrop::cli
