#!/usr/bin/env bash
# Ctrl-C stops the rollout, kills the pods and still writes what was recorded; exit 130.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example close-listener

"$ZERODROP" lab --replicas 2 --nodes 1 --warmup 300ms --prestop sleep:30s --grace 60s \
  --readiness http:/readyz --readiness-period 100ms --out "$WORK/run" \
  -- "$EXAMPLES/close-listener" --host '{ip}' --port '{port}' >"$WORK/out" 2>"$WORK/err" &
lab=$!
for _ in $(seq 100); do
  grep -q '"prestop_started"' "$WORK/run/events.ndjson" 2>/dev/null && break
  sleep 0.1
done
grep -q '"prestop_started"' "$WORK/run/events.ndjson" || { cat "$WORK/err"; fail "no rollout"; }
pids=$(grep '"pod_started"' "$WORK/run/events.ndjson" | sed -E 's/.*"pid ([0-9]+)".*/\1/')
kill -INT "$lab"
rc=0
wait "$lab" || rc=$?
[ "$rc" = 130 ] || { cat "$WORK/out" "$WORK/err"; fail "exit $rc after SIGINT, expected 130"; }
[ -s "$WORK/run/requests.ndjson" ] || fail "no request recorded"
expect_grep '"kind":"pod_exited"' "$WORK/run/events.ndjson"
[ -s "$WORK/run/report.json" ] || fail "no report.json"
for pid in $pids; do
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = Z ] || fail "pod $pid still runs after Ctrl-C"
done
echo "interrupted: exit 130, $(grep -c . "$WORK/run/requests.ndjson") requests recorded"
