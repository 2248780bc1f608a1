#pragma once

#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "record/run_record.h"

namespace zerodrop::diagnose::testing {

using record::Connection;
using record::EventKind;
using record::Micros;
using record::Outcome;

inline Micros at(double seconds) {
  return std::chrono::duration_cast<Micros>(std::chrono::duration<double>(seconds));
}

// Builds run records by hand for the diagnosis and report tests; times in seconds.
class RunBuilder {
public:
  RunBuilder() { run_.engine = "lab"; }

  // A scenario setting in run.json's form ("grace", "30s"), read as run.json is.
  RunBuilder& set(const std::string& key, const std::string& value) {
    std::map<std::string, std::string> strings = record::to_strings(run_.scenario);
    strings[key] = value;
    run_.scenario = record::scenario_from_strings(strings);
    return *this;
  }

  RunBuilder& event(double t, EventKind kind, const std::string& pod,
                    const std::string& router = "") {
    record::Event e;
    e.t = at(t);
    e.kind = kind;
    e.pod = pod;
    e.router = router;
    run_.events.push_back(e);
    return *this;
  }

  // A pod created and Ready at the given times, and every router applying its readiness.
  RunBuilder& pod(const std::string& name, double created, double ready) {
    event(created, EventKind::pod_created, name);
    event(created, EventKind::pod_started, name);
    return event(ready, EventKind::pod_ready, name);
  }

  // Pods serving from the start: each created at 0.1 s and Ready at 0.5 s, every router of
  // `routers` applying it (Ready) at 0.6 s.
  RunBuilder& serving(const std::vector<std::string>& pods,
                      const std::vector<std::string>& routers) {
    for (const std::string& name : pods) {
      pod(name, 0.1, 0.5);
      for (const std::string& router : routers) {
        applied(0.6, router, name, true, false);
      }
    }
    return *this;
  }

  RunBuilder& signal(double t, const std::string& pod, int signal) {
    event(t, EventKind::signal_sent, pod);
    run_.events.back().signal = signal;
    return *this;
  }

  RunBuilder& exited(double t, const std::string& pod, int code) {
    event(t, EventKind::pod_exited, pod);
    run_.events.back().exit_code = code;
    return *this;
  }

  RunBuilder& killed(double t, const std::string& pod) {
    signal(t, pod, SIGKILL);
    event(t, EventKind::pod_exited, pod);
    run_.events.back().signal = SIGKILL;
    return *this;
  }

  // Deletion with no preStop: SIGTERM at once; exit `exit_after` seconds later (code 0).
  RunBuilder& terminate(const std::string& pod, double deletion, double exit_after) {
    event(deletion, EventKind::deletion_started, pod);
    signal(deletion, pod, SIGTERM);
    return exited(deletion + exit_after, pod, 0);
  }

  RunBuilder& applied(double t, const std::string& router, const std::string& pod, bool ready,
                      bool terminating) {
    event(t, EventKind::router_applied, pod, router);
    run_.events.back().conditions = record::Conditions{ready, ready || !terminating, terminating};
    return *this;
  }

  RunBuilder& request(double sent, double done, Outcome outcome, Connection connection,
                      const std::string& router, const std::string& backend) {
    record::RequestRecord r;
    r.seq = run_.requests.size();
    r.intended = at(sent);
    r.sent = at(sent);
    r.done = at(done);
    r.outcome = outcome;
    r.failed = outcome != Outcome::ok;
    r.status = outcome == Outcome::ok ? 200 : outcome == Outcome::http_503 ? 503 : 0;
    r.connection = connection;
    r.router = router;
    r.backend = backend;
    run_.requests.push_back(r);
    return *this;
  }

  // What the router saw become of the last request's backend connection, at `t`.
  RunBuilder& fate(record::BackendFate fate, double t) {
    run_.requests.back().backend_fate = fate;
    run_.requests.back().backend_fate_at = at(t);
    return *this;
  }

  // When the l4 router bound the last request's connection to its backend.
  RunBuilder& bound(double t) {
    run_.requests.back().bound = at(t);
    return *this;
  }

  // Successful requests every `step` seconds from `from` to `to`, each taking 5 ms.
  RunBuilder& ok(double from, double to, double step, const std::string& router,
                 const std::string& backend) {
    for (double t = from; t < to; t += step) {
      request(t, t + 0.005, Outcome::ok, Connection::reused, router, backend);
    }
    return *this;
  }

  // The last request, to set a field the helpers do not.
  record::RequestRecord& last_request() { return run_.requests.back(); }

  // The events so far, to adjust one the helpers do not set.
  std::vector<record::Event>& events() { return run_.events; }

  record::RunRecord build() { return std::move(run_); }

private:
  record::RunRecord run_;
};

}  // namespace zerodrop::diagnose::testing
