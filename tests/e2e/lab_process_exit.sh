#!/usr/bin/env bash
# Every process of a pod is watched: a pre-fork server whose worker dies at SIGTERM before its
# master. The worker's exit is an event, and the diagnosis quotes it, not the master's.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is missing"
python=$(python3 -c 'import sys; print(sys.executable)')  # not a shim that forks on its own

rc=0
"$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms --rate 200 --connections 16 \
  --warmup 500ms --tail 300ms --readiness-period 100ms --grace 5s --out "$WORK/run" \
  -- "$python" "$SOURCE_DIR/tests/e2e/forking_server.py" '{ip}' '{port}' \
  >"$WORK/out" 2>"$WORK/err" || rc=$?
if grep -q "only each pod's main process is watched" "$WORK/run/events.ndjson"; then
  skip "the host gives no process events (root needed)"
fi
[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err"; fail "exit $rc, expected 1 (requests cut)"; }
# Each deleted pod's worker exited, killed by SIGTERM, before its master.
python3 - "$WORK/run/events.ndjson" <<'PY' || fail "no worker exit before its master"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
deleted = {e["pod"] for e in events if e["kind"] == "deletion_started"}
for pod in deleted:
    workers = [e for e in events if e["kind"] == "process_exited" and e["pod"] == pod
               and e.get("signal") == 15]
    master = [e for e in events if e["kind"] == "pod_exited" and e["pod"] == pod]
    assert workers and master, (pod, workers, master)
    assert workers[0]["t_us"] < master[0]["t_us"], (workers, master)
    print(pod, workers[0]["detail"], "before its master's", master[0]["detail"])
PY
expect_grep '"hole": *"no-drain"' "$WORK/run/report.json"
expect_grep 'broke when its process pid [0-9]+ \(python3\) exited at [0-9.]+ s \(killed by SIGTERM\)' \
  "$WORK/run/report.json"
expect_grep 'before its main process exited' "$WORK/run/report.json"
echo "the worker's exit is quoted: $(grep -o 'broke when its process[^"]*' "$WORK/run/report.json" | head -1)"
