#include "diagnose/coverage.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "diagnose/facts.h"

namespace zerodrop::diagnose {
namespace {

using record::Micros;

double per_second(uint64_t count, Micros span) {
  return span > Micros{0} ? static_cast<double>(count) / std::chrono::duration<double>(span).count()
                          : 0;
}

double seconds_of(Micros d) {
  return std::chrono::duration<double>(d).count();
}

// The last router's apply of the pod's termination, when every router applied it.
std::optional<Micros> deregistration(const Facts& facts, const std::string& pod) {
  std::optional<Micros> last;
  for (const std::string& router : facts.routers()) {
    std::optional<Micros> t = facts.termination_applied(router, pod);
    if (!t) {
      return std::nullopt;
    }
    last = std::max(last.value_or(*t), *t);
  }
  return last;
}

// Counts the requests to `c.pod` in each window of its termination, and its rates while serving
// (from its first request to `served_until`, its deletion).
void count_requests(const record::RunRecord& run, Micros served_until, PodCoverage& c) {
  std::optional<Micros> first;
  uint64_t serving = 0, serving_fresh = 0;
  for (const record::RequestRecord& r : run.requests) {
    // A connect the pod refused was never sent; through the kernel's DNAT its record still names
    // the pod, chosen at `bound` (the SYN).
    std::optional<Micros> at = r.sent ? r.sent : r.bound;
    if (r.backend != c.pod || !at) {
      continue;
    }
    Micros t = *at;
    bool fresh = r.connection == record::Connection::fresh;
    if (t < served_until) {
      first = std::min(first.value_or(t), t);
      ++serving;
      serving_fresh += fresh ? 1 : 0;
    }
    c.in_flight_at_signal += t < c.signal && r.done > c.signal ? 1 : 0;
    bool in_stop = t >= c.signal && t <= c.exit;
    c.stop_requests += in_stop ? 1 : 0;
    c.stop_fresh += in_stop && fresh ? 1 : 0;
    c.race_fresh += fresh && t >= c.signal && t < c.signal + c.race_window() ? 1 : 0;
    c.after_deregistration += c.deregistered && t >= *c.deregistered && t <= c.exit ? 1 : 0;
  }
  if (first) {
    c.fresh_rate = per_second(serving_fresh, served_until - *first);
    c.request_rate = per_second(serving, served_until - *first);
  }
}

std::string probability(double p) {
  return p >= 0.01 ? fmt::format("{:.2f}", p) : fmt::format("{:.1e}", p);
}

// "no new connection … could occur" or the new connections, the windows and the chance of none.
std::string race_text(const Coverage& c) {
  double low = INFINITY, high = 0;
  for (const PodCoverage& p : c.pods) {
    low = std::min(low, p.fresh_rate);
    high = std::max(high, p.fresh_rate);
  }
  if (c.race_windows == Micros{0}) {
    return "no router sent a pod a new connection after its stop signal (each was deregistered "
           "first): the deregistration race could not occur";
  }
  std::string rates =
      low == high ? fmt::format("{:.1f}", low) : fmt::format("{:.1f}–{:.1f}", low, high);
  return fmt::format(
      "{} new connection{} reached a pod after its stop signal while routers still sent it some "
      "({:.2f} s of such windows in all; at the {}/s new connections each pod got while serving, "
      "windows this long get none with probability {})",
      c.race_fresh, c.race_fresh == 1 ? "" : "s", seconds_of(c.race_windows), rates,
      probability(c.race_miss));
}

std::string summary_of(const Coverage& c) {
  if (c.pods.empty()) {
    return {};
  }
  auto [shortest, longest] = std::minmax_element(
      c.pods.begin(), c.pods.end(),
      [](const auto& a, const auto& b) { return a.stop_window() < b.stop_window(); });
  uint64_t stop_requests = 0;
  for (const PodCoverage& p : c.pods) {
    stop_requests += p.stop_requests;
  }
  std::string windows =
      shortest->stop_window() == longest->stop_window()
          ? duration_text(shortest->stop_window())
          : duration_text(shortest->stop_window()) + "–" + duration_text(longest->stop_window());
  return fmt::format(
      "{} termination{}, stop windows (signal → exit) {}: {} request{} in flight at the signals "
      "and {} sent within the windows; {}",
      c.pods.size(), c.pods.size() == 1 ? "" : "s", windows, c.in_flight_at_signals,
      c.in_flight_at_signals == 1 ? "" : "s", stop_requests, race_text(c));
}

}  // namespace

Micros PodCoverage::race_window() const {
  return deregistered ? std::max(Micros{0}, *deregistered - signal) : Micros{0};
}

double PodCoverage::race_miss() const {
  return std::exp(-fresh_rate * seconds_of(race_window()));
}

Coverage coverage_of(const record::RunRecord& run, const Facts& facts) {
  Coverage c;
  for (const PodLife& life : facts.pods()) {
    if (!life.signal || !life.exited || *life.exited < *life.signal || life.end_of_run_kill) {
      continue;  // not terminated in the run (the lab's own end-of-run kill is no termination)
    }
    PodCoverage p{.pod = life.name, .signal = *life.signal, .exit = *life.exited};
    p.deregistered = deregistration(facts, life.name);
    count_requests(run, life.deletion.value_or(*life.signal), p);
    c.in_flight_at_signals += p.in_flight_at_signal;
    c.race_fresh += p.race_fresh;
    c.pods.push_back(std::move(p));
  }
  std::stable_sort(c.pods.begin(), c.pods.end(),
                   [](const auto& a, const auto& b) { return a.signal < b.signal; });
  double exponent = 0;
  for (const PodCoverage& p : c.pods) {
    exponent += p.fresh_rate * seconds_of(p.race_window());
    c.race_windows += p.race_window();
  }
  c.race_miss = std::exp(-exponent);
  c.summary = summary_of(c);
  return c;
}

}  // namespace zerodrop::diagnose
