#!/usr/bin/env bash
# naive dies at SIGTERM: a rollout drops requests under both dataplanes, keep-alive on and off.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive

run_lab naive-l4 naive --dataplane l4
expect_failures naive-l4
expect_grep 'router_refused' "$WORK/naive-l4/events.ndjson"
expect_grep '"kind":"signal_sent".*"signal":15' "$WORK/naive-l4/events.ndjson"
# The l4 router joined its per-connection choice to failed requests (by client source port).
[ "$(grep '"failed":true' "$WORK/naive-l4/requests.ndjson" | grep -c '"backend":"pod-')" -gt 0 ] \
  || fail "no failed request names its backend pod"

run_lab naive-l7 naive --dataplane l7 --no-keepalive
expect_failures naive-l7
[ "$(grep '"failed":true' "$WORK/naive-l7/requests.ndjson" | grep -c '"status":502')" -gt 0 ] \
  || { show naive-l7; fail "l7: no 502 recorded"; }
# The l7 router said why it answered those itself, and the diagnosis kept its words.
expect_grep '"router_error":"' "$WORK/naive-l7/requests.ndjson"
expect_grep '"router_error": *"' "$WORK/naive-l7/report.json"
