#pragma once

// Internal to the traffic model (traffic.cc, reconnects.cc): see account_traffic().

#include <utility>
#include <vector>

#include "sim/traffic.h"

namespace zerodrop::sim {

// One pass per router over every pod. Rates are per second; `share` is the fraction of the
// router's traffic that goes to one pod.
class Accountant {
public:
  Accountant(const Options& options, const ControlPlane& control, const Routers& routers,
             double end);
  Traffic run();

private:
  void router(int r);
  void old_pod(int r, size_t index);
  void cut_in_flight(size_t index, double stop, int n);
  void new_pod(size_t index);
  void no_endpoints();
  void sync_losses();
  void prepare_orders();
  void reconnects();
  void reconnect_piece(double from, double to, int n, int bad, double& unpinned, double& credit);
  double credit_at(double t) const;
  double credit_integral(double from, double to) const;
  void sample_events(int r);
  void build_refusing(int r);
  void build_steps();
  int view(double t) const;
  int view_after(size_t write) const;
  void build_inverse_view();
  double inverse_view_integral(double t) const;
  double integral_after(long last, double t) const;  // last: the last write applied by t, or -1
  void build_refuse_writes();
  double mean_share(double from, double to) const;
  double stop_share(size_t index, double stop, int n) const;
  int refusing(double t) const;
  double stop_of(int r, size_t index) const;
  double pinned(const PodTimeline& p, double stop, int n, double t) const;
  double all_tries_fail(int n, int bad) const;
  void add_window(size_t pod, double from, double to, double per_second, record::Hole hole,
                  record::Outcome outcome);
  void add_point(size_t pod, double t, double mean, record::Hole hole, record::Outcome outcome);

  const Options& o_;
  const ControlPlane& control_;
  const Routers& routers_;
  double end_;
  bool l4_;
  bool direct_;  // every change lands on its own (the lab's model, a cloud LB)
  bool h2_;      // HTTP/2 or gRPC clients through kube-proxy: connections pinned until GOAWAY
  bool grpc_;    // ... reconnecting with gRPC's backoff
  bool exits_without_drain() const;
  bool sends_goaway() const;
  record::Outcome cut_outcome() const;
  record::Outcome refused_outcome() const;

  struct Step {
    double t;
    int ready;
    int serving_terminating;
  };

  std::vector<Step> steps_;
  double rate_r_ = 0;        // requests per second through one router
  double new_fraction_ = 1;  // requests that open a new connection (L4 keep-alive)
  double hazard_ = 0;        // per-connection rate of closing (max age, idle timeout)
  double route_lag_ = 0;     // IPVS conn_reuse_mode 0: new connects routed as a port cycle ago
  double sync_loss_ = 0;     // connects lost per sync, per connect per second (proxy-sync-loss)
  std::vector<double> applied_;
  std::vector<std::pair<double, double>> syncs_;  // this router's proxy syncs (start, end)
  std::vector<double> inverse_view_;  // [w]: the integral of 1/view(t) from applied_[0] to it
  std::vector<long> refuse_write_;    // [old pod]: its router's last write applied at its refusal
  std::vector<double> refuse_starts_, refuse_ends_;  // sorted: refusing(t) = starts - ends <= t

  // What is the same for every router, computed once (prepare_orders): a router pass sorts
  // nothing, so its cost stays linear in the pods (bench/sim_scale.sh).
  std::vector<int> stop_write_;        // [pod]: the write after which routers stop choosing it
  std::vector<double> broken_at_;      // [pod]: its kept-alive connections break (L4), or kNever
  std::vector<size_t> by_refuse_;      // old pods by refuse_from
  std::vector<size_t> by_stop_write_;  // old pods by stop_write_ (none last)
  std::vector<size_t> by_break_;       // old pods whose connections break in the run, by then

  // [pod]: when its requests in flight are cut (exit without a drain, or a kill; kNever: never)
  // and the request duration's excess over the time from its drain start and its TERM to then.
  struct Cut {
    double at = kNever;
    double after_drain = 0;
    double after_term = 0;
  };

  std::vector<Cut> cuts_;
  std::vector<double> log_count_;  // [k]: ln k, for k up to the pod count (views, refusals)

  // L4 keep-alive: an old pod's pinned connections break; their clients reconnect.
  struct Break {
    double t;
    double live_until;  // the pod took new connections until then (its share grew meanwhile)
    double kept;        // the share of its connections still pinned at the break, per 1/n
  };

  std::vector<Break> breaks_;  // [pod], set by old_pod() for the pods of by_break_
  std::vector<std::pair<double, double>> credit_;  // (time, re-pinned share per live endpoint)
  Traffic out_;
};

}  // namespace zerodrop::sim
