#!/usr/bin/env bash
# cost: 11
# Pods that never become Ready: the lab says why, naming the pod, its exit status and restarts,
# the port nobody listens on, or the probe's own error, and its log.
source "$(dirname "$0")/lib.sh"

not_ready() {  # not_ready NAME [lab flags...] -- COMMAND...
  local name=$1; shift
  expect_exit 2 "$ZERODROP" lab --replicas 2 --ready-timeout 2500ms --readiness-period 100ms \
    --out "$WORK/$name" "$@"
  cp "$WORK/err" "$WORK/$name.err"
}

not_ready false -- false
expect_grep 'the pods were not ready within 2.5s: pod pod-1 exited with exit code 1, restarted [0-9]+ times?' "$WORK/false.err"
expect_grep "log $WORK/false/pods/pod-1.log" "$WORK/false.err"
expect_grep '\(pod-2 likewise\)' "$WORK/false.err"

not_ready sleep -- sleep 1000
expect_grep 'pod pod-1 is running, but nothing listens on 127\.[0-9.]+:[0-9]+ \(readiness tcp: Connection refused\)' "$WORK/sleep.err"
expect_grep "log $WORK/sleep/pods/pod-1.log" "$WORK/sleep.err"

not_ready exec --readiness "exec:'podcli check'" -- sleep 1000
expect_grep "pod pod-1 is running, but its readiness probe exec 'podcli check' fails: cannot run 'podcli': not found in PATH \(--readiness replaces the probe\)" "$WORK/exec.err"
expect_grep "log $WORK/exec/pods/pod-1.log" "$WORK/exec.err"
echo "every cause named: $(cat "$WORK/false.err" "$WORK/sleep.err" "$WORK/exec.err" | grep -c 'not ready within')"
