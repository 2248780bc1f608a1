#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "load/disruption_tracker.h"
#include "load/load.h"
#include "load/plan.h"
#include "load/schedule.h"
#include "load/session.h"
#include "load/stream.h"
#include "load/tally.h"
#include "record/run_record.h"

namespace zerodrop::load {

class Worker;

// What every worker of one run shares; read-only once the workers run (but for the tracker,
// which is thread-safe).
struct RunContext {
  const Plan& plan;
  const Options& options;
  const Hooks& hooks;
  DisruptionTracker& disruption;
  TimePoint start;
  TimePoint end;
  std::vector<Worker*> workers;  // worker 0 gathers the interval summaries of all
};

// One event-loop thread's share of the run: its own io_context, sessions, pacer and tally. Its
// share of the schedule (Schedule) needs no queue: a backlog is two counters.
class Worker {
public:
  Worker(RunContext& run, uint32_t index, uint32_t count, uint32_t connections);
  ~Worker();

  // Runs until the duration has elapsed (or stop is set) and the requests in flight ended.
  void run();

  const Tally& tally() const { return tally_; }

  TimePoint stopped_sending() const { return stopped_sending_; }

  bool interrupted() const { return interrupted_; }

  // The counts since the last call. Thread-safe.
  Tally take_interval();

  // Called by this worker's sessions.
  const Plan& plan() const { return run_.plan; }

  const Options& options() const { return run_.options; }

  TimePoint run_start() const { return run_.start; }

  const Hooks& hooks() const { return run_.hooks; }

  const boost::asio::ip::tcp::endpoint& endpoint(uint32_t i) const { return endpoints_[i]; }

  void on_opened() { ++tally_.connections_opened; }

  // A number for a new connection, unique in the run (HTTP/2 records name it).
  uint32_t next_connection_number() { return connection_numbers_++ * count_ + index_ + 1; }

  void on_finished(const Finished& finished);
  // HTTP/2: `request` was refused unprocessed on its first attempt and is resent once, ahead of
  // new requests, when a session can take it (the count goes in the summary).
  void on_unprocessed(const Request& request);
  // The session can take a request again (kept alive, a stream freed, or closed); `now` is the
  // time it became so.
  void on_idle(Session& session, TimePoint now);
  void on_closed(Session& session, TimePoint now);

  Tally& tally() { return tally_; }

private:
  bool next_request(TimePoint now, Request& out) const;
  Session* pick(uint32_t endpoint);
  Session* pick_new();
  Session* take_closed();
  Session* close_unused_idle();
  void count_retry(const Finished& f, bool failed);
  void dispatch(TimePoint now);
  void pace();
  void arm_pacer(TimePoint at);
  void sweep();
  void report_interval(TimePoint now);
  void end_sending(TimePoint now);
  void maybe_finish();
  void fill_record(const Finished& f);

  RunContext& run_;
  uint32_t index_;
  uint32_t count_;
  boost::asio::io_context io_;
  boost::asio::steady_timer pacer_;
  boost::asio::steady_timer sweep_;
  std::vector<boost::asio::ip::tcp::endpoint> endpoints_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::vector<Session*>> idle_;  // per endpoint; most recently used last
  std::vector<Session*> closed_;
  // Unprocessed first attempts (HTTP/2, at most the streams in flight) and --client-retry's
  // resends of retry-safe failures (at most the connections).
  std::deque<Request> resend_;
  Tally tally_;
  std::mutex interval_mutex_;
  Tally interval_;
  bool retry_safe_ = false;       // of the request being finished, for its record
  bool resent_ = false;           // … and whether it is resent
  record::RequestRecord record_;  // reused for every on_record call: no allocation per request
  uint64_t due_ = 0;              // open loop: requests whose intended time has come
  uint64_t dispatched_ = 0;       // requests handed to a connection
  uint64_t late_mark_ = 0;        // requests below this index were already counted late
  uint64_t active_ = 0;           // requests in flight (resends waiting included)
  // Open loop; its limit is this worker's share of --requests in both loops.
  Schedule schedule_;
  uint32_t connection_numbers_ = 0;
  TimePoint stopped_sending_{};
  TimePoint next_interval_{};
  TimePoint last_interval_{};
  std::chrono::nanoseconds sweep_period_{};
  bool ended_ = false;
  bool finished_ = false;
  bool interrupted_ = false;
};

}  // namespace zerodrop::load
