#include "sim/control_plane.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "base/duration.h"
#include "kube/kubelet.h"
#include "kube/rollout.h"
#include "kube/sidecar.h"
#include "sim/event_queue.h"

namespace zerodrop::sim {
namespace {

using record::EventKind;

record::Micros micros(double seconds) {
  return record::Micros(static_cast<int64_t>(std::llround(seconds * 1e6)));
}

// The conditions the endpoint controller wants for a pod (its truth), and what is committed.
struct EndpointState {
  bool present = false;
  record::Conditions conditions;
};

// Runs one rollout in virtual time. One object per run; see simulate_control_plane().
class Rollout {
public:
  Rollout(const Options& options, Random& random)
      : o_(options),
        cp_(options.profile.control),
        random_(random),
        api_(cp_.api_qps, cp_.api_burst) {}

  ControlPlane run();

private:
  void start_old_pods();
  void reconcile();
  std::vector<kube::PodView> views(double now) const;
  void schedule_reconcile(double time);
  void create_pod(double time);
  void delete_pod(size_t index, double time);
  void start_pod(size_t index);
  void terminate(size_t index);
  void exit_pod(size_t index, double time, bool killed);
  double liveness_kill_at(const PodTimeline& p);
  void change(size_t index, EndpointState state);
  void mark_dirty(size_t index);
  void sync_slices();
  void write_slice(int slice, const std::vector<size_t>& changed, double commit);
  int slice_for();
  void note(double time, EventKind kind, size_t pod, std::string detail = {});

