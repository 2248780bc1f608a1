#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/coverage.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// Turns a run record into a diagnosis: the hole behind every failed request, one summary with
// evidence per hole, and the settings that close it, computed from what the record measured.
//
// The advice uses the typed settings of RunRecord::scenario: replicas, preStop delay, grace,
// readiness probe, port and maxUnavailable. An absent one makes the advice less specific, never
// the attribution different.

struct Options {
  std::string k8s_version =
      "1.30";  // "1.29" or older: preStop as exec, with the distroless warning
  std::chrono::milliseconds margin{
      1000};                      // added to measured propagation and drain, then rounded up
  std::string container = "app";  // container name in the manifest snippets
};

// What the backend pod was doing when a request was sent (or, if never sent, intended).
enum class BackendState : uint8_t {
  unknown,       // no backend known, or no event for it
  starting,      // created, its readiness probe had not passed
  warming,       // Ready by its probe, but had not yet answered any request successfully
  serving,       // Ready, not terminating
  prestop,       // deletion started, stop signal not yet sent (the preStop hook runs here)
  after_signal,  // the stop signal was sent, the process had not exited
  exited,        // the process had exited on its own
  killed,        // SIGKILL was sent (grace period over, or liveness)
};

std::string_view to_string(BackendState state);

// The diagnosis of one failed request.
struct RequestDiagnosis {
  size_t index = 0;  // into RunRecord::requests
  record::Hole hole = record::Hole::unexplained;
  BackendState backend_state = BackendState::unknown;
  // Its router had applied the backend's termination when it chose the backend (l4, a new
  // connection: when it bound it, RequestRecord::bound; otherwise when the request was sent).
  bool router_applied = false;
  std::string reason;  // one line: why this hole (for unexplained: why no rule matched)
};

// A ready-to-apply fix for one hole, with the numbers computed from the run.
struct Fix {
  std::string summary;             // "preStop sleep 3 s, terminationGracePeriodSeconds 9"
  std::string why;                 // the arithmetic: "longest propagation 1.62 s + margin 1 s, …"
  std::string snippet;             // manifest YAML, ready to paste (may be empty)
  std::vector<std::string> steps;  // app changes, in the order to make them (may be empty)
  std::string warning;             // e.g. distroless images have no `sleep` (may be empty)
};

// Every failure attributed to one hole.
struct HoleSummary {
  record::Hole hole = record::Hole::unexplained;
  uint64_t requests = 0;
  record::Micros first{0};           // earliest send time of its requests
  record::Micros last{0};            // latest send time
  std::vector<std::string> pods;     // sorted, unique
  std::vector<std::string> routers;  // sorted, unique
  std::string evidence;              // one sentence with the measured numbers
  Fix fix;
};

// When each router applied one pod's termination, measured from its deletion.
struct PropagationSample {
  std::string pod;
  std::string router;
  record::Micros deletion{0};
  record::Micros applied{0};
  // Known only to an interval (verify, from traffic): applied in [applied_min, applied].
  std::optional<record::Micros> applied_min;

  record::Micros delay() const { return applied - deletion; }
};

struct Propagation {
  std::vector<PropagationSample> samples;  // in the order of deletion, then router
  record::Micros max{0};
  record::Micros p50{0};
};

// The exit of one process of a pod other than its main one (a worker, a child).
struct ProcessExit {
  record::Micros t{0};
  std::string process;  // "pid 1234 (python3)"
  std::string status;   // "exit code 0", "killed by SIGTERM"
};

// One pod's life, from its events. Absent moments never happened in the record.
struct PodLife {
  std::string name;
  std::optional<record::Micros> created, ready, first_success, deletion, prestop_started,
      prestop_finished, signal, kill, exited;
  std::optional<int> stop_signal;  // the signal number sent at `signal` (15 = TERM)
  std::optional<int> exit_code;    // when it exited normally
  std::optional<int> exit_signal;  // when a signal ended it
  std::vector<record::Micros> liveness_restarts;
  bool prestop_failed = false;
  std::string prestop_error;  // the failed hook's why ("exit code 127: …")
  // The engine's SIGKILL of a pod still running when the run ended (record::kEndOfRunKill): not a
  // grace kill, so never in `kill`, and its exit counts as an exit, not a kill.
  std::optional<record::Micros> end_of_run_kill;
  std::string signal_ignored;  // why the stop signal did nothing (PID 1 without a handler), if so
  std::string version;         // "A" or "B" when the run rolled one version to another
  std::vector<ProcessExit> process_exits;  // in time order
  // HTTP/2 client connections to it: the first GOAWAY one of them received, how many received
  // one, and those it closed (EOF or reset) without any GOAWAY, with the streams open on them.
  std::optional<record::Micros> first_goaway;
  std::vector<uint32_t> goaway_connections;  // their numbers (records' `conn`), each once
  uint32_t closed_without_goaway = 0;
  uint32_t streams_cut = 0;
};

