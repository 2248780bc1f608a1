#!/usr/bin/env bash
# Every process of a pod is watched: a pre-fork server whose worker dies at SIGTERM before its
# master. The worker's exit is an event, and the diagnosis quotes it, not the master's.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is missing"

rc=0
"$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms --rate 200 --connections 16 \
  --warmup 500ms --tail 300ms --readiness-period 100ms --grace 5s --out "$WORK/run" \
  -- python3 "$SOURCE_DIR/tests/e2e/forking_server.py" '{ip}' '{port}' \
  >"$WORK/out" 2>"$WORK/err" || rc=$?
if grep -q "only each pod's main process is watched" "$WORK/run/events.ndjson"; then
  skip "the host gives no process events (root needed)"
fi
[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err"; fail "exit $rc, expected 1 (requests cut)"; }
exits=$(grep -c '"kind":"process_exited".*killed by SIGTERM' "$WORK/run/events.ndjson" || true)
[ "$exits" -ge 2 ] || { cat "$WORK/run/events.ndjson"; fail "expected 2 worker exits, got $exits"; }
# Each worker exited before its master.
python3 - "$WORK/run/events.ndjson" <<'PY' || fail "a worker did not exit before its master"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
for e in events:
    if e["kind"] == "process_exited" and "SIGTERM" in e["detail"]:
        master = [m for m in events if m["kind"] == "pod_exited" and m["pod"] == e["pod"]]
        assert master and master[0]["t_us"] > e["t_us"], (e, master)
PY
expect_grep '"hole": *"no-drain"' "$WORK/run/report.json"
expect_grep 'broke when its process pid [0-9]+ \(python3\) exited at [0-9.]+ s \(killed by SIGTERM\)' \
  "$WORK/run/report.json"
expect_grep 'before its main process exited' "$WORK/run/report.json"
echo "the worker's exit is quoted: $(grep -o 'broke when its process[^"]*' "$WORK/run/report.json" | head -1)"
