#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record/run_record.h"

namespace zerodrop::diagnose {

class Facts;

// What one pod's termination put to the test. A pass means little unless traffic reached the
// pod where a hole would have shown: new connections after its stop signal while routers still
// sent it some (the deregistration race), requests in flight at the signal or sent until its
// exit (no-drain). Counted from the request records joined to the pod (at l7 the client's
// connections: the router's upstream pool is its own).
struct PodCoverage {
  std::string pod;
  record::Micros signal{0};  // the stop signal
  record::Micros exit{0};    // the main process's exit
  // When the last router applied its termination: no new connection was routed to it after.
  std::optional<record::Micros> deregistered;
  uint64_t in_flight_at_signal = 0;   // sent before the signal, not finished at it
  uint64_t stop_requests = 0;         // sent to it in the stop window (signal → exit)
  uint64_t stop_fresh = 0;            // … of them on a new connection
  uint64_t race_fresh = 0;            // new connections after the signal, before deregistration
  uint64_t after_deregistration = 0;  // sent to it from its deregistration to its exit
  // Rates to this pod while it served (from its first request to its deletion), per second.
  double fresh_rate = 0;
  double request_rate = 0;

  record::Micros stop_window() const { return exit - signal; }

  // How long routers kept sending it new connections after its stop signal (0: none did).
  record::Micros race_window() const;

  // exp(-fresh_rate × race window): the chance that no new connection arrives in a window this
  // long at this rate, i.e. that a pod refusing them after its signal shows no failure.
  double race_miss() const;
};

// The coverage of every termination in a run (pods that got a stop signal and exited).
struct Coverage {
  std::vector<PodCoverage> pods;  // in order of the signal
  uint64_t in_flight_at_signals = 0;
  uint64_t race_fresh = 0;
  record::Micros race_windows{0};  // all pods' race windows together
  double race_miss = 1;  // no race window of any pod got a new connection: exp(-Σ rate × window)
  // One sentence: what the terminations covered, and how likely a hole went unseen.
  std::string summary;
};

// Computes the coverage of `run` from its events (`facts`) and request records.
Coverage coverage_of(const record::RunRecord& run, const Facts& facts);

}  // namespace zerodrop::diagnose