// A pod its stop signal did not stop: it was SIGKILLed at the end of the grace period.
struct GraceKill {
  std::string pod;
  int stop_signal = 15;
  record::Micros signal{0}, kill{0};
  std::string ignored;        // why the signal did nothing, when the record says (else empty)
  uint64_t served_after = 0;  // requests sent after the stop signal and answered
  uint64_t cut = 0;           // requests in flight that the SIGKILL cut (grace-overrun)
  record::Micros waited{0};   // from the deletion to the exit: what kubelet waited for it
};

// The load summary, computed from the request records (or the sim's buckets).
struct Totals {
  uint64_t requests = 0;
  uint64_t ok = 0;
  uint64_t failed = 0;
  std::vector<std::pair<std::string, uint64_t>> by_class;  // failed classes, most frequent first
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;   // latency from the intended send time
  // Whether the percentiles describe every request: not when some came only as counts (the sim's
  // buckets, verify's bucketed successes), whose latencies no record holds.
  bool latency_recorded = false;
  // Failures a client may resend unchanged (record::retry_safe), and when the load resent them
  // (--client-retry) how many it resent. `requests` and `failed` count every attempt: raw.
  uint64_t retry_safe = 0;
  uint64_t resent = 0;
  bool client_retry = false;  // the record holds resends (attempt 2)

  // What a client that resends retry-safe failures once saw: measured with --client-retry, else
  // the best case (each resend succeeding).
  uint64_t failed_after_retries() const { return failed - (client_retry ? resent : retry_safe); }
};

// Where in a pod's life a request reached it (the lab's per-pod summary).
enum class Phase : uint8_t {
  serving,              // not terminating (starting and warming included)
  before_signal,        // terminating, stop signal not yet sent (preStop)
  after_signal,         // stop signal sent (or exited), its router not yet updated
  after_router_update,  // its router had applied the termination
};

inline constexpr size_t kPhaseCount = static_cast<size_t>(Phase::after_router_update) + 1;

std::string_view to_string(Phase phase);

// Requests that reached one pod, and those that failed, per phase of its life.
struct PodTraffic {
  std::string pod;
  std::array<uint64_t, kPhaseCount> requests{};
  std::array<uint64_t, kPhaseCount> failed{};
};

enum class Verdict : uint8_t { pass, fail };

// A stretch of the run, in times since its start.
struct Window {
  record::Micros start{0};
  record::Micros end{0};
};

struct Diagnosis {
  Verdict verdict = Verdict::pass;
  Totals totals;
  std::vector<RequestDiagnosis> failures;  // one per failed request, in record order
  std::vector<HoleSummary> holes;          // most requests first; `unexplained` last
  std::vector<PodLife> pods;               // in order of creation
  std::vector<PodTraffic> traffic;         // per backend pod named by a request, pods order
  Propagation propagation;
  std::vector<GraceKill> grace_kills;           // pods SIGKILLed at grace, pods order
  std::optional<record::Micros> longest_drain;  // what the fix for grace must cover
  std::string drain_evidence;                   // where longest_drain comes from
  // The longest stretch of consecutive failures, when the record has it (a load run's
  // disruption_started and disruption_ended events).
  std::optional<Window> disruption;
  Coverage coverage;             // what the terminations put to the test
  bool rollout_related = false;  // some failure has a rollout cause (a hole other than unexplained)
  std::string conclusion;        // one sentence: pass, the holes, or "no rollout-related cause"
  // Latent risks the run showed even where nothing failed, one sentence each, never holes:
  // HTTP/2 connections closed without GOAWAY, load left uneven across pods by pinned connections.
  std::vector<std::string> notes;
};

// The name of the stop signal the run's pods got ("SIGTERM", "SIGQUIT"): the first signalled
// pod's, SIGTERM when no pod was signalled. For headers that name the signal.
std::string stop_signal_name(const Diagnosis& d);

// Diagnoses a run. Pure: never throws on odd records (missing events make `unexplained` with a
// reason); throws Error only for malformed Options (an unreadable k8s_version).
Diagnosis diagnose(const record::RunRecord& run, const Options& options);

}  // namespace zerodrop::diagnose
