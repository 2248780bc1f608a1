#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/latency_histogram.h"
#include "load/load.h"
#include "record/outcome.h"

namespace zerodrop::load {

// Counts of one worker (or one interval); merged into a Summary at the end. Fixed size: memory
// does not grow with the number of requests.
struct Tally {
  uint64_t sent = 0;      // requests written to a connection (or whose connect was attempted)
  uint64_t requests = 0;  // completed, every outcome
  uint64_t ok = 0;
  uint64_t failed = 0;
  uint64_t late = 0;
  uint64_t unsent = 0;
  uint64_t connections_opened = 0;
  uint64_t retry_safe = 0;  // failures a client may resend unchanged
  uint64_t resent = 0;      // --client-retry: retry-safe failures resent
  uint64_t resent_ok = 0;   // … whose resend succeeded
  std::array<uint64_t, record::kOutcomeCount> outcomes{};
  std::array<std::string, record::kOutcomeCount> first_error{};  // set once per class
  LatencyHistogram latency;  // from the intended send time, requests that got a response
  LatencyHistogram service;  // from the actual send, requests that got a response
  Http2Counts h2;

  // Counts one finished request.
  void add(record::Outcome outcome, bool failed, bool responded, std::chrono::nanoseconds latency,
           std::chrono::nanoseconds service);
  // Keeps `error` as the class's example if it has none yet (allocates once per class at most).
  void note_error(record::Outcome outcome, std::string_view error);
  void merge(const Tally& other);
};

// The Summary of a tally over `elapsed_s` seconds of wall time, of which `sending_s` sent.
Summary summarize(const Tally& tally, double elapsed_s, double sending_s);

}  // namespace zerodrop::load
