#include "sim/traffic.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "base/duration.h"
#include "sim/accountant.h"

namespace zerodrop::sim {
namespace {

record::Micros micros(double seconds) {
  return record::Micros(static_cast<int64_t>(std::llround(seconds * 1e6)));
}

}  // namespace

using record::Hole;
using record::Outcome;

Accountant::Accountant(const Options& options, const ControlPlane& control, const Routers& routers,
                       double end)
    : o_(options),
      control_(control),
      routers_(routers),
      end_(end),
      l4_(is_kube_proxy(options.dataplane)),
      direct_(!routers.in_order()),
      h2_(l4_ && options.protocol != Protocol::http1),
      grpc_(l4_ && options.protocol == Protocol::grpc),
      out_{Tally(end, options.bucket), LatencyHistogram(), {}, {}, 0} {
  rate_r_ = o_.rate / routers.count();
  double lc = std::max(o_.connection_rate, 1e-9);
  // A multiplexed HTTP/2 connection is never idle: only its maximum age closes it.
  hazard_ = (o_.connection_max_age > 0 ? 1 / o_.connection_max_age : 0)
            + (h2_ ? 0 : lc * std::exp(-lc * o_.idle_timeout));
  if (l4_ && o_.keepalive == Keepalive::on) {
    new_fraction_ = std::min(1.0, hazard_ / lc);
  }
  sync_loss_ = o_.proxy_sync_loss.value_or(proxy_sync_loss_of(o_.dataplane));
  if (o_.dataplane == Dataplane::ipvs && o_.ipvs_conn_reuse_mode == 0) {
    route_lag_ = ipvs_reuse_lag(rate_r_ * new_fraction_);
  }
  out_.per_pod.assign(control.pods.size(), {});
  prepare_orders();
}

// naive and linger exit without draining; an HTTP/2 app's abrupt GOAWAY cancels its streams.
bool Accountant::exits_without_drain() const {
  return o_.app == App::naive || o_.app == App::linger || (h2_ && o_.goaway == Goaway::abrupt);
}

// An HTTP/2 app that drains sends GOAWAY when it stops accepting; naive and linger just close.
bool Accountant::sends_goaway() const {
  return h2_ && (o_.app == App::close_listener || o_.app == App::graceful);
}

Outcome Accountant::cut_outcome() const {
  if (!l4_) {
    return Outcome::http_502;
  }
  return grpc_ ? Outcome::grpc_unavailable
         : h2_ ? Outcome::stream_reset
               : Outcome::reset_before_response;
}

Outcome Accountant::refused_outcome() const {
  return !l4_ ? Outcome::http_502 : grpc_ ? Outcome::grpc_unavailable : Outcome::connect_refused;
}

// When each router applies each change on its own (the lab's model), its view is rebuilt from
// per-pod steps, since applied_ is then not in write order.
void Accountant::build_steps() {
  std::vector<std::tuple<double, int, int>> deltas;  // time, ready delta, serving-terminating
  auto at = [&](int write) {
    return applied_[static_cast<size_t>(write)];
  };
  for (const PodTimeline& p : control_.pods) {
    if (!p.old && p.ready_write >= 0) {
      deltas.emplace_back(at(p.ready_write), 1, 0);
    }
    if (p.term_write >= 0) {
      deltas.emplace_back(at(p.term_write), -1, 1);
    }
    if (p.remove_write >= 0) {
      deltas.emplace_back(at(p.remove_write), 0, -1);
    }
  }
  std::sort(deltas.begin(), deltas.end());
  steps_.clear();
  int ready = control_.initial_ready, serving_terminating = 0;
  for (const auto& [t, dr, dst] : deltas) {
    ready += dr;
    serving_terminating += dst;
    steps_.push_back({t, ready, serving_terminating});
  }
}

int Accountant::view(double t) const {
  if (direct_) {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), t,
                               [](double v, const Step& s) { return v < s.t; });
    if (it == steps_.begin()) {
      return control_.initial_ready;
    }
    --it;
    return it->ready > 0 || !l4_ ? it->ready : it->serving_terminating;
  }
  auto it = std::upper_bound(applied_.begin(), applied_.end(), t);
  long w = (it - applied_.begin()) - 1;
  return w < 0 ? control_.initial_ready : view_after(static_cast<size_t>(w));
}

