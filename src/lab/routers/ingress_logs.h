#pragma once

// Internal to the lab: a real ingress's own logs read back once the load has stopped, for the
// lines about its failed requests, which the lab records as router-log notes (record::kRouterLog)
// for the diagnosis to quote and read. Pure: the unit tests feed recorded lines.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "record/run_record.h"

namespace zerodrop::lab {

// A failed request as the ingress's router joined it (Router::join_report), times on the run's
// timeline.
struct IngressFailure {
  uint16_t client_port = 0;
  record::Micros sent{0};
  record::Micros done{0};
  int status = 0;
  record::Outcome outcome = record::Outcome::ok;
  record::Connection connection = record::Connection::fresh;
  bool router_answered = false;  // the ingress made the response itself (router_error set)
  bool pod_named = false;        // the response named a pod
};

// An old nginx worker a reload retired, and when it shut down, on the run's timeline: between the
// controller's last poll that saw it running and its first that saw its title say "shutting down"
// (nginx sets it as it closes its idle connections; polled every 2 ms, later on a busy machine).
// Until then, after the reload's SIGHUP, it still serves its kept-alive connections.
struct RetiredWorker {
  pid_t pid = 0;
  record::Micros running{0};
  record::Micros seen{0};
};

// A router-log note to record: its time and detail ("router log FILE: LINE"), and when it is known
// only to an interval, the interval's start (record::Event::t_min).
struct RouterLogNote {
  record::Micros t{0};
  std::string detail;
  std::optional<record::Micros> t_min;
  bool operator==(const RouterLogNote&) const = default;
};

// HAProxy's log line of each failure HAProxy answered itself: the line of the same client port
// and status whose end (accept + total time) is nearest the failure's end, within a second.
// `wall_origin` is the run's t = 0 on the Unix clock the log's times are on.
std::vector<RouterLogNote> haproxy_notes(std::istream& log,
                                         const std::vector<IngressFailure>& failures,
                                         std::chrono::microseconds wall_origin);

// For each failure nginx cut on a kept-alive client connection (closed or reset before any
// response, no pod named, not nginx's own answer): the connection's last access.log line before
// it (which names the worker that had the connection), and that worker's "gracefully shutting
// down" line of error.log, stamped with its shutdown's interval, when that interval ends after the
// line and begins no later than the failure was sent. Each note once, in time order.
std::vector<RouterLogNote> nginx_notes(std::istream& access, std::istream& error,
                                       const std::vector<RetiredWorker>& retired,
                                       const std::vector<IngressFailure>& failures,
                                       std::chrono::microseconds wall_origin);

}  // namespace zerodrop::lab
