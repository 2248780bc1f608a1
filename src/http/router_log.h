#pragma once
// The lines a real ingress writes in the formats the lab configures (src/lab/routers/
// ingress_config.cc): HAProxy's request log with its termination state, nginx's access log with
// the worker that served the request, and nginx's error log. The lab reads them back to name its
// routers' own faults; the diagnosis reads the lines the lab quoted. Light, like proxy_failure.h:
// no Beast. Hand-written: no Debian library parses these formats (they are the lab's own
// log-format strings), and a line is a few space-separated fields.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/proxy_failure.h"

namespace zerodrop::http {

// HAProxy's log-format for the lab's frontend: when HAProxy accepted the request (%Ts.%ms), the
// client's port, the status it logged, backend/server, the 2-letter termination state, the total
// time, the retries, connect and response times, then the request line (quoted, last).
inline constexpr std::string_view kHaproxyLogFormat =
    "%Ts.%ms %cp %ST %b/%s %ts Tt=%Tt rc=%rc Tc=%Tc Tr=%Tr %{+Q}r";

struct HaproxyLogLine {
  std::chrono::microseconds accepted{0};  // since the Unix epoch, millisecond precision
  uint16_t client_port = 0;
  int status = 0;                      // -1 when HAProxy logged none
  std::string server;                  // "pods/pod-1", "pods/<NOSRV>"
  std::string termination;             // two characters: "SH", "sC", "--"
  std::chrono::milliseconds total{0};  // %Tt: from the accept to the end of the request
};

// How the lab joins a log line to a client's request, and the diagnosis again to the line the lab
// quoted. A log's times are the Unix clock's, the run's the steady clock's: read at one moment, the
// two agree to well under kLogClockSlack. HAProxy's line of a response it made ends within
// kHaproxyLineMatch of the client's end of the request.
inline constexpr std::chrono::microseconds kLogClockSlack{50'000};
inline constexpr std::chrono::microseconds kHaproxyLineMatch{1'000'000};

// One line in kHaproxyLogFormat; nullopt for anything else (HAProxy's own warnings, a torn line).
std::optional<HaproxyLogLine> parse_haproxy_log_line(std::string_view line);

// What a termination state says of a request HAProxy ended: the ProxyFailure it is when the
// state names one (the server refused, broke or timed out; HAProxy rejected the server's
// response), nullopt when the session was ended by HAProxy itself or by the client (a limit, a
// rule, an admin, a resource or internal error, the client's abort) or completed normally; and
// HAProxy's meaning in words. nullopt as a whole for a string that is no termination state.
struct TerminationMeaning {
  std::optional<ProxyFailure> failure;
  std::string words;  // "the server aborted before sending complete response headers"
};

std::optional<TerminationMeaning> termination_meaning(std::string_view state);

// The termination state of `line` read with its server: HAProxy logs a request it had no server
// for (`<NOSRV>`) as `SC` too, which is no_endpoint, not a refused connect.
TerminationMeaning meaning_of(const HaproxyLogLine& line);

// nginx's log_format for the lab's access log: $msec, the client's port, the worker's pid, the
// request line (quoted; nginx escapes a quote in it), the status, then the upstream fields.
inline constexpr std::string_view kNginxAccessFormat =
    "$msec $remote_port pid=$pid \"$request\" $status up=$upstream_addr "
    "up_status=$upstream_status connect=$upstream_connect_time header=$upstream_header_time "
    "pod=$zd_pod error=$zd_error";

// How long the lab's nginx keeps an idle client connection (keepalive_timeout): a request sent
// later on a connection that idled so long met nginx's ordinary idle close, not a reload.
inline constexpr std::chrono::seconds kNginxKeepaliveTimeout{75};

struct NginxAccessLine {
  std::chrono::microseconds logged{0};  // $msec: when the request ended, since the Unix epoch
  uint16_t client_port = 0;
  int pid = 0;  // the worker that served it
  int status = 0;
};

std::optional<NginxAccessLine> parse_nginx_access_line(std::string_view line);

// "2026/12/06 23:50:01 [notice] 1234#1234: gracefully shutting down": the level, the pid and
// the message (second-precision time, not kept).
struct NginxErrorLine {
  std::string level;
  int pid = 0;
  std::string message;
};

std::optional<NginxErrorLine> parse_nginx_error_line(std::string_view line);

// nginx's words when a worker starts its graceful shutdown after a reload (SIGHUP to the master)
// or SIGQUIT: it stops accepting and closes its idle kept-alive connections (error log, notice).
inline constexpr std::string_view kNginxShuttingDown = "gracefully shutting down";

}  // namespace zerodrop::http
