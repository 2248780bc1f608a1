#include "shim/sleep.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace zerodrop::shim {
namespace {

using std::chrono::milliseconds;

TEST(ParseSleepDuration, ReadsSecondsAndUnits) {
  EXPECT_EQ(parse_sleep_duration("10"), std::chrono::seconds(10));
  EXPECT_EQ(parse_sleep_duration("1.5s"), milliseconds(1500));
  EXPECT_EQ(parse_sleep_duration("300ms"), milliseconds(300));
  EXPECT_EQ(parse_sleep_duration("2m"), std::chrono::minutes(2));
  EXPECT_EQ(parse_sleep_duration("0"), std::chrono::nanoseconds(0));
}

TEST(ParseSleepDuration, RejectsGarbage) {
  for (const char* bad : {"", "-1", "x", "10x", "1e400", " 1", "nan", "inf", "1.5.5"}) {
    EXPECT_FALSE(parse_sleep_duration(bad)) << bad;
  }
}

TEST(SleepFor, ReturnsZeroWhenDone) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(sleep_for(milliseconds(20)), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(20));
}

TEST(SleepFor, SigtermEndsItWith143) {
  // SIGTERM is blocked before the fork, so the child inherits the mask and the signal waits for
  // sleep_for (which takes it with sigtimedwait) however early the parent sends it.
  sigset_t term;
  sigset_t old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, &old_mask);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::_exit(sleep_for(std::chrono::seconds(30)));
  }
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ASSERT_GE(pid, 0);
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
}

}  // namespace
}  // namespace zerodrop::shim
