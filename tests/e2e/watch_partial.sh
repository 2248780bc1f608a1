#!/usr/bin/env bash
# A watcher SIGKILLed mid-rollout and started again: the new one finds the rollout under way in
# the API (the Deployment's status) and measures it from there, marked partial (watch.json
# "whole": false, verdict partial, a RolloutPartial Event): it never invents a verdict for what it
# did not see. The killed one's folder, left without watch.json, is marked abandoned by the new
# one (the index does not say "in progress" forever), and its kubectl proxy died with it.
# cost: 40
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run="$WORK/lab"
# minReadySeconds 3 s per new pod: the rollout takes >= 6 s.
timeout 180 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 1 --rate 10 \
  --min-ready 3s --warmup 500ms --tail 20s --out "$run" -- "$EXAMPLES/graceful" --host '{ip}' \
  --port '{port}' --delay 1s >"$WORK/lab.out" 2>"$WORK/lab.err" &
lab=$!
wait_for_kube_api "$lab" "$WORK/lab.err"
export KUBECONFIG="$run/kubeconfig"
start_watch() {  # start_watch N
  "$ZERODROP" watch --kubeconfig "$KUBECONFIG" -n default --listen "127.0.0.1:$(free_port)" \
    --out "$WORK/runs" --tail 1s >"$WORK/watch-$1.out" 2>"$WORK/watch-$1.err" &
  watch=$!
  for _ in $(seq 100); do grep -qs "watching" "$WORK/watch-$1.err" && return 0; sleep 0.1; done
  cat "$WORK/watch-$1.err"; fail "watch $1 does not start"
}
start_watch 1
first=$watch
kubectl rollout restart deploy/web >/dev/null
for _ in $(seq 50); do grep -q "rollout started" "$WORK/watch-1.err" && break; sleep 0.1; done
grep -q "rollout started (the pod template changed" "$WORK/watch-1.err" || { cat "$WORK/watch-1.err"; fail "watch 1 did not see the rollout"; }
sleep 1
kill -KILL "$first"; wait "$first" 2>/dev/null || true
sleep 0.5
pgrep -f -- "--kubeconfig=$KUBECONFIG" >/dev/null && fail "the killed watcher's kubectl proxy outlived it"
start_watch 2
grep -q "rollout started (under way when watch first saw it, partial)" "$WORK/watch-2.err" \
  || { cat "$WORK/watch-2.err"; fail "watch 2 did not resume the rollout as partial"; }
# The killed watcher's folder: marked abandoned by the new leader before it measures anything.
killed=$(ls -d "$WORK"/runs/default.web.* | head -1)
expect_grep "$(basename "$killed"): abandoned by a watcher killed while measuring it" "$WORK/watch-2.err"
expect_grep '"verdict": "abandoned"' "$killed/watch.json"
for _ in $(seq 400); do
  [ "$(ls "$WORK"/runs/*/watch.json 2>/dev/null | wc -l)" = 2 ] && break
  sleep 0.1
done
[ "$(ls -d "$WORK"/runs/default.web.* | wc -l)" = 2 ] || fail "expected the killed watcher's folder beside the new one"
resumed=$(ls -d "$WORK"/runs/default.web.* | tail -1)
[ -f "$resumed/watch.json" ] || { cat "$WORK/watch-2.err"; fail "the resumed measurement did not finish"; }
expect_grep '"whole": false' "$resumed/watch.json"
expect_grep '"verdict": "partial"' "$resumed/watch.json"
[ "$(kubectl get events --field-selector reason=RolloutPartial -o name | wc -l)" = 1 ] \
  || fail "expected one RolloutPartial Event"
kill -TERM "$watch"
rc=0; wait "$watch" || rc=$?
[ "$rc" = 0 ] || fail "watch 2 exited $rc at SIGTERM"
kill -INT "$lab"; wait "$lab" 2>/dev/null || true
echo "PASS: the rollout resumed after a SIGKILL is partial"
