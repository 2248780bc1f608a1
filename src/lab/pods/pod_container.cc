// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pods/pod_container.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/process_events.h"
#include "lab/pods/container_runtime.h"
#include "lab/pods/probe.h"
#include "lab/pods/process_watch.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

namespace asio = boost::asio;

std::optional<std::string> dropped_by_kernel(pid_t pid, Isolation isolation, int signal) {
  std::optional<SignalDisposition> d = signal_disposition(pid, signal);
  if (!d || d->caught) {
    return std::nullopt;
  }
  std::string who = process_name(pid);
  if (d->ignored) {
    return fmt::format("{} ignores {} (SIG_IGN)", who, signal_full_name(signal));
  }
  if (isolation == Isolation::process_group || signal == SIGKILL) {
    return std::nullopt;
  }
  return fmt::format("PID 1 ({}) has no handler for {}: the kernel drops it, as in a container",
                     who, signal_full_name(signal));
}

struct PodContainer::Impl {
  Impl(asio::io_context& io_context, Recorder& r, const PodSpec& s, std::string p, std::string l)
      : io(io_context),
        rec(r),
        spec(*s.container),
        processes(s.processes),
        pod(std::move(p)),
        log(std::move(l)) {}

  void call(std::vector<std::string> argv, std::string out,
            std::function<void(bool ok, const std::string& why)> then);
  void watch(pid_t pid_1);

  asio::io_context& io;
  Recorder& rec;
  ContainerSpec spec;
  ProcessWatch* processes;
  std::string pod;
  std::string log;
  int starts = 0;
  std::optional<pid_t> pid;
  std::unique_ptr<asio::posix::stream_descriptor> pid_watch;
  std::optional<Clock::time_point> died_at;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
};

// Runs one command of the runtime's in the background, its output appended to `out`.
void PodContainer::Impl::call(std::vector<std::string> argv, std::string out,
                              std::function<void(bool ok, const std::string& why)> then) {
  ProbeSpec action;
  action.kind = ProbeSpec::Kind::exec;
  action.command = std::move(argv);
  CheckTarget to;
  to.env = spec.runtime->env();
  to.log_path = std::move(out);
  Check::start(io, action, to, std::chrono::seconds(30),
               [alive = alive, then = std::move(then)](bool ok, std::string why) {
                 if (*alive) {
                   then(ok, why);
                 }
               });
}

void PodContainer::Impl::watch(pid_t pid_1) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid_1, 0));
  if (fd < 0) {
    return;  // gone already, or a kernel before 5.3: the client's exit stands for it
  }
  pid_watch = std::make_unique<asio::posix::stream_descriptor>(io, fd);
  pid_watch->async_wait(asio::posix::descriptor_base::wait_read,
                        [this, alive = alive, start = starts](boost::system::error_code ec) {
                          if (!ec && *alive && start == starts) {
                            died_at = rec.clock().now();
                          }
                        });
}

PodContainer::PodContainer(asio::io_context& io, Recorder& recorder, const PodSpec& spec,
                           std::string pod, std::string log)
    : impl_(std::make_unique<Impl>(io, recorder, spec, std::move(pod), std::move(log))) {}

PodContainer::~PodContainer() {
  *impl_->alive = false;
}

SpawnOptions PodContainer::start(std::vector<std::string> argv, CheckTarget& target) {
  Impl& c = *impl_;
  const ContainerRuntime& runtime = *c.spec.runtime;
  name_ = fmt::format("zd-{}-{}-{}", ::getpid(), c.pod, ++c.starts);
  c.pid.reset();
  c.pid_watch.reset();
  c.died_at.reset();
  for (std::string& a : argv) {
    a = expand_env_refs(a, target.env);
  }
  target.exec_prefix = runtime.exec_prefix(name_);
  target.exec_env = runtime.env();
  ContainerRun run{name_, c.spec.image, argv, target.env, c.spec.user};
  return {runtime.run_argv(run), runtime.env(), c.log, c.log, Isolation::process_group};
}

void PodContainer::find_pid() {
  Impl& c = *impl_;
  if (c.pid) {
    return;
  }
  std::string dir = c.rec.dir() + "/containers";
  std::filesystem::create_directories(dir);
  std::string file = fmt::format("{}/{}.pid", dir, name_);
  c.call(c.spec.runtime->pid_argv(name_), file,
         [this, file, starts = c.starts](bool ok, const std::string&) {
           Impl& now = *impl_;
           std::ifstream in(file);
           pid_t pid = 0;
           if (ok && in >> pid && pid > 0 && starts == now.starts) {
             now.pid = pid;
             now.watch(pid);
             if (now.processes != nullptr) {
               now.processes->add(pid, now.pod);
             }
           }
           std::filesystem::remove(file);
         });
}

void PodContainer::signal(int signal) {
  Impl& c = *impl_;
  // A stop signal goes straight to the container's PID 1, as the runtime's own kill does (runc
  // kill is one kill(2)); `podman kill` is a process start, 0.5–1.3 s on a loaded machine, a delay
  // that would act as a preStop the pod does not have. Through the pidfd: never another process
  // that reused the number. SIGKILL still goes through the runtime, which tears the container down.
  if (signal != SIGKILL && c.pid_watch && !c.died_at
      && ::syscall(SYS_pidfd_send_signal, c.pid_watch->native_handle(), signal, nullptr, 0) == 0) {
    return;
  }
  c.call(c.spec.runtime->kill_argv(name_, signal), c.log,
         [this, signal](bool ok, const std::string& why) {
           Impl& now = *impl_;
           if (!ok && !now.died_at) {  // not merely too late
             now.rec.pod_event(
                 record::EventKind::note, now.pod,
                 fmt::format("{} kill --signal {} failed: {}", to_string(now.spec.runtime->kind()),
                             signal_name(signal), why));
           }
         });
}

std::optional<std::string> PodContainer::dropped(int signal) const {
  if (!impl_->pid) {
    return std::nullopt;  // not known yet: nothing said rather than a guess
  }
  return dropped_by_kernel(*impl_->pid, Isolation::pid_namespace, signal);
}

void PodContainer::kill_now(Subprocess& client) {
  const ContainerRuntime& runtime = *impl_->spec.runtime;
  Subprocess kill =
      Subprocess::spawn({runtime.kill_argv(name_, SIGKILL), runtime.env(), impl_->log, impl_->log});
  kill.wait();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!client.try_wait() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  client.send_signal(SIGKILL);
}

std::optional<Clock::time_point> PodContainer::died_at() const {
  return impl_->died_at;
}

}  // namespace zerodrop::lab
