#include "base/subprocess.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path()
                 / ("zerodrop-subprocess-" + std::to_string(::getpid()) + "-"
                    + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Processes of process group `pgid` that are still alive (zombies do not count: an init that
// never reaps must not fail the test).
int live_members(pid_t pgid) {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  while (dirent* entry = ::readdir(proc)) {
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9' || !std::getline(stat, line)) {
      continue;
    }
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state = 0;
    pid_t ppid = 0, group = 0;
    rest >> state >> ppid >> group;
    count += group == pgid && state != 'Z' ? 1 : 0;
  }
  ::closedir(proc);
  return count;
}

bool wait_until_gone(pid_t pgid) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (live_members(pgid) == 0) {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Subprocess, ReportsExitCode) {
  Subprocess child = Subprocess::spawn({{"sh", "-c", "exit 3"}});
  ExitStatus status = child.wait();
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_FALSE(status.signal);
  EXPECT_EQ(status.describe(), "exit code 3");
  EXPECT_EQ(child.try_wait()->exit_code, 3);  // reaped once, remembered
}

TEST(Subprocess, SetsEnvironmentAndWritesLogs) {
  fs::path dir = temp_dir();
  SpawnOptions options{{"sh", "-c", "echo out=$ZD_TEST_VALUE; echo err >&2"},
                       {{"ZD_TEST_VALUE", "42"}},
                       (dir / "out.log").string(),
                       (dir / "err.log").string()};
  EXPECT_TRUE(Subprocess::spawn(options).wait().success());
  EXPECT_EQ(slurp(dir / "out.log"), "out=42\n");
  EXPECT_EQ(slurp(dir / "err.log"), "err\n");
  fs::remove_all(dir);
}

TEST(Subprocess, SignalsTheWholeProcessGroup) {
  Subprocess child = Subprocess::spawn({{"sh", "-c", "sleep 30 & sleep 30; wait"}});
  EXPECT_FALSE(child.try_wait());  // non-blocking while it runs
  pid_t group = child.pid();
  EXPECT_EQ(::getpgid(group), group);
  child.send_signal(SIGTERM);
  ExitStatus status = child.wait();
  EXPECT_EQ(status.signal, SIGTERM);
  EXPECT_EQ(status.describe(), "killed by SIGTERM");
  EXPECT_TRUE(wait_until_gone(group));
}

TEST(Subprocess, MissingCommandIsAClearError) {
  try {
    Subprocess::spawn({{"zerodrop-no-such-command"}});
    FAIL() << "spawn succeeded";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot run 'zerodrop-no-such-command': not found in PATH");
  }
  try {
    Subprocess::spawn({{"/nonexistent/server"}});
    FAIL() << "spawn succeeded";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot run '/nonexistent/server': No such file or directory");
  }
}

TEST(Subprocess, NonExecutableFileIsAClearError) {
  fs::path dir = temp_dir();
  std::ofstream(dir / "script") << "#!/bin/sh\n";
  try {
    Subprocess::spawn({{(dir / "script").string()}});
    FAIL() << "spawn succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Permission denied"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Subprocess, RunCapturedFeedsStdinAndCapturesBothStreams) {
  Captured run = run_captured({{"sh", "-c", "tr a-z A-Z; echo oops >&2; exit 3"}}, "hello\n");
  EXPECT_EQ(run.out, "HELLO\n");
  EXPECT_EQ(run.err, "oops\n");
  EXPECT_EQ(run.status.exit_code, 3);
}

TEST(Subprocess, RunCapturedDoesNotStallOnLargeStreams) {
  // 1 MiB in and out, more than a pipe holds either way: the child writes while its input is
  // still being written, which stalls a runner that writes all the input before reading.
  std::string input(1 << 20, 'x');
  Captured run = run_captured({{"cat"}}, input);
  EXPECT_EQ(run.out.size(), input.size());
  EXPECT_TRUE(run.status.success());
}

TEST(Subprocess, RunCapturedSurvivesAChildThatIgnoresItsInput) {
  // The child exits before reading: writing the rest would raise SIGPIPE in this process.
  Captured run = run_captured({{"sh", "-c", "exit 0"}}, std::string(1 << 20, 'x'));
  EXPECT_TRUE(run.status.success());
  EXPECT_TRUE(run.out.empty());
}

TEST(Subprocess, PipesReachALongLivedChild) {
  Subprocess child = Subprocess::spawn({.argv = {"cat"}, .pipes = Pipes::in | Pipes::out});
  ASSERT_GE(child.stdin_fd(), 0);
  ASSERT_GE(child.stdout_fd(), 0);
  EXPECT_EQ(child.stderr_fd(), -1);
  ASSERT_EQ(::write(child.stdin_fd(), "ping\n", 5), 5);
  char buffer[8] = {};
  ASSERT_EQ(::read(child.stdout_fd(), buffer, sizeof buffer), 5);
  EXPECT_STREQ(buffer, "ping\n");
  child.close_stdin();
  EXPECT_TRUE(child.wait().success());  // cat ends at the end of its input
}

TEST(Subprocess, DestructorKillsARunningChild) {
  pid_t group = 0;
  {
    Subprocess child = Subprocess::spawn({{"sleep", "30"}});
    group = child.pid();
  }
  EXPECT_TRUE(wait_until_gone(group));
}

// The spawner is killed with SIGKILL: nothing of the child's process group survives.
TEST(Subprocess, NoChildOutlivesASpawnerKilledWithSigkill) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t spawner = ::fork();
  if (spawner == 0) {
    Subprocess child = Subprocess::spawn({{"sh", "-c", "sleep 30 & sleep 30; wait"}});
    pid_t group = child.pid();
    (void)!::write(pipe_fds[1], &group, sizeof group);
    ::pause();
    std::_Exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t group = 0;
  ASSERT_EQ(::read(pipe_fds[0], &group, sizeof group), static_cast<ssize_t>(sizeof group));
  ::close(pipe_fds[0]);
  // Wait until the grandchild sleeps too, so that the group really has several members.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (live_members(group) < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_GE(live_members(group), 2);
  ::kill(spawner, SIGKILL);
  ::waitpid(spawner, nullptr, 0);
  EXPECT_TRUE(wait_until_gone(group));
}

// The namespace this host allows; the tests below need one (root or user namespaces).
std::optional<Isolation> namespaced() {
  Isolation i = probe_isolation();
  return i == Isolation::process_group ? std::nullopt : std::optional<Isolation>(i);
}

// Waits until `path` holds `text` (a child wrote it), at most 10 s.
bool wait_for_text(const fs::path& path, const std::string& text) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (slurp(path) != text && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  return slurp(path) == text;
}

TEST(Subprocess, InAPidNamespaceTheCommandIsPid1) {
  auto isolation = namespaced();
  if (!isolation) {
    GTEST_SKIP() << "this host allows no PID namespace";
  }
  fs::path dir = temp_dir();
  SpawnOptions options{{"sh", "-c", "echo $$"}, {}, (dir / "out.log").string(), ""};
  options.isolation = *isolation;
  Subprocess child = Subprocess::spawn(options);
  EXPECT_EQ(child.isolation(), *isolation);
  EXPECT_TRUE(child.wait().success());
  EXPECT_EQ(slurp(dir / "out.log"), "1\n");
  fs::remove_all(dir);
}

// A shell signals itself: as PID 1 without a handler it survives; in a process group it dies.
TEST(Subprocess, Pid1WithoutAHandlerDropsTheSignal) {
  auto isolation = namespaced();
  if (!isolation) {
    GTEST_SKIP() << "this host allows no PID namespace";
  }
  SpawnOptions options{{"sh", "-c", "kill -TERM $$; exit 7"}};
  options.isolation = *isolation;
  EXPECT_EQ(Subprocess::spawn(options).wait().exit_code, 7);
  options.isolation = Isolation::process_group;
  EXPECT_EQ(Subprocess::spawn(options).wait().signal, SIGTERM);
}

// A process that left the process group (setsid) still dies with its namespace's PID 1.
TEST(Subprocess, SigkillOfPid1EndsTheWholeNamespace) {
  auto isolation = namespaced();
  if (!isolation) {
    GTEST_SKIP() << "this host allows no PID namespace";
  }
  fs::path dir = temp_dir();
  SpawnOptions options{{"sh", "-c", "setsid sh -c 'echo started; exec sleep 30' & wait"},
                       {},
                       (dir / "out.log").string(),
                       ""};
  options.isolation = *isolation;
  Subprocess child = Subprocess::spawn(options);
  ASSERT_TRUE(wait_for_text(dir / "out.log", "started\n"));
  pid_t escaped = 0;  // the setsid child: its own session and group, PID 1 its parent
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) {
      continue;
    }
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == child.pid()) {
      escaped = std::stoi(entry.path().filename().string());
    }
  }
  ASSERT_GT(escaped, 0);
  ASSERT_EQ(::getpgid(escaped), escaped);
  child.send_signal(SIGKILL);
  EXPECT_EQ(child.wait().signal, SIGKILL);
  EXPECT_TRUE(wait_until_gone(escaped));  // a session leader: its group is its pid
  fs::remove_all(dir);
}

