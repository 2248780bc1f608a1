#include "shim/run.h"

#include <csignal>
#include <cstdio>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/parse.h"
#include "base/subprocess.h"
#include "shim/child.h"
#include "shim/front_proxy.h"
#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::shim {
namespace {

namespace asio = boost::asio;
namespace lc = zerodrop::lifecycle;

// Signals passed straight to the app (tini forwards all catchable ones; these are the ones
// containers meet). SIGTERM and SIGINT start the delayed stop instead.
constexpr int kForwarded[] = {SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH,
                              SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM};

void say(const std::string& line) {
  std::fprintf(stderr, "zerodrop run: %s\n", line.c_str());
}

// The supervisor: one io_context, the shutdown machine, the app and its signals.
class Supervisor {
public:
  Supervisor(const RunOptions& options)
      : options_(options),
        shutdown_(lc::Options{options.delay, options.drain_timeout, {}}),
        signals_(io_),
        timer_(io_) {}

  int run();

private:
  void on_signal(int signal);
  void on_child_news();
  void schedule();
  void finish();

  const RunOptions& options_;
  asio::io_context io_;
  lc::Shutdown shutdown_;
  asio::signal_set signals_;
  asio::steady_timer timer_;
  std::optional<Child> child_;
  std::optional<lc::Work> app_running_;
  std::optional<ReadyServer> ready_;
  std::optional<FrontProxy> proxy_;
  lc::Clock::time_point signal_at_{};
  bool done_ = false;
};

int Supervisor::run() {
  // Signals first, so that nothing sent while the app starts is lost.
  for (int s : kForwarded) {
    signals_.add(s);
  }
  signals_.add(SIGTERM);
  signals_.add(SIGINT);
  signals_.add(SIGCHLD);
  become_subreaper();
  if (options_.ready) {
    ready_.emplace(io_, shutdown_, *options_.ready, options_.app_ready);
    say(fmt::format("readiness on {}:{}", options_.ready->host, ready_->port()));
  }
  if (options_.listen && options_.upstream) {
    proxy_.emplace(io_, shutdown_, *options_.listen, *options_.upstream, options_.h2_goaway_delay);
    say(fmt::format("proxy on {}:{} -> {}:{}", options_.listen->host, proxy_->port(),
                    options_.upstream->host, options_.upstream->port));
  }
  child_ = Child::spawn(options_.command);
  app_running_ = shutdown_.enter();

  // The order: readiness fails at the signal -> delay -> stop signal -> kill at the deadline.
  shutdown_.on_transition([this](lc::State state) {
    if (state == lc::State::draining && !child_->exit_code()) {
      say(fmt::format("delay over: SIG{} to the app", signal_name(options_.stop_signal)));
      child_->signal_group(options_.stop_signal);
    }
  });
  shutdown_.on_stopped([this](lc::StopReason reason) {
    asio::post(io_, [this, reason] {
      if (reason == lc::StopReason::deadline && !child_->exit_code()) {
        say(fmt::format("drain timeout {} reached: SIGKILL to the app",
                        format_duration(options_.drain_timeout)));
        child_->signal_group(SIGKILL);
      }
      finish();
    });
  });
  std::function<void(const boost::system::error_code&, int)> handler =
      [this, &handler](const boost::system::error_code& ec, int signal) {
        if (ec) {
          return;
        }
        on_signal(signal);
        if (!done_) {
          signals_.async_wait(handler);
        }
      };
  signals_.async_wait(handler);
  on_child_news();  // it may already have exited
  io_.run();
  return child_->exit_code().value_or(137);
}

void Supervisor::on_signal(int signal) {
  if (signal == SIGCHLD) {
    return on_child_news();
  }
  if (signal != SIGTERM && signal != SIGINT) {
    return child_->signal_group(signal);
  }
  if (!shutdown_.begin(lc::Clock::now())) {
    return say(fmt::format("SIG{} again: already stopping", signal_name(signal)));
  }
  say(fmt::format("SIG{}: readiness fails now; SIG{} to the app in {}, SIGKILL at {}",
                  signal_name(signal), signal_name(options_.stop_signal),
                  format_duration(options_.delay), format_duration(options_.drain_timeout)));
  schedule();
}

void Supervisor::on_child_news() {
  if (!child_->reap() || !app_running_) {
    return;
  }
  say(fmt::format("app exited with status {}", *child_->exit_code()));
  app_running_.reset();
  // While draining, the machine stops once the proxy's connections are done too; in any other
  // state (exited on its own, or killed at the deadline) there is nothing left to wait for.
  if (shutdown_.state() != lc::State::draining) {
    finish();
  }
}

void Supervisor::schedule() {
  std::optional<lc::Clock::time_point> at = shutdown_.next_timer();
  if (!at) {
    return;
  }
  timer_.expires_at(*at);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) {
      shutdown_.advance(lc::Clock::now());
      schedule();
    }
  });
}

// Ends the loop once the app has been reaped (after a SIGKILL, the SIGCHLD brings us back).
void Supervisor::finish() {
  if (!child_->reap()) {
    return;
  }
  done_ = true;
  // What the app left in its process group must not outlive it (no process left behind).
  ::kill(-child_->pid(), SIGKILL);
  child_->reap();
  io_.stop();
}

}  // namespace

int run(const RunOptions& options) {
  Supervisor supervisor(options);
  return supervisor.run();
}

}  // namespace zerodrop::shim
