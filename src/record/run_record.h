#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "record/hole.h"
#include "record/outcome.h"
#include "record/scenario.h"

namespace zerodrop::record {

// Times in a run record are microseconds since the run's start (the load engine's t = 0).
using Micros = std::chrono::microseconds;

// What an engine (lab, sim, verify) produces and all analysis consumes. Nothing downstream knows
// which engine produced it. Serialized as NDJSON: events.ndjson and requests.ndjson.

enum class EventKind : uint8_t {
  pod_created,       // the pod object exists (detail: its address); new pods of a rollout too
  pod_started,       // its process was spawned (detail: pid)
  pod_ready,         // the readiness probe passed `success_threshold` times (kubelet's Ready)
  pod_unready,       // the readiness probe failed `failure_threshold` times
  probe_failed,      // one failed probe (detail: "readiness: …" or "liveness: …")
  liveness_restart,  // a failed liveness probe killed the container; it restarts
  deletion_started,  // deletion timestamp set: both clocks start (detail: grace period)
  prestop_started,
  prestop_finished,
  prestop_failed,    // a failed preStop is an event; termination continues (detail: why)
  signal_sent,       // signal = the signal number (TERM, KILL, …)
  signal_ignored,    // the signal sent did nothing: PID 1 has no handler, or it ignores it (why)
  pod_exited,        // exit_code or signal set
  process_exited,    // another process of the pod exited (exit_code or signal; detail: pid, name)
  endpoint_changed,  // the endpoint controller changed the pod's conditions
  router_applied,    // router applied the pod's endpoint change (conditions as applied)
  router_refused,    // the router's connection to the pod's backend was refused (l4/l7)
  rollout_started,
  rollout_step,  // detail: what the rollout controller did
  rollout_finished,
  disruption_started,  // the longest stretch of consecutive failures begins (the load engine's)
  disruption_ended,    // … and ends (detail: its length)
  note,                // anything else worth a line on the timeline (detail)
  // A schema migration (the lab's --migrate): detail the command; when it ended, its exit_code
  // or signal, and detail the command and the tail of its output.
  migration_started,
  migration_finished,
  // HTTP/2 connections of the load (the lab joins them to the pod by the client's source port;
  // `connection` holds the facts): a GOAWAY arrived, or the server's end of the connection came.
  goaway_received,
  connection_closed,
};

std::string_view to_string(EventKind kind);
std::optional<EventKind> event_kind_from_string(std::string_view name);

// The detail of the SIGKILL an engine sends every pod still running when the run ends: the
// engine's own stop, never a kubelet's grace kill.
inline constexpr std::string_view kEndOfRunKill = "the lab ends";

// EndpointSlice conditions of one endpoint (KEP-1672).
struct Conditions {
  bool ready = false;
  bool serving = false;
  bool terminating = false;
  bool operator==(const Conditions&) const = default;
};

// The last GOAWAY a connection received before a request ended.
struct GoawayRecord {
  Micros t{0};
  uint32_t last_stream_id = 0;
  uint32_t error = 0;  // HTTP/2 error code
  std::string debug;   // the frame's debug data, at most 256 bytes
};

// How the server's end of an HTTP/2 connection came: FIN, RST, or a protocol error on which the
// client ended it with its own GOAWAY.
enum class CloseKind : uint8_t { eof, reset, protocol_error };

std::string_view to_string(CloseKind kind);

// What goaway_received and connection_closed events say about the connection.
struct ConnectionFacts {
  uint32_t conn = 0;        // the load engine's connection number (records' `conn`)
  uint16_t local_port = 0;  // the client's source port
  // goaway_received: the frame; connection_closed: the last GOAWAY before the close, if any.
  std::optional<GoawayRecord> goaway;
  CloseKind closed = CloseKind::eof;  // connection_closed only
  uint32_t open_streams = 0;          // connection_closed: streams still open when it came
};

struct Event {
  Micros t{0};
  // An event known only to an interval happened in [t_min, t]: `t` is the latest it can have
  // been, which is when every consumer takes it (verify's router_applied inferred from traffic).
  std::optional<Micros> t_min;
  EventKind kind = EventKind::note;
  std::string pod;     // pod name, when the event concerns a pod
  std::string router;  // router (node) name, for router_* events
  std::optional<Conditions> conditions;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string version;  // pod_created: the version the pod runs ("A", "B"), when two were rolled
  std::string detail;
  std::optional<ConnectionFacts> connection;  // goaway_received, connection_closed
};

enum class Connection : uint8_t { fresh, reused };

// What happened to the backend connection a client connection was bound to: as the lab's l4
// router that held both saw it, or under nftables as the kernel's socket trace and conntrack
// tell it (absent for other engines and dataplanes). Whether it
// happened at the pod's exit is the diagnosis' business: it compares the time with the exit.
enum class BackendFate : uint8_t {
  open,         // nothing: the backend connection was still open when the request ended
  refused,      // the router could not connect to a pod (refused, timed out, none usable)
  reset,        // the pod reset the connection while a request was pending on it
  closed,       // the pod closed the connection (FIN) while a request was pending on it
  idle_closed,  // the pod closed or reset it while no request was pending (a keep-alive close)
};

std::string_view to_string(BackendFate fate);

enum class Idempotent : uint8_t { no, yes };  // the request's method (http/idempotent.h)
enum class ResponseBytes : uint8_t { none, some };

// Whether a failed request may be resent unchanged, as browsers, Go's net/http and gRPC resend
// once: an idempotent method, on a reused connection, that broke (reset or closed) before any
// response byte arrived — the server cannot have acted on it, or acting twice does no harm.
bool retry_safe(Outcome outcome, Connection connection, ResponseBytes bytes, Idempotent method);
std::optional<BackendFate> backend_fate_from_string(std::string_view name);

// HTTP/2 error codes by name (RFC 9113 §7): "NO_ERROR", "REFUSED_STREAM"; "0x…" past the table.
std::string h2_error_name(uint32_t code);
std::optional<uint32_t> h2_error_from_name(std::string_view name);

// How the first attempt of a resent request ended (refused unprocessed).
struct FirstAttemptRecord {
  Outcome outcome = Outcome::ok;
  uint32_t conn = 0;
  uint32_t stream = 0;
  Micros done{0};
};

enum class Proto : uint8_t { h2, grpc };

// What an HTTP/2 request adds to its record (HTTP/1.1 records carry none of it).
struct Http2Facts {
  Proto proto = Proto::h2;
  uint32_t conn = 0;    // connection number in the run
  uint32_t stream = 0;  // stream id, 0 if never sent
  uint32_t attempts = 1;
  std::optional<uint32_t> rst;  // the RST_STREAM code received
  std::optional<GoawayRecord> goaway;
  std::optional<int> grpc_status;
  std::string grpc_message;  // percent-decoded, at most 256 bytes
  std::optional<FirstAttemptRecord> first_attempt;
};

// RequestRecord::router_error under --dataplane nftables/iptables: the node's kernel gave the
// connection to the Service no NAT (its conntrack entry kept the Service's own address), so it
// went to no pod. The router's failure, never a hole of the app (docs/lab.md, "A connect the
// kernel left untranslated").
inline constexpr std::string_view kUntranslated = "untranslated";

// A router's rule commit that no endpoint change made (the lab's --dataplane-churn syncs): a
// `note` event whose `router` is set (other notes leave it empty) and whose detail begins so. The
// lab writes one only for the commit nearest a connection its kernel left untranslated; the
// diagnosis reads it, beside router_applied, as that router's commit (proxy-sync-loss).
inline constexpr std::string_view kRuleSync = "rule sync";

// A line of a real ingress's own log that the lab quotes about a failed request (--ingress): a
// `note` whose `router` is set and whose detail is "router log FILE: LINE", FILE being
// haproxy.log, access.log or error.log. Its time is the line's own (HAProxy's accept plus its
// total time, nginx's $msec), but for nginx's error log, whose times have whole seconds, when the
// lab's controller saw that worker shut down: in [t_min, t], its last poll of the workers' titles
// that saw it running and its first that saw it shut down. The diagnosis reads LINE with
// http/router_log.h.
inline constexpr std::string_view kRouterLog = "router log";

// One request as the client saw it. Absent times (never sent, no byte received) are nullopt.
struct RequestRecord {
  uint64_t seq = 0;
  Micros intended{0};  // when the pacer meant to send it
  std::optional<Micros> sent;
  std::optional<Micros> first_byte;
  Micros done{0};
  Outcome outcome = Outcome::ok;
  bool failed = false;  // the outcome counts as a failure under the run's --ok-status
  int status = 0;       // HTTP status, 0 when none was received
  Connection connection = Connection::fresh;
  uint32_t target = 0;      // index of the target (URL) it was sent to
  uint16_t local_port = 0;  // the client's source port: lets a proxy (the lab's l4 router) that
                            // saw the connection join its backend choice to this record
  std::string router;       // the router (node) it went through, when known
  std::string backend;      // the pod that answered or that the router chose, when known
  // No backend known, but it was one of these pods (verify: a failed new connection names no
  // backend, and more than one pod was terminating when it was sent).
  std::vector<std::string> backend_candidates;
  std::string error;         // the system's words for a transport failure ("connection refused")
  std::string router_error;  // why the router answered itself (502/503/504), in
                             // http::ProxyFailure's words ("upstream_timeout"), or
                             // kUntranslated; empty otherwise
  std::string body;  // an error response's (status >= 400) first bytes, printable ASCII only
  std::optional<BackendFate> backend_fate;  // its backend connection's fate, when a router knew
  std::optional<Micros> backend_fate_at;    // when that fate came (absent for `open`)
  // l4 lab: when the router bound this request's connection to `backend` (its accept), which on
  // a busy machine may come before or after `sent`; absent when no router recorded it.
  std::optional<Micros> bound;
  // A failure a client may resend unchanged (see retry_safe()); false for every success.
  bool retry_safe = false;
  uint8_t attempt = 1;  // 2: the resend of a retry-safe failure (load --client-retry), same seq
  bool resent = false;  // this failed attempt was resent (load --client-retry)

