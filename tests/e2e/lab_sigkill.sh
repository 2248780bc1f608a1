#!/usr/bin/env bash
# A lab killed with SIGKILL mid-run leaves no process behind.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive

"$ZERODROP" lab --replicas 2 --nodes 1 --warmup 60s --readiness-period 100ms \
  --out "$WORK/run" -- "$EXAMPLES/naive" --host '{ip}' --port '{port}' \
  >"$WORK/out" 2>"$WORK/err" &
lab=$!
for _ in $(seq 100); do
  [ "$(grep -c '"pod_started"' "$WORK/run/events.ndjson" 2>/dev/null)" = 2 ] && break
  sleep 0.1
done
pids=$(grep '"pod_started"' "$WORK/run/events.ndjson" | sed -E 's/.*"pid ([0-9]+)".*/\1/')
[ "$(echo "$pids" | wc -w)" = 2 ] || { cat "$WORK/err"; fail "the pods did not start"; }
for pid in $pids; do kill -0 "$pid" || fail "pod $pid is not running before the kill"; done

kill -KILL "$lab"
wait "$lab" 2>/dev/null || true
alive() {  # a pid that still runs (zombies do not count: they hold no socket)
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
for _ in $(seq 50); do
  left=""
  for pid in $pids; do alive "$pid" && left="$left $pid"; done
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "pods outlived the SIGKILLed lab:$left"
echo "both pods ($pids) died with the lab"
