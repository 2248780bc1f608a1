#!/usr/bin/env bash
# close-listener closes its listener at SIGTERM while the routers still send it connections: the
# deregistration race drops requests under both dataplanes, keep-alive on and off.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example close-listener

run_lab cl-l4 close-listener --dataplane l4 --no-keepalive
expect_failures cl-l4
expect_grep '"kind":"router_refused"' "$WORK/cl-l4/events.ndjson"
expect_grep '"exit_code":0,"kind":"pod_exited"' "$WORK/cl-l4/events.ndjson"

run_lab cl-l7 close-listener --dataplane l7
expect_failures cl-l7