int Accountant::view_after(size_t w) const {
  const SliceWrite& write = control_.writes[w];
  // kube-proxy falls back to serving-terminating endpoints when none is ready (KEP-1669).
  return write.ready_after > 0 || !l4_ ? write.ready_after : write.serving_terminating_after;
}

// A pod's share of the router's new connections is 1/view(t), and the view changes within a
// window (new pods join, other old pods leave): windows integrate it, with a running integral
// over the router's applied writes (in order).
void Accountant::build_inverse_view() {
  inverse_view_.assign(applied_.size(), 0.0);
  for (size_t w = 1; w < applied_.size() && applied_[w] != kNever; ++w) {
    int n = view_after(w - 1);
    inverse_view_[w] = inverse_view_[w - 1] + (n > 0 ? (applied_[w] - applied_[w - 1]) / n : 0);
  }
}

double Accountant::inverse_view_integral(double t) const {
  auto it = std::upper_bound(applied_.begin(), applied_.end(), t);
  return integral_after(static_cast<long>(it - applied_.begin()) - 1, t);
}

double Accountant::integral_after(long last, double t) const {
  if (last < 0) {
    return (t - (applied_.empty() ? t : applied_[0])) / std::max(1, control_.initial_ready);
  }
  size_t w = static_cast<size_t>(last);
  int n = view_after(w);
  return inverse_view_[w] + (n > 0 ? (t - applied_[w]) / n : 0);
}

// The last write each old pod's router had applied when the pod stopped accepting (-1: none),
// walking the pods in refusal order beside the sorted apply times: no search per pod.
void Accountant::build_refuse_writes() {
  refuse_write_.assign(control_.pods.size(), -1);
  size_t w = 0;
  for (size_t i : by_refuse_) {
    while (w < applied_.size() && applied_[w] <= control_.pods[i].refuse_from) {
      ++w;
    }
    refuse_write_[i] = static_cast<long>(w) - 1;
  }
}

// The mean of 1/view over [from, to): a pod's mean share of the router's new connections.
double Accountant::mean_share(double from, double to) const {
  to = std::min(to, end_);
  if (direct_ || to <= from) {
    return 1.0 / std::max(1, view(from));
  }
  return (inverse_view_integral(to) - inverse_view_integral(from)) / (to - from);
}

// mean_share(refuse_from, stop) of an old pod whose view at refuse_from is n: at a stop write
// (every router in order) the integral is the running one at that write, without a search.
double Accountant::stop_share(size_t index, double stop, int n) const {
  double from = control_.pods[index].refuse_from;
  int w = stop_write_[index];
  if (direct_ || w < 0 || stop > end_ || applied_[static_cast<size_t>(w)] != stop) {
    return mean_share(from, stop);
  }
  double to_integral = inverse_view_[static_cast<size_t>(w)];
  return stop <= from ? 1.0 / n
                      : (to_integral - integral_after(refuse_write_[index], from)) / (stop - from);
}

double Accountant::stop_of(int r, size_t index) const {
  int w = stop_write_[index];
  double stop = w < 0 ? kNever : applied_[static_cast<size_t>(w)];
  if (o_.dataplane != Dataplane::cloud_lb) {
    return stop;  // only a cloud LB's health checks also stop it
  }
  return std::min(stop, routers_.unhealthy_at(r, control_.pods[index].refuse_from));
}

