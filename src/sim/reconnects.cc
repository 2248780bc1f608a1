// The traffic accountant's keep-alive reconnect model (docs/sim.md, "Keep-alive reconnects").
#include <algorithm>
#include <cmath>

#include "sim/accountant.h"

namespace zerodrop::sim {

using record::Hole;
using record::Outcome;

// Clients whose connections broke reconnect through the router, which picks among its view; a
// pick of a refusing pod fails and the next request tries again. The unpinned share of the
// router's traffic shrinks by (1 - f) per request and connection (f: the refusing fraction of
// the view); what re-pins spreads over the live endpoints, so an old pod that breaks later
// carries more than 1/n. While every endpoint of the view refuses, every request fails.
void Accountant::reconnects() {
  std::sort(breaks_.begin(), breaks_.end(),
            [](const Break& a, const Break& b) { return a.t < b.t; });
  credit_.assign(1, {0.0, 0.0});
  double unpinned = 0, credit = 0, t = 0;
  double initial = 1.0 / std::max(1, control_.initial_ready);
  // Piece by piece until every broken connection has re-pinned (or the run ends): the last
  // break's clients keep failing while every endpoint of the view refuses.
  size_t b = 0;
  while (true) {
    if (unpinned < 1e-12) {
      if (b == breaks_.size()) {
        break;
      }
      t = breaks_[b].t;  // nothing to account until the next break
    }
    while (b < breaks_.size() && breaks_[b].t <= t) {
      const Break& k = breaks_[b++];
      unpinned += k.kept * (initial + credit_at(k.live_until));
    }
    // The next moment the view or the refusing set changes, or the next break.
    double next = b < breaks_.size() ? breaks_[b].t : end_;
    auto after = [&](const std::vector<double>& v) {
      auto it = std::upper_bound(v.begin(), v.end(), t);
      return it == v.end() ? kNever : *it;
    };
    next = std::min({next, after(applied_), after(refuse_starts_), after(refuse_ends_), end_});
    if (next <= t) {
      break;  // the run's end
    }
    reconnect_piece(t, next, unpinned, credit);
    credit_.emplace_back(next, credit);
    t = next;
  }
}

// The share of the router's traffic re-pinned onto each live endpoint by `t` (a step function).
double Accountant::credit_at(double t) const {
  auto it = std::upper_bound(credit_.begin(), credit_.end(), t,
                             [](double v, const auto& c) { return v < c.first; });
  return it == credit_.begin() ? 0 : std::prev(it)->second;
}

// The integral over [from, to) of the share re-pinned onto an endpoint that joined at `from`.
double Accountant::credit_integral(double from, double to) const {
  double base = credit_at(from), sum = 0, t = from;
  auto it = std::upper_bound(credit_.begin(), credit_.end(), from,
                             [](double v, const auto& c) { return v < c.first; });
  for (; it != credit_.end() && it->first < to; ++it) {
    sum += (it->first - t) * (credit_at(t) - base);
    t = it->first;
  }
  return sum + (to - t) * (credit_at(t) - base);
}

void Accountant::reconnect_piece(double from, double to, double& unpinned, double& credit) {
  int n = view(from);
  int bad = std::min(n, refusing(from));
  if (n == 0) {
    return;  // no endpoint at all: capacity-dip
  }
  double f = static_cast<double>(bad) / n;
  double per_connection = (to - from) * std::max(o_.connection_rate, 1e-9);
  double connections = unpinned * rate_r_ / std::max(o_.connection_rate, 1e-9);
  double failed = 0, repinned = 0;
  if (f >= 1) {
    failed = connections * per_connection;
  } else {
    double stay = std::pow(f, per_connection);
    failed = connections * f * (1 - stay) / (1 - f);
    repinned = unpinned * (1 - stay);
  }
  out_.tally.add_window(from, to, failed / (to - from), Hole::deregistration_race,
                        Outcome::connect_refused);
  unpinned -= repinned;
  credit += n > bad ? repinned / (n - bad) : 0;
}

}  // namespace zerodrop::sim
