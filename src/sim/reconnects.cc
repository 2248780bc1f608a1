// The traffic accountant's keep-alive reconnect model (docs/sim.md, "Keep-alive reconnects"),
// and the router-independent orders its passes walk.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/accountant.h"

namespace zerodrop::sim {

using record::Hole;
using record::Outcome;

namespace {

// A walk over a sorted vector as the time advances: count() values are <= the last seek.
class Cursor {
public:
  explicit Cursor(const std::vector<double>& values) : v_(values) {}

  void seek(double t) {
    while (i_ < v_.size() && v_[i_] <= t) {
      ++i_;
    }
  }

  size_t count() const { return i_; }

  double next() const { return i_ < v_.size() ? v_[i_] : kNever; }

private:
  const std::vector<double>& v_;
  size_t i_ = 0;
};

}  // namespace

// Which write stops a router choosing each old pod, when its connections break, and the old pods
// in the orders the passes need them: the same for every router, so computed once.
void Accountant::prepare_orders() {
  const std::vector<PodTimeline>& pods = control_.pods;
  stop_write_.assign(pods.size(), -1);
  broken_at_.assign(pods.size(), kNever);
  breaks_.assign(pods.size(), {});
  log_count_.resize(pods.size() + 1);
  for (size_t k = 0; k < log_count_.size(); ++k) {
    log_count_[k] = std::log(static_cast<double>(k));
  }
  cuts_.assign(pods.size(), {});
  const Distribution& d = o_.request_duration;
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodTimeline& p = pods[i];
    bool killed = p.kill != kNever || p.liveness_kill != kNever;
    double cut = killed || exits_without_drain() || p.proxy_exit != kNever ? p.exit : kNever;
    if (cut != kNever) {
      cuts_[i] = {cut, d.excess(cut - p.drain_start), d.excess(cut - p.term)};
    }
  }
  bool keepalive = l4_ && o_.keepalive == Keepalive::on;
  bool exits_at_once = o_.app == App::naive || o_.app == App::linger;
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodTimeline& p = pods[i];
    if (!p.old) {
      continue;
    }
    if (p.term_write >= 0) {
      // kube-proxy keeps a serving-terminating endpoint while no endpoint is ready (KEP-1669):
      // it stops at the first write after which some endpoint is ready, or at the removal.
      size_t w = static_cast<size_t>(p.term_write);
      while (l4_ && control_.writes[w].ready_after == 0 && static_cast<int>(w) != p.remove_write
             && w + 1 < control_.writes.size()) {
        ++w;
      }
      stop_write_[i] = static_cast<int>(w);
    }
    by_refuse_.push_back(i);
    by_stop_write_.push_back(i);
    if (keepalive) {
      broken_at_[i] = sends_goaway()                  ? p.refuse_from  // GOAWAY: all at once
                      : o_.app == App::close_listener ? p.idle_closed
                      : exits_at_once                 ? p.exit
                                                      : p.kill;
      if (p.liveness_kill != kNever || p.proxy_exit != kNever) {
        broken_at_[i] = std::min(broken_at_[i], p.exit);  // killed, or its proxy gone
      }
      if (p.deletion < end_ && broken_at_[i] < end_) {
        by_break_.push_back(i);
      }
    }
  }
  auto by = [](const auto& key) {
    return [&key](size_t a, size_t b) {
      return key(a) < key(b);
    };
  };
  auto refuse = [&](size_t i) {
    return pods[i].refuse_from;
  };
  auto stop = [&](size_t i) {
    return stop_write_[i] < 0 ? std::numeric_limits<int>::max() : stop_write_[i];
  };
  auto broken = [&](size_t i) {
    return broken_at_[i];
  };
  std::stable_sort(by_refuse_.begin(), by_refuse_.end(), by(refuse));
  std::stable_sort(by_stop_write_.begin(), by_stop_write_.end(), by(stop));
  std::stable_sort(by_break_.begin(), by_break_.end(), by(broken));
}