// The share of the router's traffic on connections pinned to the pod (conntrack keeps a flow on
// the backend chosen at connect time): without keep-alive 1/n until the router stops choosing
// it; with it, the share of the connections opened before the rollout, decaying once the router
// stops choosing it as clients close connections; a graceful app's Connection: close moves each
// at its next request.
double Accountant::pinned(const PodTimeline& p, double stop, int n, double t) const {
  if (!l4_ || o_.keepalive == Keepalive::off) {
    return t < stop ? 1.0 / std::max(n, 1) : 0;
  }
  // Kept-alive connections were opened before the rollout, over the old pods alone.
  double share = 1.0 / std::max(1, control_.initial_ready);
  if (t > stop) {
    share *= std::exp(-hazard_ * (t - stop));
  }
  if (o_.app == App::graceful && !h2_ && t > p.term) {  // HTTP/1.1's Connection: close
    share *= std::exp(-o_.connection_rate * (t - p.term));
  }
  return share;
}

// nginx's proxy_next_upstream: the first pick is the refusing pod, each retry a different
// upstream; the request fails only if every try refuses (ingress-nginx's
// proxy-next-upstream-tries, default 3).
double Accountant::all_tries_fail(int n, int bad) const {
  int tries = o_.dataplane == Dataplane::ingress_nginx ? std::max(1, o_.profile.ingress.tries)
              : l4_                                    ? 1 + o_.client_retries
                                                       : 1;
  if (tries <= 1) {
    return 1;
  }
  if (l4_) {
    return std::pow(std::min(1.0, static_cast<double>(bad) / std::max(n, 1)), tries - 1);
  }
  double p = 1;
  for (int i = 1; i < tries && i < n; ++i) {
    p *= std::max(0.0, static_cast<double>(bad - i) / (n - i));
  }
  return p;
}

void Accountant::add_window(size_t pod, double from, double to, double per_second, Hole hole,
                            Outcome outcome) {
  double clipped = std::min(to, end_) - std::max(from, 0.0);
  if (clipped <= 0 || per_second <= 0) {
    return;
  }
  out_.tally.add_window(from, to, per_second, hole, outcome);
  out_.per_pod[pod][static_cast<size_t>(hole)] += per_second * clipped;
}

void Accountant::add_point(size_t pod, double t, double mean, Hole hole, Outcome outcome) {
  if (mean <= 0 || t >= end_) {
    return;
  }
  out_.tally.add_point(t, mean, hole, outcome);
  out_.per_pod[pod][static_cast<size_t>(hole)] += mean;
}

// Requests in flight when the process exits (naive, linger) or is killed. A request the client
// sent on a kept-alive connection after the router had dropped the pod is keepalive-stale (the
// lab's diagnosis: a reused connection, the router had removed the pod), the rest no-drain.
void Accountant::cut_in_flight(size_t index, double stop, int n) {
  const PodTimeline& p = control_.pods[index];
  const Cut& c = cuts_[index];
  bool retried = !l4_ && o_.idempotent && o_.dataplane == Dataplane::ingress_nginx
                 && o_.profile.ingress.tries > 1;
  if (c.at == kNever || retried) {
    return;
  }
  double cut = c.at;
  bool killed = p.kill != kNever || p.liveness_kill != kNever;
  // Requests accepted at the full share until the router stopped or the drain began, and on
  // kept-alive connections until the drain began, that are still running at the cut.
  const Distribution& d = o_.request_duration;
  double until = std::min(stop, p.drain_start);
  double kept_rate = rate_r_ * pinned(p, stop, n, p.drain_start);
  double after_until = until == p.drain_start ? c.after_drain : d.excess(cut - until);
  double mean = std::max(rate_r_ / n * after_until, kept_rate * c.after_drain);
  Outcome outcome = cut_outcome();
  if (killed) {
    Hole hole = p.liveness_kill != kNever ? Hole::liveness_kills_drain : Hole::grace_overrun;
    add_point(index, cut, mean, hole, outcome);
    return;
  }
  double stale = 0;
  double pinned_from = std::max(stop, p.term);
  if (l4_ && !h2_ && o_.keepalive == Keepalive::on && pinned_from < p.drain_start) {
    double after_pinned = pinned_from == p.term ? c.after_term : d.excess(cut - pinned_from);
    stale = kept_rate * (c.after_drain - after_pinned);
    stale = std::clamp(stale, 0.0, mean);
  }
  add_point(index, cut, stale, Hole::keepalive_stale, outcome);
  add_point(index, cut, mean - stale, Hole::no_drain, outcome);
}

