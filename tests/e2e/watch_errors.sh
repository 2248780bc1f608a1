#!/usr/bin/env bash
# zerodrop watch's bad input, each a one-line error and exit 2, nothing left running: flags out of
# range, a namespace that does not exist, a kubeconfig whose user lacks some permissions (the lab's
# --kube-api-deny: every missing one named in one line), a port already taken.
# cost: 15
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"

# one_line_error CODE PATTERN CMD...: exit CODE, stderr one line matching PATTERN.
one_line_error() {
  local code=$1 pattern=$2; shift 2
  local rc=0
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" = "$code" ] || { cat "$WORK/err"; fail "exit $rc, expected $code: $*"; }
  [ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "not one line: $*"; }
  grep -Eq -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "no '$pattern': $*"; }
}

one_line_error 2 "--rate 0: expected requests per second above 0" "$ZERODROP" watch --rate 0
one_line_error 2 "--lease-duration: at least 2s" "$ZERODROP" watch --lease-duration 1s
one_line_error 2 "--listen" "$ZERODROP" watch --listen 127.0.0.1:99999

run="$WORK/lab"
timeout 120 "$ZERODROP" lab --kube-api --action none --replicas 1 --nodes 1 --rate 10 \
  --warmup 500ms --kube-api-deny watch/pods --kube-api-deny create/events --out "$run" \
  -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' >"$WORK/lab.out" 2>"$WORK/lab.err" &
lab=$!
wait_for_kube_api "$lab" "$WORK/lab.err"
kc="$run/kubeconfig"

one_line_error 2 "namespace nope does not exist" \
  "$ZERODROP" watch --kubeconfig "$kc" -n nope --listen 127.0.0.1:0 --out "$WORK/runs"
one_line_error 2 "missing permissions in namespace default: pods watch, events create" \
  "$ZERODROP" watch --kubeconfig "$kc" -n default --listen 127.0.0.1:0 --out "$WORK/runs"
one_line_error 2 "--out /proc/nope: cannot write there" \
  "$ZERODROP" watch --kubeconfig "$kc" -n default --listen 127.0.0.1:0 --out /proc/nope

kill -INT "$lab"; wait "$lab" 2>/dev/null || true
pgrep -f -- "--kubeconfig=$kc" >/dev/null && fail "a kubectl proxy was left running"
echo "PASS: watch's bad input: one line each"
