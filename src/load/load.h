#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "record/run_record.h"

namespace zerodrop::load {

// The public interface of the open-loop load engine. `zerodrop load` and the lab use only this.

enum class Keepalive { on, off };

// The wire protocol of a run: HTTP/1.1, HTTP/2 (h2c by prior knowledge for http://, TLS with
// ALPN h2 for https://), or unary gRPC over HTTP/2.
enum class Protocol { http1, http2, grpc };

// HTTP/2: whether a request refused unprocessed (REFUSED_STREAM, or above a GOAWAY's last stream
// id) is resent once, as gRPC clients do (RFC 9113 §8.7), or fails as it would for a naive client.
enum class RetryUnprocessed { once, never };

// HTTP/1.1: whether a retry-safe failure (record::retry_safe: idempotent, reused connection, no
// response byte) is resent once on a new connection, as browsers and Go's net/http do.
enum class ClientRetry { off, once };

// One request template: the pacer uses the targets round-robin.
struct Target {
  std::string method = "GET";
  std::string url;  // http(s)://host[:port]/path?query
  // A network namespace (an open /proc/.../ns/net descriptor) its connections are opened in, as
  // the lab's nftables nodes need; -1: the caller's own. Needs CAP_SYS_ADMIN.
  int netns = -1;
};

// An inclusive range of HTTP statuses that count as success.
struct StatusRange {
  int first = 200;
  int last = 399;
};

struct Options {
  std::vector<Target> targets;
  double rate =
      100;  // requests per second over all connections; 0 = closed loop (as fast as possible)
  Duration duration = std::chrono::seconds(10);
  uint32_t connections = 64;  // maximum concurrent connections
  Keepalive keepalive = Keepalive::on;
  uint64_t max_requests_per_connection = 0;  // 0 = unlimited
  // The share of requests (0..1) sent with `Connection: close`, spread evenly by sequence number,
  // so that about rate × share new connections open per second beside the kept-alive ones.
  double fresh_share = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Duration timeout = std::chrono::seconds(10);         // whole request, from the actual send
  Duration connect_timeout = std::chrono::seconds(5);  // TCP handshake, and TLS's for https
  std::string ca_file;    // https: trust these PEM certificates instead of the system's
  bool insecure = false;  // https: do not verify the server's certificate
  std::string backend_header = "X-Pod-Name";
  std::vector<StatusRange> ok_status = {{200, 399}};
  Duration interval = std::chrono::seconds(1);  // progress callback period
  uint32_t threads = 1;                         // event-loop threads
  uint64_t max_requests = 0;  // stop sending after this many requests (0 = no limit)
  Protocol protocol = Protocol::http1;
  uint32_t streams = 100;   // HTTP/2: concurrent streams per connection (at most the server's)
  std::string grpc_method;  // gRPC: "pkg.Service/Method"; the body is the serialized message
  std::vector<int> ok_grpc_status = {0};  // gRPC statuses that count as success
  RetryUnprocessed retry_unprocessed = RetryUnprocessed::once;
  ClientRetry client_retry = ClientRetry::off;
};

// HTTP/2 counts of a run (all zero for HTTP/1.1).
struct Http2Counts {
  static constexpr size_t kCodes = 14;  // RFC 9113 error codes; anything above counts in the last
  std::array<uint64_t, kCodes> goaways{};      // GOAWAY frames received, by error code
  std::array<uint64_t, kCodes> rst_streams{};  // RST_STREAM frames received, by error code
  uint64_t closed_without_goaway = 0;          // connections the server closed without any GOAWAY
  uint64_t unprocessed = 0;                    // first attempts refused unprocessed and resent
  uint64_t resent_ok = 0;                      // resends that succeeded
  uint64_t resend_failed = 0;                  // resends that failed (their class is the resend's)
  std::array<uint64_t, 17> grpc_status{};      // gRPC: answers by grpc-status (0..16)
  uint64_t grpc_status_other = 0;              // statuses above 16

  void merge(const Http2Counts& other);
};

// Counts and latency for a stretch of the run (the whole run, or one interval).
struct Summary {
  uint64_t requests = 0;  // completed (every outcome)
  uint64_t ok = 0;
  uint64_t failed = 0;
  std::array<uint64_t, record::kOutcomeCount> outcomes{};
  // The first error message seen per failure class ("TLS handshake: certificate verify failed
  // ..."), empty where the class carries none (statuses) or none happened.
  std::array<std::string, record::kOutcomeCount> first_error{};
  uint64_t late = 0;    // could not be sent on time because every connection was busy
  uint64_t unsent = 0;  // were due before the end but never sent: every connection stayed busy
  uint64_t connections_opened = 0;
  // Failures a client may resend unchanged (record::retry_safe), and with ClientRetry::once the
  // ones resent and how many of those resends succeeded. Every attempt counts in `requests`,
  // `failed` and `outcomes`: those are the raw counts; failed − resent is what such a client saw.
  uint64_t retry_safe = 0;
  uint64_t resent = 0;
  uint64_t resent_ok = 0;
  bool client_retry = false;
  double rate_achieved = 0;  // requests sent per second of wall time
  double elapsed_s = 0;
  double disruption_s = 0;  // longest stretch of consecutive failures, in seconds
  // By intended send time, seconds since the start (0 when nothing failed): where the longest
  // stretch began, and the span from the first failure to the end of the last one.
  double disruption_start_s = 0;
  double first_failure_s = 0;
  double last_failure_s = 0;

  // Latency from the intended send time (no coordinated omission) and service time from the
  // actual send, in milliseconds.
  struct Percentiles {
    double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  };

  Percentiles latency_ms;
  Percentiles service_ms;
  bool interrupted = false;
  Protocol protocol = Protocol::http1;
  Http2Counts h2;
};

// What an HTTP/2 connection said or suffered: a GOAWAY received (EventKind::goaway_received), or
// its end coming from the server's side once the server had sent its SETTINGS
// (EventKind::connection_closed: EOF, reset, or a protocol error). A connection the client closes
// itself (idle after a GOAWAY, end of run), or one ended before the server spoke, has none.
struct ConnectionEvent {
  record::EventKind kind = record::EventKind::goaway_received;
  record::Micros t{0};       // since the run's t = 0, as records' times
  uint16_t server_port = 0;  // the port it was connected to (the lab's router)
  // The target (URL) whose request opened it: tells the lab's nodes apart when they share an
  // address and port (--dataplane nftables: the same ClusterIP from each node's namespace).
  uint32_t target = 0;
  record::ConnectionFacts facts;
};

// Hooks the caller supplies. Called from the engine's threads; must be cheap and thread-safe.
struct Hooks {
  std::function<void(const record::RequestRecord&)> on_record;  // every finished request
  std::function<void(const Summary& interval)> on_interval;     // every Options::interval
  const std::atomic<bool>* stop = nullptr;  // set to end the run early (Summary::interrupted)
  // Called once with the steady-clock instant that is t = 0 of every record, before the first
  // request: a caller with its own timeline (the lab) moves records onto it exactly.
  std::function<void(std::chrono::steady_clock::time_point start)> on_start;
  std::function<void(const ConnectionEvent&)> on_connection_event;  // HTTP/2 runs only
};

// Validates options as run() does and sends nothing: throws Error naming the culprit (bad URL,
// unsupported scheme, unresolvable host). A caller checks before it creates files for the run.
void check(const Options& options);

// Validates options (throws Error naming the culprit: bad URL, unsupported scheme, unresolvable
// host), then runs the load until the duration elapses or `stop` is set, and returns the summary.
Summary run(const Options& options, const Hooks& hooks);

}  // namespace zerodrop::load
