#include "load/load.h"

#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "load/disruption_tracker.h"
#include "load/plan.h"
#include "load/tally.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

// Connections dealt to `threads` workers as evenly as possible.
uint32_t share(uint32_t total, uint32_t threads, uint32_t index) {
  return total / threads + (index < total % threads ? 1 : 0);
}

// Runs every worker but the first on its own thread and the first on the caller's; the first
// exception a worker throws (only a hook can throw) is rethrown once all have stopped.
void run_workers(const std::vector<std::unique_ptr<Worker>>& workers) {
  std::vector<std::exception_ptr> errors(workers.size());
  auto body = [&](size_t i) {
    try {
      workers[i]->run();
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers.size(); ++i) {
    threads.emplace_back(body, i);
  }
  body(0);
  for (std::thread& t : threads) {
    t.join();
  }
  for (const std::exception_ptr& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

}  // namespace

void check(const Options& options) {
  make_plan(options);
}

Summary run(const Options& options, const Hooks& hooks) {
  // Validate and resolve everything before the first request: errors are Error, not outcomes.
  Plan plan = make_plan(options);
  DisruptionTracker disruption(options.duration);
  uint32_t threads = std::min(options.threads, options.connections);

  // Build the workers; the clock starts once they are ready.
  RunContext context{plan, options, hooks, disruption, {}, {}, {}};
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t i = 0; i < threads; ++i) {
    workers.push_back(
        std::make_unique<Worker>(context, i, threads, share(options.connections, threads, i)));
    context.workers.push_back(workers.back().get());
  }
  context.start = std::chrono::steady_clock::now();
  context.end = context.start + options.duration;
  if (hooks.on_start) {
    hooks.on_start(context.start);
  }

  // Send until the duration ends or stop is set, then wait for the requests in flight.
  run_workers(workers);
  TimePoint finished = std::chrono::steady_clock::now();

  // Merge the workers' tallies into the summary.
  Tally total;
  TimePoint stopped = context.start;
  bool interrupted = false;
  for (const auto& w : workers) {
    total.merge(w->tally());
    stopped = std::max(stopped, w->stopped_sending());
    interrupted = interrupted || w->interrupted();
  }
  Summary summary =
      summarize(total, to_seconds(finished - context.start), to_seconds(stopped - context.start));
  DisruptionTracker::Failures failures = disruption.failures();
  summary.disruption_s = failures.longest_s;
  summary.disruption_start_s = failures.longest_start_s;
  summary.first_failure_s = failures.first_s;
  summary.last_failure_s = failures.last_s;
  summary.interrupted = interrupted;
  summary.protocol = options.protocol;
  summary.client_retry = options.client_retry == ClientRetry::once;
  return summary;
}

}  // namespace zerodrop::load
