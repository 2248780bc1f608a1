#!/usr/bin/env bash
# The library's claim at scale: a Boost.Beast server on zerodrop/lifecycle, under keep-alive load
# from 4 clients, receives a real SIGTERM 1,000 times (a fresh server each time) and drops no
# request. Runs the unit test SigtermLoop with ZERODROP_SIGTERM_ITERATIONS (CI runs 20).
# Usage: bench/lifecycle_sigterm.sh [BUILD/zerodrop] [ITERATIONS]
set -euo pipefail
zerodrop=${1:-build/zerodrop}
build=$(dirname "$zerodrop")
iterations=${2:-1000}
tests="$build/tests/lifecycle/lifecycle_tests"
[ -x "$tests" ] || { echo "lifecycle_sigterm: error: $tests not built (make build)" >&2; exit 2; }
start=$(date +%s%N)
set +e
ZERODROP_SIGTERM_ITERATIONS=$iterations "$tests" --gtest_filter='SigtermLoop.*' --gtest_brief=1 |
  grep -E "sigterm loop|FAILED|Failure|iteration"
status=${PIPESTATUS[0]}
set -e
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "lifecycle_sigterm: $iterations SIGTERMs in ${ms} ms ($(( ms / iterations )) ms each, 200 ms of it the delay)"
exit "$status"
