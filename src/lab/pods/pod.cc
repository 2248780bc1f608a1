// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pods/pod.h"

#include <unistd.h>

#include <algorithm>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/process_events.h"
#include "base/subprocess.h"
#include "base/timer.h"
#include "lab/pods/container_runtime.h"
#include "lab/pods/pod_container.h"
#include "lab/pods/probe.h"
#include "lab/pods/process_watch.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

namespace asio = boost::asio;
using record::EventKind;

struct Pod::Impl {
  Impl(asio::io_context& io_context, Recorder& r, const PodSpec& s, std::string n, std::string a,
       int rev, std::function<void()> changed)
      : io(io_context),
        rec(r),
        spec(s),
        name(std::move(n)),
        ip(std::move(a)),
        revision(rev),
        on_change(std::move(changed)),
        hook_deadline(io),
        kill_timer(io),
        restart_timer(io),
        sleep_timer(io),
        backoff(s.restart_backoff) {
    if (spec.container) {
      container = std::make_unique<PodContainer>(io, rec, spec, name, rec.pod_log(name));
    }
    target.ip = ip;
    target.port = spec.port;
    target.env = spec.env;
    target.env.insert(target.env.end(),
                      {{"PORT", std::to_string(spec.port)}, {"POD_IP", ip}, {"POD_NAME", name}});
    target.log_path = rec.pod_log(name);
  }

  void spawn();
  void signal(int signal);
  std::optional<std::string> dropped(int signal);
  void arm_watch();
  void start_probes();
  void set_ready(bool value);
  void begin_stop();
  void run_hook();
  void hook_done(bool ok, const std::string& why);
  void send_stop(Duration prestop_spent);
  void on_exit(const ExitStatus& status);
  void cancel_termination();

  void changed() {
    if (on_change) {
      on_change();
    }
  }

  asio::io_context& io;
  Recorder& rec;
  PodSpec spec;
  std::string name;
  std::string ip;
  int revision;
  std::function<void()> on_change;
  CheckTarget target;
  std::optional<Subprocess> process;
  std::unique_ptr<asio::posix::stream_descriptor> watch;
  std::unique_ptr<Prober> readiness;
  std::unique_ptr<Prober> liveness;
  bool ready = false;
  std::optional<record::Micros> ready_since;
  bool terminating = false;  // the deletion timestamp is set
  bool gone = false;
  bool stopping = false;  // a stop sequence (deletion or liveness kill) is under way
  bool stop_signal_sent = false;
  Clock::time_point stop_started;
  // Kubelet's timers, in virtual time when a test installs VirtualTime on the io_context.
  Timer hook_deadline;
  Timer kill_timer;
  Timer restart_timer;
  Timer sleep_timer;
  std::shared_ptr<Check> hook;
  Duration backoff;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  std::unique_ptr<PodContainer> container;  // a pod of an image
};

// Sends `signal` to the pod's PID 1: through the runtime for a container, as kubelet does.
void Pod::Impl::signal(int signal) {
  if (container) {
    container->signal(signal);
  } else {
    process->send_signal(signal);
  }
}

std::optional<std::string> Pod::Impl::dropped(int signal) {
  return container ? container->dropped(signal)
                   : dropped_by_kernel(process->pid(), process->isolation(), signal);
}

void Pod::Impl::spawn() {
  std::vector<std::string> argv = expand_template(spec.command, ip, spec.port, name);
  if (container) {
    process = Subprocess::spawn(container->start(argv, target));
    rec.pod_event(EventKind::pod_started, name,
                  fmt::format("container {} of {} ({} client pid {})", container->name(),
                              spec.container->image, to_string(spec.container->runtime->kind()),
                              process->pid()));
  } else {
    process =
        Subprocess::spawn({argv, target.env, target.log_path, target.log_path, spec.isolation});
    if (spec.processes != nullptr) {
      spec.processes->add(process->pid(), name);
    }
    rec.pod_event(EventKind::pod_started, name, fmt::format("pid {}", process->pid()));
  }
  watch = std::make_unique<asio::posix::stream_descriptor>(io, ::dup(process->status_fd()));
  arm_watch();
  start_probes();
}

void Pod::Impl::arm_watch() {
  watch->async_wait(asio::posix::descriptor_base::wait_read,
                    [this, alive = alive](boost::system::error_code ec) {
                      if (ec || !*alive || !process) {
                        return;
                      }
                      if (std::optional<ExitStatus> status = process->try_wait()) {
                        on_exit(*status);
                      } else {
                        arm_watch();
                      }
                    });
}

