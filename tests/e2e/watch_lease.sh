#!/usr/bin/env bash
# Two zerodrop watch replicas with --leader-elect against `zerodrop lab --kube-api`: one leads
# (holds the coordination.k8s.io Lease, /readyz 200, zerodrop_watch_leader 1), the other follows
# (/readyz 503, reports refused); the leader SIGKILLed, the follower takes the Lease over within
# its duration (3 s) plus a renewal period, and the Lease counts one transition.
# cost: 30
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
command -v curl >/dev/null || skip "no curl on this host"
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run="$WORK/lab"
timeout 120 "$ZERODROP" lab --kube-api --action none --replicas 1 --nodes 1 --rate 10 \
  --warmup 500ms --out "$run" -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' \
  >"$WORK/lab.out" 2>"$WORK/lab.err" &
lab=$!
wait_for_kube_api "$lab" "$WORK/lab.err"
export KUBECONFIG="$run/kubeconfig"

start() {  # start NAME PORT
  "$ZERODROP" watch --kubeconfig "$KUBECONFIG" -n default --leader-elect --identity "$1" \
    --lease-duration 3s --listen "127.0.0.1:$2" --out "$WORK/runs-$1" \
    >"$WORK/$1.out" 2>"$WORK/$1.err" &
}
pa=$(free_port); start watch-a "$pa"; a=$!
for _ in $(seq 100); do grep -q "leading" "$WORK/watch-a.err" && break; sleep 0.1; done
grep -q "leading (lease zerodrop-watch)" "$WORK/watch-a.err" || { cat "$WORK/watch-a.err"; fail "watch-a does not lead"; }
pb=$(free_port); start watch-b "$pb"; b=$!
sleep 3
holder=$(kubectl get lease zerodrop-watch -o 'jsonpath={.spec.holderIdentity}')
[ "$holder" = watch-a ] || fail "the Lease is held by '$holder', not watch-a"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$pa/readyz")" = 200 ] || fail "the leader is not ready"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$pb/readyz")" = 503 ] || fail "the follower is ready"
curl -sf "http://127.0.0.1:$pb/metrics" | has -x 'zerodrop_watch_leader 0' || fail "the follower says it leads"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary '' "http://127.0.0.1:$pb/agent/v1/report?pod=p&node=n")
[ "$code" = 503 ] || fail "the follower took an agent's report ($code)"
grep -q "leading" "$WORK/watch-b.err" && fail "watch-b leads beside watch-a"

kill -KILL "$a"; wait "$a" 2>/dev/null || true
killed=$(date +%s.%N)
for _ in $(seq 100); do grep -q "leading" "$WORK/watch-b.err" && break; sleep 0.1; done
took=$(python3 -c "import time; print(f'{time.time() - $killed:.1f}')")
grep -q "leading (lease zerodrop-watch)" "$WORK/watch-b.err" || { cat "$WORK/watch-b.err"; fail "watch-b did not take the Lease over"; }
holder=$(kubectl get lease zerodrop-watch -o 'jsonpath={.spec.holderIdentity}')
transitions=$(kubectl get lease zerodrop-watch -o 'jsonpath={.spec.leaseTransitions}')
[ "$holder" = watch-b ] || fail "the Lease is held by '$holder' after the take-over"
[ "$transitions" = 1 ] || fail "the Lease counts $transitions transitions, expected 1"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$pb/readyz")" = 200 ] || fail "the new leader is not ready"
kill -TERM "$b"
rc=0; wait "$b" || rc=$?
[ "$rc" = 0 ] || fail "watch-b exited $rc at SIGTERM"
kill -INT "$lab"; wait "$lab" 2>/dev/null || true
echo "PASS: watch-b took the Lease over ${took}s after watch-a was killed (lease 3 s)"
