#!/usr/bin/env bash
# Bad input gets one clear line and exit 2.
source "$(dirname "$0")/lib.sh"

expect_exit 2 "$ZERODROP" lab --out "$WORK/a" -- zerodrop-no-such-server --port '{port}'
expect_grep "^zerodrop: error: cannot run 'zerodrop-no-such-server': not found in PATH$" "$WORK/err"

expect_exit 2 "$ZERODROP" lab --propagation soon -- true
expect_grep "^zerodrop: error: --propagation: expected 2s, 1s..4s or p50=1s,p99=6s, got 'soon'$" \
  "$WORK/err"

expect_exit 2 "$ZERODROP" lab --prestop wait:3 -- true
expect_grep "^zerodrop: error: --prestop: expected none" "$WORK/err"

expect_exit 2 "$ZERODROP" lab --max-surge 0 --max-unavailable 0 -- true
expect_grep "may not both be 0" "$WORK/err"

expect_exit 2 "$ZERODROP" lab --action scale-up 2 -- true
expect_grep "^zerodrop: error: --action: expected restart, scale-down N or delete-pod" "$WORK/err"

expect_exit 2 "$ZERODROP" lab
expect_grep "no command" "$WORK/err"