  std::optional<Http2Facts> h2;  // HTTP/2 and gRPC runs only
};

// Aggregated counts for engines that do not keep single records (the simulator).
struct TimeBucket {
  Micros start{0};
  Micros width{0};
  uint64_t requests = 0;
  std::array<uint64_t, kOutcomeCount> outcomes{};
  std::array<uint64_t, kHoleCount> failures_by_hole{};  // when the engine knows the cause
};

struct RunRecord {
  std::string engine;  // "lab", "sim", "load", "verify" or "watch"
  Scenario scenario;   // the settings the run used: for the diagnosis and the report
  std::vector<Event> events;
  std::vector<RequestRecord> requests;
  std::vector<TimeBucket> buckets;
  Micros end{0};  // when the run stopped sending
};

// An event as JSON, keys in this order: t_us, kind, pod, router, conditions, exit_code, signal,
// version, detail, connection (absent ones left out). events.ndjson holds one a line; report.json
// nests them.
nlohmann::ordered_json to_json(const Event& event);

// NDJSON: one object per line. Writers flush nothing; readers throw Error with file and line.
void write_ndjson(std::ostream& out, const Event& event);
void write_ndjson(std::ostream& out, const RequestRecord& request);
void write_ndjson(std::ostream& out, const TimeBucket& bucket);

// A time read from a record, checked: microseconds within a week of the run's start, else Error
// naming `field`. Keeps a corrupt or hostile file from making a reader allocate a timeline of
// years.
Micros run_time(int64_t us, std::string_view field);
std::vector<Event> read_events(const std::string& path);
std::vector<RequestRecord> read_requests(const std::string& path);
// One request as write_ndjson writes it (already parsed). Throws Error naming what is wrong.
RequestRecord read_request(const nlohmann::json& line);
std::vector<TimeBucket> read_buckets(const std::string& path);

}  // namespace zerodrop::record