void Pod::Impl::start_probes() {
  auto failed = [this](const char* probe) {
    return [this, probe](const std::string& why) {
      rec.pod_event(EventKind::probe_failed, name, fmt::format("{}: {}", probe, why));
    };
  };
  readiness = std::make_unique<Prober>(io, spec.readiness, target, false, failed("readiness"),
                                       [this](bool healthy) { set_ready(healthy); });
  liveness = std::make_unique<Prober>(io, spec.liveness, target, true, failed("liveness"),
                                      [this](bool healthy) {
                                        if (healthy || stopping || terminating) {
                                          return;
                                        }
                                        rec.pod_event(EventKind::liveness_restart, name,
                                                      "liveness probe failed; killing the "
                                                      "container to restart it");
                                        begin_stop();
                                      });
  readiness->start();
  if (!terminating) {
    liveness->start();  // kubelet stops liveness probing once the pod is deleted
  }
  if (spec.readiness.kind == ProbeSpec::Kind::none) {
    set_ready(true);  // without a readiness probe a running container is Ready
  }
}

void Pod::Impl::set_ready(bool value) {
  if (ready == value) {
    return;
  }
  ready = value;
  if (value) {
    ready_since = rec.now();
    if (container) {
      container->find_pid();
    }
  }
  rec.pod_event(value ? EventKind::pod_ready : EventKind::pod_unready, name);
  changed();
}

void Pod::Impl::begin_stop() {
  stopping = true;
  stop_signal_sent = false;
  stop_started = Timer::now(io);
  if (liveness) {
    liveness->stop();
  }
  if (kube::runs_prestop(spec.grace) && spec.prestop.kind != HookSpec::Kind::none) {
    run_hook();
  } else {
    send_stop(Duration(0));
  }
}

void Pod::Impl::run_hook() {
  rec.pod_event(EventKind::prestop_started, name, spec.prestop.describe());
  hook_deadline.expires_after(spec.grace);
  hook_deadline.async_wait([this, alive = alive](boost::system::error_code ec) {
    if (ec || !*alive || stop_signal_sent) {
      return;
    }
    // kubelet abandons the hook (it dies with the container) and stops the container.
    rec.pod_event(EventKind::prestop_failed, name,
                  fmt::format("preStop not completed within the grace period ({})",
                              format_duration(spec.grace)));
    sleep_timer.cancel();
    send_stop(spec.grace);
  });
  auto done = [this, alive = alive](bool ok, std::string why) {
    if (*alive) {
      hook_done(ok, why);
    }
  };
  if (spec.prestop.kind == HookSpec::Kind::sleep) {
    sleep_timer.expires_after(spec.prestop.sleep);
    sleep_timer.async_wait([done](boost::system::error_code ec) {
      if (!ec) {
        done(true, "");
      }
    });
    return;
  }
  ProbeSpec action;
  action.kind =
      spec.prestop.kind == HookSpec::Kind::exec ? ProbeSpec::Kind::exec : ProbeSpec::Kind::http;
  action.command = spec.prestop.command;
  action.path = spec.prestop.path;
  // The grace deadline above bounds the hook; the check's own timeout only backs it up.
  hook = Check::start(io, action, target, spec.grace + std::chrono::seconds(1), done);
}

void Pod::Impl::hook_done(bool ok, const std::string& why) {
  if (stop_signal_sent) {
    return;
  }
  hook_deadline.cancel();
  rec.pod_event(ok ? EventKind::prestop_finished : EventKind::prestop_failed, name, why);
  send_stop(Timer::now(io) - stop_started);
}

void Pod::Impl::send_stop(Duration prestop_spent) {
  stop_signal_sent = true;
  if (!process) {
    return;
  }
  record::Event e;
  e.kind = EventKind::signal_sent;
  e.pod = name;
  e.signal = spec.stop_signal;
  e.detail = "stop signal SIG" + signal_name(spec.stop_signal);
  rec.event(e);
  std::optional<std::string> dropped = this->dropped(spec.stop_signal);
  signal(spec.stop_signal);
  if (dropped) {
    record::Event ignored = e;
    ignored.kind = EventKind::signal_ignored;
    ignored.detail = *dropped;
    rec.event(ignored);
  }
  Duration delay = kube::kill_delay(spec.grace, prestop_spent, spec.minimum_stop_grace);
  kill_timer.expires_after(delay);
  kill_timer.async_wait([this, alive = alive, delay](boost::system::error_code ec) {
    if (ec || !*alive || !process) {
      return;
    }
    record::Event kill;
    kill.kind = EventKind::signal_sent;
    kill.pod = name;
    kill.signal = SIGKILL;
    kill.detail =
        fmt::format("grace period over: SIGKILL {} after the stop signal", format_duration(delay));
    rec.event(kill);
    signal(SIGKILL);
  });
}

