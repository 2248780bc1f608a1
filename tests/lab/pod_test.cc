// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pod.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "base/clock.h"
#include "base/error.h"
#include "lab/recorder.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;
using record::EventKind;
using record::Micros;

// A command that ignores SIGTERM (and so do the sleeps it starts): only SIGKILL ends it.
const std::vector<std::string> kIgnoresTerm = {"sh", "-c",
                                               "trap '' TERM; while true; do sleep 0.05; done"};

class PodTest : public ::testing::Test {
protected:
  PodTest()
      : dir_(std::filesystem::temp_directory_path()
             / ("zerodrop-pod-test-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        recorder_(dir_.string(), clock_) {}

  ~PodTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Pod> make_pod(const PodSpec& spec, const std::string& name) {
    return std::make_unique<Pod>(io_, recorder_, spec, name, "127.0.0.1", 1, nullptr);
  }

  // Runs the event loop until `done` holds; fails the test after `limit`.
  void run_until(const std::function<bool()>& done, std::chrono::seconds limit = 15s) {
    auto guard = boost::asio::make_work_guard(io_);
    auto deadline = clock_.now() + limit;
    while (!done() && clock_.now() < deadline) {
      io_.run_for(10ms);
    }
    ASSERT_TRUE(done()) << "condition not reached within the limit";
  }

  // The time of the first event of `kind` for `pod` (after `after`), or -1 s when absent.
  Micros when(const std::string& pod, EventKind kind, Micros after = Micros(-1)) {
    for (const record::Event& e : recorder_.snapshot({}, Micros(0)).events) {
      if (e.pod == pod && e.kind == kind && e.t > after) {
        return e.t;
      }
    }
    return Micros(-1'000'000);
  }

  std::vector<record::Event> events_of(const std::string& pod) {
    std::vector<record::Event> out;
    for (const record::Event& e : recorder_.snapshot({}, Micros(0)).events) {
      if (e.pod == pod) {
        out.push_back(e);
      }
    }
    return out;
  }

  std::filesystem::path dir_;
  SteadyClock clock_;
  Recorder recorder_;
  boost::asio::io_context io_;
};

PodSpec spec_with(const std::string& prestop, Duration grace, std::vector<std::string> command) {
  PodSpec spec;
  spec.command = std::move(command);
  spec.prestop = parse_hook(prestop, "--prestop");
  spec.grace = grace;
  return spec;
}

double seconds(Micros d) {
  return std::chrono::duration<double>(d).count();
}

// preStop shorter than, equal to and longer than the grace period, side by side. Each command
// ignores SIGTERM, so SIGKILL timing is visible: max(2 s, grace - whole seconds of preStop).
TEST_F(PodTest, GraceArithmeticWithRealProcesses) {
  auto shorter = make_pod(spec_with("sleep:1.2s", 3s, kIgnoresTerm), "shorter");
  auto equal = make_pod(spec_with("sleep:1s", 1s, kIgnoresTerm), "equal");
  auto longer = make_pod(spec_with("sleep:5s", 1s, kIgnoresTerm), "longer");
  for (Pod* p : {shorter.get(), equal.get(), longer.get()}) {
    p->start();
    p->delete_pod();
  }
  run_until([&] { return shorter->gone() && equal->gone() && longer->gone(); });

  // shorter: TERM when the hook ends (1.2 s), KILL 3 - 1 = 2 s later.
  Micros del = when("shorter", EventKind::deletion_started);
  Micros term = when("shorter", EventKind::signal_sent);
  Micros kill = when("shorter", EventKind::signal_sent, term);
  // Lower bounds are exact; upper bounds leave room for a loaded machine yet stay below the
  // values a wrong arithmetic would give (3 s without charging the hook).
  EXPECT_GE(seconds(term - del), 1.2);
  EXPECT_LT(seconds(term - del), 2.5);
  EXPECT_GE(seconds(kill - term), 2.0);
  EXPECT_LT(seconds(kill - term), 2.9);
  EXPECT_GE(when("shorter", EventKind::prestop_finished).count(), 0);

  // equal (1 s hook, 1 s grace) and longer (5 s hook, 1 s grace): TERM at 1 s, KILL 2 s later.
  for (const char* name : {"equal", "longer"}) {
    Micros d = when(name, EventKind::deletion_started);
    Micros t = when(name, EventKind::signal_sent);
    Micros k = when(name, EventKind::signal_sent, t);
    EXPECT_GE(seconds(t - d), 1.0) << name;
    EXPECT_LT(seconds(t - d), 2.0) << name;
    EXPECT_GE(seconds(k - t), 2.0) << name;
    EXPECT_LT(seconds(k - t), 2.9) << name;
  }
  EXPECT_GE(when("longer", EventKind::prestop_failed).count(), 0);  // abandoned at grace
  for (const char* name : {"shorter", "equal", "longer"}) {
    auto events = events_of(name);
    ASSERT_EQ(events.back().kind, EventKind::pod_exited) << name;
    EXPECT_EQ(events.back().signal, SIGKILL) << name;
  }
}

TEST_F(PodTest, FailingPrestopIsAnEventAndTerminationContinues) {
  auto pod = make_pod(spec_with("exec:false", 30s, {"sleep", "30"}), "failing");
  pod->start();
  pod->delete_pod();
  run_until([&] { return pod->gone(); });
  std::vector<EventKind> kinds;
  for (const record::Event& e : events_of("failing")) {
    kinds.push_back(e.kind);
  }
  std::vector<EventKind> want = {
      EventKind::pod_created,      EventKind::pod_started,     EventKind::pod_ready,
      EventKind::deletion_started, EventKind::prestop_started, EventKind::prestop_failed,
      EventKind::signal_sent,      EventKind::pod_unready,     EventKind::pod_exited};
  // The readiness probe is `none` here: Ready as soon as it runs. pod_unready and pod_exited are
  // recorded together when the process ends.
  std::vector<EventKind> got = kinds;
  std::erase(got, EventKind::pod_unready);
  std::erase(want, EventKind::pod_unready);
  EXPECT_EQ(got, want);
  auto events = events_of("failing");
  EXPECT_EQ(events.back().signal, SIGTERM);  // sleep dies of the stop signal, no SIGKILL needed
}

TEST_F(PodTest, CommandThatExitsAtOnceIsRestarted) {
  PodSpec spec = spec_with("none", 30s, {"true"});
  spec.restart_backoff = 50ms;
  auto pod = make_pod(spec, "quitter");
  pod->start();
  auto count = [&](EventKind kind) {
    auto events = events_of("quitter");
    return std::count_if(events.begin(), events.end(),
                         [kind](const record::Event& e) { return e.kind == kind; });
  };
  run_until([&] { return count(EventKind::pod_started) >= 2; });
  auto events = events_of("quitter");
  int started = 0;
  for (const record::Event& e : events) {
    started += e.kind == EventKind::pod_started ? 1 : 0;
    if (e.kind == EventKind::pod_exited) {
      EXPECT_EQ(e.exit_code, 0);
    }
  }
  EXPECT_GE(started, 2);
  pod->kill_now("test ends");
}

TEST_F(PodTest, IgnoringSigtermEndsInSigkillAfterTheGracePeriod) {
  std::string mark = (dir_ / "trapped").string();
  auto pod = make_pod(
      spec_with("none", 2500ms,
                {"sh", "-c", "trap '' TERM; touch " + mark + "; while true; do sleep 0.05; done"}),
      "stubborn");
  pod->start();
  run_until([&] { return std::filesystem::exists(mark); });  // the trap is in place
  pod->delete_pod();
  run_until([&] { return pod->gone(); });
  Micros term = when("stubborn", EventKind::signal_sent);
  Micros kill = when("stubborn", EventKind::signal_sent, term);
  EXPECT_GE(seconds(kill - term), 2.5);  // no preStop: the whole grace period
  EXPECT_LT(seconds(kill - term), 3.4);
  EXPECT_EQ(events_of("stubborn").back().signal, SIGKILL);
}

TEST_F(PodTest, MissingCommandIsAClearError) {
  auto pod =
      make_pod(spec_with("none", 1s, {"zerodrop-no-such-server", "--port", "{port}"}), "missing");
  try {
    pod->start();
    FAIL() << "start succeeded";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot run 'zerodrop-no-such-server': not found in PATH");
  }
}

TEST_F(PodTest, FailedLivenessKillsAndRestartsTheContainer) {
  PodSpec spec = spec_with("none", 1s, {"sleep", "30"});
  spec.liveness = parse_probe("exec:false", "--liveness");
  spec.liveness.period = 50ms;
  spec.liveness.failure_threshold = 2;
  auto pod = make_pod(spec, "unhealthy");
  pod->start();
  auto count = [&](EventKind kind) {
    auto events = events_of("unhealthy");
    return std::count_if(events.begin(), events.end(),
                         [kind](const record::Event& e) { return e.kind == kind; });
  };
  run_until([&] { return count(EventKind::pod_started) >= 2; });
  EXPECT_GE(count(EventKind::liveness_restart), 1);
  EXPECT_GE(count(EventKind::probe_failed), 2);
  EXPECT_GE(when("unhealthy", EventKind::pod_exited).count(), 0);  // killed by the stop signal
  EXPECT_FALSE(pod->terminating());
  pod->kill_now("test ends");
}

TEST_F(PodTest, ReadinessProbeGatesReady) {
  PodSpec spec = spec_with("none", 1s, {"sleep", "30"});
  spec.readiness = parse_probe("exec:'test -e {flag}'", "--readiness");
  spec.readiness.command[2] = (dir_ / "ready-flag").string();
  spec.readiness.period = 50ms;
  auto pod = make_pod(spec, "gated");
  pod->start();
  run_until([&] { return when("gated", EventKind::probe_failed).count() >= 0; });
  EXPECT_FALSE(pod->ready());
  std::ofstream(dir_ / "ready-flag") << "";
  run_until([&] { return pod->ready(); });
  pod->kill_now("test ends");
}

}  // namespace
}  // namespace zerodrop::lab
