#!/usr/bin/env bash
# cost: 18
# graceful with a preStop sleep longer than the propagation drops nothing: exactly 0 failures
# under both dataplanes, keep-alive on and off.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful

run_lab gr-l4 graceful --dataplane l4 --prestop sleep:1.5s -- --delay 1s
expect_no_failures gr-l4
expect_grep '"kind":"prestop_finished"' "$WORK/gr-l4/events.ndjson"

run_lab gr-l4-close graceful --dataplane l4 --no-keepalive --prestop sleep:1.5s -- --delay 1s
expect_no_failures gr-l4-close

run_lab gr-l7 graceful --dataplane l7 --prestop sleep:1.5s -- --delay 1s
expect_no_failures gr-l7