void Pod::Impl::cancel_termination() {
  hook_deadline.cancel();
  kill_timer.cancel();
  sleep_timer.cancel();
  if (hook) {
    hook->cancel();  // an exec preStop still running dies with the container
    hook.reset();
  }
}

void Pod::Impl::on_exit(const ExitStatus& exit) {
  set_ready(false);  // kubelet: a container that is not running is not ready
  ExitStatus status = exit;
  if (container && status.exit_code > 128 && status.exit_code <= 128 + 64) {
    // The runtime's client reports a container killed by signal N as exit code 128 + N.
    status = ExitStatus{std::nullopt, *status.exit_code - 128};
  }
  record::Event e;
  e.kind = EventKind::pod_exited;
  e.pod = name;
  e.exit_code = status.exit_code;
  e.signal = status.signal;
  e.detail = status.describe();
  if (std::optional<Clock::time_point> died = container ? container->died_at() : std::nullopt) {
    rec.event_at(*died, e);  // when PID 1 died, not when the runtime's client returned
  } else {
    rec.event(e);
  }
  process.reset();
  watch.reset();
  readiness.reset();
  liveness.reset();
  cancel_termination();
  if (terminating) {
    gone = true;
    changed();
    return;
  }
  Duration delay = stopping ? Duration(0) : backoff;  // a liveness kill restarts at once
  if (!stopping) {
    backoff = std::min<Duration>(backoff * 2, std::chrono::seconds(10));
  }
  stopping = false;
  rec.pod_event(EventKind::note, name,
                fmt::format("container restarts in {}", format_duration(delay)));
  restart_timer.expires_after(delay);
  restart_timer.async_wait([this, alive = alive](boost::system::error_code ec) {
    if (ec || !*alive || terminating) {
      return;
    }
    try {
      spawn();
    } catch (const Error& err) {
      rec.pod_event(EventKind::note, name, fmt::format("restart failed: {}", err.what()));
    }
  });
}

Pod::Pod(asio::io_context& io, Recorder& recorder, const PodSpec& spec, std::string name,
         std::string ip, int revision, std::function<void()> on_change)
    : impl_(std::make_unique<Impl>(io, recorder, spec, std::move(name), std::move(ip), revision,
                                   std::move(on_change))) {}

Pod::~Pod() {
  *impl_->alive = false;
  impl_->on_change = nullptr;  // the owner is going away too
  if (impl_->process) {
    // The diagnosis tells this kill from a grace kill by its detail.
    kill_now(std::string(record::kEndOfRunKill));
  }
}

void Pod::start() {
  record::Event e;
  e.kind = EventKind::pod_created;
  e.pod = impl_->name;
  e.detail = fmt::format("{}:{} revision {}", impl_->ip, impl_->spec.port, impl_->revision);
  e.version = impl_->spec.version;
  impl_->rec.event(e);
  impl_->spawn();
}

void Pod::delete_pod() {
  Impl& p = *impl_;
  if (p.terminating || p.gone) {
    return;
  }
  p.terminating = true;
  p.restart_timer.cancel();
  p.rec.pod_event(EventKind::deletion_started, p.name,
                  fmt::format("grace period {}", format_duration(p.spec.grace)));
  p.changed();
  if (!p.process) {  // between restarts: nothing to stop
    p.gone = true;
    p.changed();
    return;
  }
  if (!p.stopping) {
    p.begin_stop();
  }
}

void Pod::kill_now(const std::string& why) {
  Impl& p = *impl_;
  p.terminating = true;
  p.restart_timer.cancel();
  if (!p.process) {
    p.gone = true;
    return;
  }
  record::Event e;
  e.kind = EventKind::signal_sent;
  e.pod = p.name;
  e.signal = SIGKILL;
  e.detail = why;
  p.rec.event(e);
  if (p.container) {
    p.container->kill_now(*p.process);
  } else {
    p.process->send_signal(SIGKILL);
  }
  ExitStatus status = p.process->wait();
  p.on_exit(status);
}

const std::string& Pod::name() const {
  return impl_->name;
}

uint16_t Pod::port() const {
  return impl_->spec.port;
}

const std::string& Pod::ip() const {
  return impl_->ip;
}

int Pod::revision() const {
  return impl_->revision;
}

bool Pod::ready() const {
  return impl_->ready;
}

bool Pod::terminating() const {
  return impl_->terminating;
}

bool Pod::gone() const {
  return impl_->gone;
}

std::optional<record::Micros> Pod::ready_since() const {
  return impl_->ready_since;
}

}  // namespace zerodrop::lab