  const Options& o_;
  const ControlPlaneModel& cp_;
  Random& random_;
  TokenBucket api_;
  EventQueue queue_;
  ControlPlane out_;
  std::vector<bool> deleted_;  // deletion requested (no longer counted by the Deployment)
  std::vector<EndpointState> want_, committed_;
  std::vector<int> slice_of_;
  std::vector<int> slice_size_;
  std::map<int, std::vector<size_t>> dirty_;
  bool sync_scheduled_ = false;
  double sync_free_ = 0;  // the service's sync worker is busy until then
  bool reconcile_scheduled_ = false;
  kube::RolloutLimits limits_;
  int new_count_ = 0;
  int ready_committed_ = 0, serving_terminating_committed_ = 0;
};

void Rollout::note(double time, EventKind kind, size_t pod, std::string detail) {
  if (!o_.record_events) {
    return;
  }
  record::Event e;
  e.t = micros(time);
  e.kind = kind;
  if (pod < out_.pods.size()) {
    e.pod = out_.pods[pod].name;
  }
  e.detail = std::move(detail);
  out_.record.push_back(std::move(e));
}

int Rollout::slice_for() {
  // Slices are filled, not rebalanced, as the EndpointSlice controller does: the first with room.
  for (size_t s = 0; s < slice_size_.size(); ++s) {
    if (slice_size_[s] < cp_.max_endpoints_per_slice) {
      ++slice_size_[s];
      return static_cast<int>(s);
    }
  }
  slice_size_.push_back(1);
  return static_cast<int>(slice_size_.size() - 1);
}

void Rollout::start_old_pods() {
  for (int i = 0; i < o_.replicas; ++i) {
    PodTimeline pod;
    pod.name = fmt::format("old-{}", i);
    pod.old = true;
    out_.pods.push_back(pod);
    deleted_.push_back(false);
    EndpointState ready{true, {true, true, false}};
    want_.push_back(ready);
    committed_.push_back(ready);
    slice_of_.push_back(slice_for());
  }
  out_.initial_ready = o_.replicas;
  ready_committed_ = o_.replicas;
}

void Rollout::schedule_reconcile(double time) {
  if (reconcile_scheduled_) {
    return;
  }
  reconcile_scheduled_ = true;
  queue_.at(time + cp_.controller_delay.sample(random_), [this] {
    reconcile_scheduled_ = false;
    reconcile();
  });
}

constexpr int kOldRevision = 1, kNewRevision = 2;

// What the Deployment controller sees at `now`: a pod's id is its index in out_.pods; a new pod
// is available minReadySeconds after it is Ready.
std::vector<kube::PodView> Rollout::views(double now) const {
  std::vector<kube::PodView> out;
  Duration min_ready = from_seconds(o_.min_ready);
  for (size_t i = 0; i < out_.pods.size(); ++i) {
    const PodTimeline& p = out_.pods[i];
    std::optional<Duration> ready_for;
    if (p.ready <= now) {
      ready_for = from_seconds(now - p.ready);
    }
    bool ready = p.old || ready_for.has_value();
    bool available =
        p.old ? !deleted_[i] : kube::available(ready, deleted_[i], ready_for, min_ready);
    out.push_back({i, p.old ? kOldRevision : kNewRevision, deleted_[i], available});
  }
  return out;
}

// One reconcile of the Deployment controller (kube::plan_rollout), its API calls rate-limited.
void Rollout::reconcile() {
  double now = queue_.now();
  std::vector<kube::PodView> pods = views(now);
  kube::RolloutPlan plan = kube::plan_rollout(pods, kNewRevision, limits_);
  for (int i = 0; i < plan.create; ++i) {
    create_pod(api_.acquire(now));
  }
  for (size_t index : plan.remove) {
    delete_pod(index, api_.acquire(now));
  }
  if (kube::rollout_complete(pods, kNewRevision, o_.replicas) && out_.rollout_end == 0) {
    out_.rollout_end = now;
    note(now, EventKind::rollout_finished, out_.pods.size());
  }
}

void Rollout::create_pod(double time) {
  PodTimeline pod;
  pod.name = fmt::format("new-{}", new_count_++);
  pod.created = time;
  pod.started = pod.serving_from = pod.ready = kNever;
  out_.pods.push_back(pod);
  deleted_.push_back(false);
  want_.push_back({});
  committed_.push_back({});
  slice_of_.push_back(-1);
  size_t index = out_.pods.size() - 1;
  note(time, EventKind::pod_created, index);
  note(time, EventKind::rollout_step, index, "scale up new replica set");
  queue_.at(time, [this, index] { start_pod(index); });
}

void Rollout::start_pod(size_t index) {
  PodTimeline& p = out_.pods[index];
  p.started = p.created + cp_.pod_start.sample(random_);
  double listening = cp_.listen_delay.sample(random_);
  p.serving_from = p.started + listening + o_.warmup.sample(random_);
  // A tcpSocket probe passes once the port listens; an honest httpGet probe once it serves.
  double truth = o_.readiness == Readiness::lies ? listening : p.serving_from - p.started;
  double period = std::max(o_.readiness_period, 1e-3);
  p.ready = p.started + std::ceil(truth / period - 1e-9) * period;
  queue_.at(p.started, [this, index] {
    note(queue_.now(), EventKind::pod_started, index);
    change(index, {true, {false, false, false}});
  });
  queue_.at(p.ready, [this, index] {
    note(queue_.now(), EventKind::pod_ready, index);
    change(index, {true, {true, true, false}});
    schedule_reconcile(queue_.now());
    if (o_.min_ready > 0) {  // the controller requeues the Deployment when it becomes available
      queue_.at(queue_.now() + o_.min_ready, [this] { schedule_reconcile(queue_.now()); });
    }
  });
}

void Rollout::delete_pod(size_t index, double time) {
  deleted_[index] = true;
  out_.pods[index].deletion = time;
  note(time, EventKind::rollout_step, index, "scale down old replica set");
  queue_.at(time, [this, index] { terminate(index); });
}

// Both clocks start: the endpoint controller marks the pod terminating while the kubelet runs
// preStop, then the stop signal, then SIGKILL (kube/kubelet.h).
void Rollout::terminate(size_t index) {
  PodTimeline& p = out_.pods[index];
  note(p.deletion, EventKind::deletion_started, index, fmt::format("grace {}s", o_.grace));
  change(index, {true, {false, true, true}});
  schedule_reconcile(p.deletion);
  double kubelet = p.deletion + cp_.kubelet_delay.sample(random_);
  kube::StopTimes st = kube::stop_times(from_seconds(o_.grace), from_seconds(o_.prestop));
  p.term = kubelet + to_seconds(st.term);
  double kill = kubelet + to_seconds(st.kill);
  if (st.prestop_runs) {
    note(kubelet, EventKind::prestop_started, index, fmt::format("sleep {}s", o_.prestop));
    note(p.term, EventKind::prestop_finished, index, st.prestop_cut ? "cut by grace period" : "");
  }
  note(p.term, EventKind::signal_sent, index, "TERM");
  double drain = o_.drain.sample(random_);
  switch (o_.app) {
    case App::naive:
      p.refuse_from = p.drain_start = p.term;
      break;
    case App::close_listener:
      p.refuse_from = p.idle_closed = p.drain_start = p.term;
      break;
    case App::graceful:
      p.refuse_from = p.drain_start = p.term + o_.graceful_delay;
      break;
    case App::linger:
      p.refuse_from = p.drain_start = p.term + o_.linger;
      break;
  }
  // naive and linger exit without draining; an HTTP/2 app's abrupt GOAWAY cancels its streams.
  bool abrupt = o_.protocol != Protocol::http1 && o_.goaway == Goaway::abrupt;
  bool drains = (o_.app == App::close_listener || o_.app == App::graceful) && !abrupt;
  double done = drains ? p.drain_start + drain : p.drain_start;
  p.refuse_from = std::min(p.refuse_from, kill);
  p.drain_start = std::min(p.drain_start, kill);
  bool killed = done > kill;
  double live = liveness_kill_at(p);
  double app_exit = std::min({done, kill, live});
  Duration proxy_at =
      kube::sidecar_exit(o_.sidecar, from_seconds(app_exit - kubelet), from_seconds(o_.grace));
  double proxy = proxy_at == Duration::max() ? kNever : kubelet + to_seconds(proxy_at);
  if (proxy < app_exit) {
    // The proxy stopped forwarding under the app: for the traffic, the pod ends there (connects
    // refused, requests in flight and idle connections cut).
    p.proxy_exit = proxy;
    p.refuse_from = std::min(p.refuse_from, proxy);
    p.drain_start = std::min(p.drain_start, proxy);
    p.idle_closed = std::min(p.idle_closed, proxy);
    note(proxy, EventKind::signal_sent, index, "sidecar proxy exited before the app");
    exit_pod(index, proxy, false);
    return;
  }
  if (live < std::min(done, kill)) {
    p.liveness_kill = live;
    note(live, EventKind::liveness_restart, index, "liveness probe failed during shutdown");
    exit_pod(index, live, false);
    return;
  }
  exit_pod(index, killed ? kill : done, killed);
}

// When a liveness probe that keeps running through the shutdown kills the pod: it fails from the
// moment the app stops answering (refuse_from), at the probe's next tick (a per-pod phase), and
// the kill follows kube::liveness_kill_window later. kNever when the kubelet stops probing.
double Rollout::liveness_kill_at(const PodTimeline& p) {
  if (!o_.liveness || o_.liveness_at_shutdown != LivenessAtShutdown::probes
      || p.refuse_from == kNever) {
    return kNever;
  }
  const LivenessProbe& probe = *o_.liveness;
  double phase = random_.uniform() * probe.period;
  double first = phase + std::ceil((p.refuse_from - phase) / probe.period) * probe.period;
  Duration window = kube::liveness_kill_window(from_seconds(probe.period), probe.failures,
                                               from_seconds(probe.timeout));
  return first + to_seconds(window);
}

void Rollout::exit_pod(size_t index, double time, bool killed) {
  PodTimeline& p = out_.pods[index];
  p.exit = time;
  if (killed) {
    p.kill = time;
    note(time, EventKind::signal_sent, index, "KILL");
  }
  if (o_.record_events) {
    record::Event e;
    e.t = micros(time);
    e.kind = EventKind::pod_exited;
    e.pod = p.name;
    if (killed || p.liveness_kill == time) {
      e.signal = SIGKILL;
    } else if (o_.app == App::naive) {
      e.signal = SIGTERM;
    } else {
      e.exit_code = 0;
    }
    out_.record.push_back(e);
  }
  // The kubelet deletes the Pod object once its containers are gone; then it leaves the slice.
  queue_.at(time, [this, index] { change(index, {false, {}}); });
}

void Rollout::change(size_t index, EndpointState state) {
  want_[index] = state;
  queue_.at(queue_.now() + cp_.informer_delay.sample(random_),
            [this, index] { mark_dirty(index); });
}

void Rollout::mark_dirty(size_t index) {
  if (slice_of_[index] < 0) {
    slice_of_[index] = slice_for();
  }
  auto& list = dirty_[slice_of_[index]];
  if (std::find(list.begin(), list.end(), index) == list.end()) {
    list.push_back(index);
  }
  if (!sync_scheduled_) {
    sync_scheduled_ = true;
    double at = std::max(queue_.now() + cp_.batch_period, sync_free_);
    queue_.at(at, [this] { sync_slices(); });
  }
}

// One syncService: every dirty slice is written, each write waiting for an API token.
void Rollout::sync_slices() {
  sync_scheduled_ = false;
  auto dirty = std::move(dirty_);
  dirty_.clear();
  double commit = queue_.now();
  for (auto& [slice, changed] : dirty) {
    double granted = api_.acquire(queue_.now());
    commit = std::max(commit, granted + cp_.api_write.sample(random_));
    write_slice(slice, changed, commit);
  }
  sync_free_ = commit;
  if (!dirty_.empty() && !sync_scheduled_) {
    sync_scheduled_ = true;
    queue_.at(sync_free_, [this] { sync_slices(); });
  }
}

void Rollout::write_slice(int slice, const std::vector<size_t>& changed, double commit) {
  int w = static_cast<int>(out_.writes.size());
  for (size_t index : changed) {
    EndpointState before = committed_[index], after = want_[index];
    auto counts = [](const EndpointState& s, int& ready, int& st) {
      ready += s.present && s.conditions.ready ? 1 : 0;
      st += s.present && s.conditions.serving && s.conditions.terminating ? 1 : 0;
    };
    int dr = 0, dst = 0, ur = 0, ust = 0;
    counts(before, dr, dst);
    counts(after, ur, ust);
    ready_committed_ += ur - dr;
    serving_terminating_committed_ += ust - dst;
    committed_[index] = after;
    PodTimeline& p = out_.pods[index];
    if (after.present && after.conditions.ready && p.ready_write < 0 && !p.old) {
      p.ready_write = w;
    }
    if (after.conditions.terminating || (!after.present && p.term_write < 0)) {
      p.term_write = p.term_write < 0 ? w : p.term_write;
    }
    if (!after.present) {
      p.remove_write = w;
      --slice_size_[slice];
    }
    if (o_.record_events) {
      record::Event e;
      e.t = micros(commit);
      e.kind = EventKind::endpoint_changed;
      e.pod = p.name;
      e.conditions = after.conditions;
      e.detail = after.present ? fmt::format("slice {}", slice) : "removed";
      out_.record.push_back(e);
    }
  }
  out_.writes.push_back({commit, slice, slice_size_[slice], static_cast<int>(changed.size()),
                         ready_committed_, serving_terminating_committed_});
}

ControlPlane Rollout::run() {
  limits_ = kube::resolve_limits(o_.max_surge, o_.max_unavailable, o_.replicas);
  start_old_pods();
  out_.rollout_start = o_.lead;
  note(o_.lead, EventKind::rollout_started, out_.pods.size(), "restart");
  queue_.at(o_.lead, [this] { reconcile(); });
  out_.events = queue_.run();
  std::sort(out_.record.begin(), out_.record.end(),
            [](const record::Event& a, const record::Event& b) { return a.t < b.t; });
  return std::move(out_);
}

}  // namespace

ControlPlane simulate_control_plane(const Options& options, Random& random) {
  Rollout rollout(options, random);
  return rollout.run();
}

}  // namespace zerodrop::sim