void Accountant::old_pod(int r, size_t index) {
  const PodTimeline& p = control_.pods[index];
  double stop = stop_of(r, index);
  if (p.term_write >= 0 && applied_[static_cast<size_t>(p.term_write)] != kNever) {
    out_.propagation.add(from_seconds(applied_[static_cast<size_t>(p.term_write)] - p.deletion));
  }
  long at_refusal = direct_ ? -1 : refuse_write_[index];
  int n = std::max(1, direct_          ? view(p.refuse_from)
                      : at_refusal < 0 ? control_.initial_ready
                                       : view_after(static_cast<size_t>(at_refusal)));
  Outcome refused = refused_outcome();
  // New connections the router still sends after the pod stopped accepting.
  if (stop > p.refuse_from) {
    int bad = l4_ ? 1 : std::max(1, refusing(p.refuse_from));
    double share = stop_share(index, stop, n);
    double density = rate_r_ * new_fraction_ * share * all_tries_fail(n, bad);
    add_window(index, p.refuse_from, stop, density, Hole::deregistration_race, refused);
  }
  cut_in_flight(index, stop, n);
  // Keep-alive connections the server closes under the client (L4 only: an L7 router's upstream
  // pool is its own and retries).
  if (!l4_ || o_.keepalive == Keepalive::off) {
    return;
  }
  double broken = broken_at_[index];
  if (broken == kNever || broken >= end_) {
    return;
  }
  double share = pinned(p, stop, n, broken);
  double connections = rate_r_ * share / std::max(o_.connection_rate, 1e-9);
  // After a GOAWAY the client opens no stream on the connection: nothing is sent into the close.
  double stale = sends_goaway()                       ? 0
                 : o_.stale_check == StaleCheck::none ? connections
                                                      : rate_r_ * share * o_.stale_window;
  add_point(index, broken, stale, Hole::keepalive_stale,
            h2_ ? cut_outcome() : Outcome::closed_before_response);
  // Their clients reconnect through a router that may pick a refusing pod again (reconnects()).
  double live_until = std::min({p.refuse_from, stop, broken});
  breaks_[index] = {broken, live_until, share * std::max(1, control_.initial_ready)};
}

// Traffic a router sends a new pod after it applied its Ready, before the app can serve.
void Accountant::new_pod(size_t index) {
  const PodTimeline& p = control_.pods[index];
  if (p.ready_write < 0 || o_.dataplane == Dataplane::cloud_lb) {
    return;  // the LB's own health check keeps unready targets out
  }
  double from = applied_[static_cast<size_t>(p.ready_write)];
  if (p.serving_from <= from) {
    return;
  }
  double density = rate_r_ * mean_share(from, p.serving_from);
  if (l4_ && o_.keepalive == Keepalive::on) {
    // Kept-alive clients reach a new pod only by opening connections: the new-connection
    // fraction, and the clients of broken connections that re-pin onto it (reconnects()).
    double repinned = rate_r_ * credit_integral(from, p.serving_from);
    density = density * new_fraction_ + repinned / (p.serving_from - from);
  }
  add_window(index, from, p.serving_from, density, Hole::readiness_lies, Outcome::http_503);
}

// New connects lost by the router's proxy as it rewrites the Service's rules: each sync loses
// P x the router's connects per second on average (the measured window per sync, P seconds of
// connects; docs/dataplane-sync.md). nftables mode's lost SYN hits kube-proxy's
// cluster-ips-check and is refused; in iptables mode nothing rejects it and it times out. Only
// the syncs this rollout causes: other Services' churn makes more on a real node.
void Accountant::sync_losses() {
  double lost = rate_r_ * new_fraction_ * sync_loss_;  // per sync
  Outcome outcome =
      o_.dataplane == Dataplane::nftables ? Outcome::connect_refused : Outcome::connect_timeout;
  for (const auto& sync : syncs_) {
    out_.tally.add_point(sync.first, lost, Hole::proxy_sync_loss, outcome);
  }
}

