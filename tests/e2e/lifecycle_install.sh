#!/usr/bin/env bash
# labels: offline
# zerodrop/lifecycle installs with CMake and a consumer outside the tree builds against it with
# find_package(zerodrop): installs the lifecycle component of this build into a temporary prefix,
# then configures, builds and runs a tiny consumer that drives the state machine.
source "$(dirname "$0")/lib.sh"
command -v cmake >/dev/null || skip "cmake is not installed"

prefix="$WORK/prefix"
cmake --install "$BUILD_DIR" --component lifecycle --prefix "$prefix" >"$WORK/install.log"
[ -f "$prefix/include/zerodrop/lifecycle.h" ] || fail "headers not installed: $(cat "$WORK/install.log")"
[ -f "$prefix/share/zerodrop/cmake/zerodropConfig.cmake" ] || fail "package config not installed"
! find "$prefix" -name 'zerodrop' -type f | grep -c . >/dev/null || fail "the lifecycle component installed the zerodrop binary"
! grep -rq '"base/\|"record/\|fmt/' "$prefix/include" || fail "public headers include project or fmt headers"

mkdir -p "$WORK/consumer"
cat >"$WORK/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(consumer LANGUAGES CXX)
find_package(zerodrop 0.1 REQUIRED)
add_executable(consumer main.cc)
target_link_libraries(consumer PRIVATE zerodrop::lifecycle)
CMAKE
cat >"$WORK/consumer/main.cc" <<'CC'
#include <zerodrop/lifecycle/shutdown.h>
#include <cstdio>
int main() {
  using namespace zerodrop::lifecycle;
  Options options;
  options.delay = std::chrono::seconds(1);
  Shutdown shutdown(options);
  StopReason reason = StopReason::none;
  shutdown.on_stopped([&](StopReason r) { reason = r; });
  auto t0 = Clock::now();
  std::optional<Work> work = shutdown.enter();
  shutdown.begin(t0);
  if (shutdown.ready() || shutdown.advance(t0 + options.delay) != State::draining) return 1;
  work.reset();
  std::printf("%s %s\n", std::string(to_string(shutdown.state())).c_str(),
              std::string(to_string(reason)).c_str());
  return shutdown.state() == State::stopped ? 0 : 1;
}
CC
cmake -S "$WORK/consumer" -B "$WORK/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "consumer configure failed"; }
cmake --build "$WORK/consumer/build" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "consumer build failed"; }
expect_exit 0 "$WORK/consumer/build/consumer"
expect_grep "^stopped drained$" "$WORK/out"
echo "ok: find_package(zerodrop) from an install prefix; consumer built and ran"