TEST(Subprocess, ReadsASignalsDisposition) {
  fs::path dir = temp_dir();
  Subprocess child = Subprocess::spawn(
      {{"sh", "-c", "trap '' TERM; trap 'true' USR1; echo ready; while :; do sleep 1; done"},
       {},
       (dir / "out.log").string(),
       ""});
  ASSERT_TRUE(wait_for_text(dir / "out.log", "ready\n"));
  std::optional<SignalDisposition> term = signal_disposition(child.pid(), SIGTERM);
  std::optional<SignalDisposition> usr1 = signal_disposition(child.pid(), SIGUSR1);
  ASSERT_TRUE(term && usr1);
  EXPECT_TRUE(term->ignored);
  EXPECT_FALSE(term->caught);
  EXPECT_TRUE(usr1->caught);
  child.send_signal(SIGKILL);
  child.wait();
  EXPECT_FALSE(signal_disposition(child.pid(), SIGTERM));  // reaped: gone
  fs::remove_all(dir);
}

TEST(Subprocess, SignalNames) {
  EXPECT_EQ(signal_name(SIGTERM), "TERM");
  EXPECT_EQ(signal_full_name(SIGWINCH), "SIGWINCH");
  EXPECT_EQ(signal_full_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(signal_full_name(SIGRTMIN + 3), "SIG" + std::to_string(SIGRTMIN + 3));
  EXPECT_EQ(signal_from_name("SIGQUIT"), SIGQUIT);
  EXPECT_EQ(signal_from_name("INT"), SIGINT);
  EXPECT_EQ(signal_from_name("9"), SIGKILL);
  EXPECT_FALSE(signal_from_name("NOPE"));
  EXPECT_FALSE(signal_from_name("99999"));
}

}  // namespace
}  // namespace zerodrop