// The old pods router r still chooses after they stopped accepting, as two sorted lists of when
// that starts and ends. A router whose writes land in order (every one but a cloud LB's) stops
// choosing pods in the order of their stop writes, so both lists come out sorted from the
// orders prepare_orders() made.
void Accountant::build_refusing(int r) {
  refuse_starts_.clear();
  refuse_ends_.clear();
  for (size_t i : by_refuse_) {
    if (stop_of(r, i) > control_.pods[i].refuse_from) {
      refuse_starts_.push_back(control_.pods[i].refuse_from);
    }
  }
  for (size_t i : by_stop_write_) {
    double stop = stop_of(r, i);
    if (stop > control_.pods[i].refuse_from) {
      refuse_ends_.push_back(stop);
    }
  }
  if (direct_) {
    std::sort(refuse_ends_.begin(), refuse_ends_.end());
  }
}

int Accountant::refusing(double t) const {
  auto started = std::upper_bound(refuse_starts_.begin(), refuse_starts_.end(), t);
  auto ended = std::upper_bound(refuse_ends_.begin(), refuse_ends_.end(), t);
  return static_cast<int>((started - refuse_starts_.begin()) - (ended - refuse_ends_.begin()));
}

// Clients whose connections broke reconnect through the router, which picks among its view; a
// pick of a refusing pod fails and the next request tries again. The unpinned share of the
// router's traffic shrinks by (1 - f) per request and connection (f: the refusing fraction of
// the view); what re-pins spreads over the live endpoints, so an old pod that breaks later
// carries more than 1/n. While every endpoint of the view refuses, every request fails.
// Only L4 routers (in order) get here: the view is the one after the last write applied.
void Accountant::reconnects() {
  credit_.assign(1, {0.0, 0.0});
  double unpinned = 0, credit = 0, t = 0;
  double initial = 1.0 / std::max(1, control_.initial_ready);
  Cursor applied(applied_), starts(refuse_starts_), ends(refuse_ends_);
  // Piece by piece until every broken connection has re-pinned (or the run ends): the last
  // break's clients keep failing while every endpoint of the view refuses.
  size_t b = 0;
  while (true) {
    if (unpinned < 1e-12) {
      if (b == by_break_.size()) {
        break;
      }
      t = broken_at_[by_break_[b]];  // nothing to account until the next break
    }
    while (b < by_break_.size() && broken_at_[by_break_[b]] <= t) {
      const Break& k = breaks_[by_break_[b++]];
      unpinned += k.kept * (initial + credit_at(k.live_until));
    }
    applied.seek(t);
    starts.seek(t);
    ends.seek(t);
    // The next moment the view or the refusing set changes, or the next break.
    double next = b < by_break_.size() ? broken_at_[by_break_[b]] : end_;
    next = std::min({next, applied.next(), starts.next(), ends.next(), end_});
    if (next <= t) {
      break;  // the run's end
    }
    int n = applied.count() == 0 ? control_.initial_ready : view_after(applied.count() - 1);
    int bad = static_cast<int>(starts.count()) - static_cast<int>(ends.count());
    reconnect_piece(t, next, n, std::min(n, bad), unpinned, credit);
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

// One stretch [from, to) of constant view n with `bad` refusing pods in it.
void Accountant::reconnect_piece(double from, double to, int n, int bad, double& unpinned,
                                 double& credit) {
  if (n == 0) {
    return;  // no endpoint at all: capacity-dip
  }
  double f = static_cast<double>(bad) / n;
  double lc = std::max(o_.connection_rate, 1e-9);
  // A client tries to connect at each request (HTTP/1.1, HTTP/2), or a gRPC channel once per
  // backoff, failing every RPC of the backoff after a failed try.
  double tries = (to - from) * (grpc_ ? 1 / o_.grpc_backoff : lc);
  double cost = grpc_ ? lc * o_.grpc_backoff : 1;  // requests failed per failed try
  double connections = unpinned * rate_r_ / lc;
  double failed = 0, repinned = 0;
  if (f >= 1) {
    failed = connections * (to - from) * lc;  // every request fails
  } else if (bad == 0) {
    repinned = unpinned;  // the first pick is live
  } else {
    // f^tries, as exp(tries * ln f) over a table of logarithms: pow() was a seventh of a
    // 5,000-node run.
    double stay = std::exp(
        tries * (log_count_[static_cast<size_t>(bad)] - log_count_[static_cast<size_t>(n)]));
    failed = connections * f * (1 - stay) / (1 - f) * cost;
    repinned = unpinned * (1 - stay);
  }
  out_.tally.add_window(from, to, failed / (to - from), Hole::deregistration_race,
                        refused_outcome());
  unpinned -= repinned;
  credit += n > bad ? repinned / (n - bad) : 0;
}

}  // namespace zerodrop::sim