// Stretches in which the router has no usable endpoint at all: everything fails.
void Accountant::no_endpoints() {
  Outcome outcome = l4_ ? Outcome::connect_refused : Outcome::http_503;
  if (direct_) {
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (view(steps_[i].t) == 0) {
        double to = i + 1 < steps_.size() ? steps_[i + 1].t : end_;
        out_.tally.add_window(steps_[i].t, to, rate_r_, Hole::capacity_dip, outcome);
      }
    }
    return;
  }
  for (size_t w = 0; w < applied_.size(); ++w) {
    if (view(applied_[w]) == 0) {
      double to = w + 1 < applied_.size() ? applied_[w + 1] : end_;
      out_.tally.add_window(applied_[w], to, rate_r_, Hole::capacity_dip, outcome);
    }
  }
}

void Accountant::sample_events(int r) {
  std::string name = routers_.name(r);
  auto emit = [&](const PodTimeline& p, int write, record::Conditions c, const char* what) {
    if (write < 0 || applied_[static_cast<size_t>(write)] >= end_) {
      return;
    }
    record::Event e;
    e.t = micros(applied_[static_cast<size_t>(write)]);
    e.kind = record::EventKind::router_applied;
    e.pod = p.name;
    e.router = name;
    e.conditions = c;
    e.detail = what;
    out_.router_events.push_back(std::move(e));
  };
  for (const PodTimeline& p : control_.pods) {
    emit(p, p.ready_write, {true, true, false}, "ready");
    emit(p, p.term_write, {false, true, true}, "terminating");
    emit(p, p.remove_write, {}, "removed");
  }
}

void Accountant::router(int r) {
  syncs_.clear();
  bool losses = l4_ && sync_loss_ > 0;
  routers_.apply_times(r, applied_, out_.events, losses ? &syncs_ : nullptr);
  if (losses) {
    sync_losses();
  }
  // IPVS, conn_reuse_mode 0: new connects follow the entries of a cycle ago, so the router stops
  // (and starts) routing to a pod a cycle after kube-proxy applied it: propagation, router events
  // and windows all read the later time.
  if (route_lag_ > 0) {
    for (double& t : applied_) {
      t += route_lag_;
    }
  }
  if (direct_) {
    build_steps();
  } else {
    build_inverse_view();
    build_refuse_writes();
  }
  bool keepalive = l4_ && o_.keepalive == Keepalive::on;
  if (o_.dataplane == Dataplane::ingress_nginx || keepalive) {
    build_refusing(r);
  }
  for (size_t i = 0; i < control_.pods.size(); ++i) {
    if (control_.pods[i].old && control_.pods[i].deletion < end_) {
      old_pod(r, i);
    }
  }
  if (keepalive) {
    reconnects();  // before new_pod(): what re-pins onto new pods
  }
  for (size_t i = 0; i < control_.pods.size(); ++i) {
    if (!control_.pods[i].old) {
      new_pod(i);
    }
  }
  no_endpoints();
  int step = std::max(1, routers_.count() / std::max(1, o_.sample_routers));
  if (o_.record_events && r % step == 0 && r / step < o_.sample_routers) {
    sample_events(r);
  }
}

Traffic Accountant::run() {
  for (int r = 0; r < routers_.count(); ++r) {
    router(r);
  }
  return std::move(out_);  // simulate() sorts every event of the record once
}

Traffic account_traffic(const Options& options, const ControlPlane& control, const Routers& routers,
                        double end) {
  Accountant accountant(options, control, routers, end);
  return accountant.run();
}

}  // namespace zerodrop::sim
