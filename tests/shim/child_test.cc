#include "shim/child.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::shim {
namespace {

// Polls reap() with a deadline: the tests have no SIGCHLD loop.
std::optional<int> wait_exit(Child& child) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!child.reap() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return child.exit_code();
}

TEST(Child, ReportsTheExitCode) {
  Child child = Child::spawn({"sh", "-c", "exit 42"});
  EXPECT_EQ(wait_exit(child), 42);
  EXPECT_EQ(child.reap(), 42) << "stays set";
}

TEST(Child, ReportsDeathBySignalAs128PlusN) {
  Child child = Child::spawn({"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(wait_exit(child), 137);
}

TEST(Child, RunsInItsOwnProcessGroup) {
  Child child = Child::spawn({"sleep", "30"});
  EXPECT_EQ(::getpgid(child.pid()), child.pid());
  EXPECT_NE(::getpgid(child.pid()), ::getpgrp());
  child.signal_group(SIGTERM);
  EXPECT_EQ(wait_exit(child), 143);
}

TEST(Child, MissingCommandIsAClearError) {
  try {
    Child::spawn({"/nonexistent/zerodrop-app"});
    FAIL() << "spawned a missing command";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot run '/nonexistent/zerodrop-app': No such file or directory");
  }
  EXPECT_THROW(Child::spawn({}), Error);
}

}  // namespace
}  // namespace zerodrop::shim
