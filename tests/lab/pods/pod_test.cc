// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pods/pod.h"

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
#include "base/timer.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;
using record::EventKind;
using record::Micros;

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

// Kubelet's sequence in virtual time: its timers (preStop sleep, grace deadline, SIGKILL,
// restart back-off) and the recorder's stamps run on the VirtualTime of the io_context, so every
// instant is exact. Only the processes are real: a test waits for them (their exit) on a
// condition, while virtual time stands still.
class VirtualPodTest : public ::testing::Test {
protected:
  VirtualPodTest()
      : dir_(std::filesystem::temp_directory_path()
             / ("zerodrop-vpod-test-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        time_(boost::asio::use_service<VirtualTime>(io_)),
        recorder_(dir_.string(), time_.clock()) {}

  ~VirtualPodTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Pod> make_pod(const PodSpec& spec, const std::string& name) {
    return std::make_unique<Pod>(io_, recorder_, spec, name, "127.0.0.1", 1, nullptr);
  }

  // Handles what the processes do (in real time) until `done` holds; fails after 15 s.
  void wait_for(const std::function<bool()>& done) {
    auto guard = boost::asio::make_work_guard(io_);
    auto deadline = std::chrono::steady_clock::now() + 15s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io_.run_for(10ms);
    }
    ASSERT_TRUE(done()) << "condition not reached within 15 s";
  }

  // The stamps of every `kind` event of `pod`, since the recorder started.
  std::vector<Micros> stamps(const std::string& pod, EventKind kind) {
    std::vector<Micros> out;
    for (const record::Event& e : recorder_.snapshot({}, Micros(0)).events) {
      if (e.pod == pod && e.kind == kind) {
        out.push_back(e.t);
      }
    }
    return out;
  }

  // A pod whose command ignores SIGTERM, started and with its trap in place.
  std::unique_ptr<Pod> stubborn_pod(const std::string& prestop, Duration grace,
                                    const std::string& name) {
    std::string mark = (dir_ / (name + ".trapped")).string();
    auto pod = make_pod(
        spec_with(
            prestop, grace,
            {"sh", "-c", "trap '' TERM; touch " + mark + "; while true; do sleep 0.05; done"}),
        name);
    pod->start();
    wait_for([&] { return std::filesystem::exists(mark); });
    return pod;
  }

  std::filesystem::path dir_;
  boost::asio::io_context io_;
  VirtualTime& time_;
  Recorder recorder_;
};

Micros at(Duration d) {
  return std::chrono::duration_cast<Micros>(d);
}

// preStop shorter than, equal to and longer than the grace period, side by side: SIGTERM when
// the hook ends or the grace period runs out, SIGKILL max(2 s, grace - whole seconds of preStop)
// later.
TEST_F(VirtualPodTest, GraceArithmetic) {
  auto shorter = stubborn_pod("sleep:1.2s", 3s, "shorter");
  auto equal = stubborn_pod("sleep:1s", 1s, "equal");
  auto longer = stubborn_pod("sleep:5s", 1s, "longer");
  Micros deleted = recorder_.now();
  for (Pod* p : {shorter.get(), equal.get(), longer.get()}) {
    p->delete_pod();
  }
  time_.advance(10s);
  wait_for([&] { return shorter->gone() && equal->gone() && longer->gone(); });

  auto signals = [&](const std::string& pod) {
    std::vector<Micros> out;
    for (Micros t : stamps(pod, EventKind::signal_sent)) {
      out.push_back(t - deleted);
    }
    return out;
  };
  // shorter: TERM when the 1.2 s hook ends, KILL 3 - 1 = 2 s later.
  EXPECT_EQ(signals("shorter"), (std::vector<Micros>{at(1200ms), at(3200ms)}));
  EXPECT_EQ(stamps("shorter", EventKind::prestop_finished),
            (std::vector<Micros>{deleted + at(1200ms)}));
  // equal and longer: TERM at the 1 s grace period, KILL after the 2 s minimum.
  EXPECT_EQ(signals("equal"), (std::vector<Micros>{at(1s), at(3s)}));
  EXPECT_EQ(signals("longer"), (std::vector<Micros>{at(1s), at(3s)}));
  EXPECT_EQ(stamps("longer", EventKind::prestop_failed), (std::vector<Micros>{deleted + at(1s)}));
  for (const char* name : {"shorter", "equal", "longer"}) {
    EXPECT_EQ(stamps(name, EventKind::pod_exited).size(), 1u) << name;
  }
}

TEST_F(VirtualPodTest, IgnoringSigtermEndsInSigkillAfterTheWholeGracePeriod) {
  auto pod = stubborn_pod("none", 2500ms, "stubborn");
  Micros deleted = recorder_.now();
  pod->delete_pod();
  time_.advance(2499ms);
  EXPECT_EQ(stamps("stubborn", EventKind::signal_sent), (std::vector<Micros>{deleted}));
  EXPECT_FALSE(pod->gone());
  time_.advance(1ms);
  EXPECT_EQ(stamps("stubborn", EventKind::signal_sent),
            (std::vector<Micros>{deleted, deleted + at(2500ms)}));
  wait_for([&] { return pod->gone(); });
}

// A preStop sleep within the grace period: the KILL deadline counts only whole seconds of it.
TEST_F(VirtualPodTest, PrestopChargesWholeSecondsAgainstTheGracePeriod) {
  auto pod = stubborn_pod("sleep:2.9s", 5s, "charged");
  Micros deleted = recorder_.now();
  pod->delete_pod();
  time_.advance(2899ms);
  EXPECT_TRUE(stamps("charged", EventKind::signal_sent).empty());
  time_.advance(1ms);
  EXPECT_EQ(stamps("charged", EventKind::signal_sent), (std::vector<Micros>{deleted + at(2900ms)}));
  time_.advance(3s - 1ms);  // 5 s - 2 whole seconds of preStop
  EXPECT_EQ(stamps("charged", EventKind::signal_sent).size(), 1u);
  time_.advance(1ms);
  EXPECT_EQ(stamps("charged", EventKind::signal_sent),
            (std::vector<Micros>{deleted + at(2900ms), deleted + at(5900ms)}));
  wait_for([&] { return pod->gone(); });
}

// A container that exits on its own restarts after 1 s, then 2, 4, 8 s and at most 10 s.
TEST_F(VirtualPodTest, RestartBackOffDoublesUpToTenSeconds) {
  auto pod = make_pod(spec_with("none", 30s, {"true"}), "quitter");
  pod->start();
  for (Duration backoff : {1s, 2s, 4s, 8s, 10s, 10s}) {
    size_t runs = stamps("quitter", EventKind::pod_started).size();
    wait_for([&] { return stamps("quitter", EventKind::pod_exited).size() == runs; });
    Micros exited = stamps("quitter", EventKind::pod_exited).back();
    time_.advance(backoff - 1ms);
    ASSERT_EQ(stamps("quitter", EventKind::pod_started).size(), runs);
    time_.advance(1ms);
    ASSERT_EQ(stamps("quitter", EventKind::pod_started).size(), runs + 1);
    EXPECT_EQ(stamps("quitter", EventKind::pod_started).back() - exited, at(backoff));
  }
  pod->kill_now("test ends");
}

}  // namespace
}  // namespace zerodrop::lab
