#!/usr/bin/env bash
# Each pod's command is PID 1 of its own PID namespace, as in a container: a bash wrapper with no
# SIGTERM handler drops the stop signal, its server keeps serving until SIGKILL at the end of the
# grace period, and the diagnosis says so (no deregistration-race; the kill and its cost named).
# With --pid-namespace off the lab says that the semantics differ.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is missing"
python=$(python3 -c 'import sys; print(sys.executable)')  # not a shim that forks on its own

lab() {  # lab NAME [lab flags...]: a short rollout of the bash-wrapped python server
  local name=$1; shift
  rc=0
  "$ZERODROP" lab --replicas 2 --nodes 2 --propagation 300ms --rate 100 --connections 8 \
    --warmup 500ms --tail 300ms --readiness-period 100ms --grace 2s --out "$WORK/$name" "$@" \
    -- bash -c "$python -m http.server {port} --bind {ip}; echo done" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}

lab pid1
if grep -q "pods run as plain process groups" "$WORK/pid1.err"; then
  skip "this host allows no PID namespace: $(cat "$WORK/pid1.err")"
fi
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$WORK/pid1.out" "$WORK/pid1.err"; fail "exit $rc"; }
ignored=$(grep -c '"kind":"signal_ignored"' "$WORK/pid1/events.ndjson" || true)
[ "$ignored" -ge 2 ] || fail "expected a signal_ignored event per deleted pod, got $ignored"
expect_grep 'PID 1 \(bash\) has no handler for SIGTERM' "$WORK/pid1/events.ndjson"
# Each deleted pod was killed at grace: it did not exit before the SIGKILL.
kills=$(grep -c '"grace period over: SIGKILL' "$WORK/pid1/events.ndjson" || true)
[ "$kills" -ge 2 ] || fail "expected a SIGKILL at grace per deleted pod, got $kills"
# No hole blamed on a stop the pod never made; the kill and its cost are named.
if grep -q '"hole": *"deregistration-race"' "$WORK/pid1/report.json"; then
  cat "$WORK/pid1.out"; fail "deregistration-race reported although SIGTERM did nothing"
fi
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["grace_kills"]))' \
  "$WORK/pid1/report.json")" -ge 2 ] || fail "report.json lists no grace kills"
tr -s ' \n' ' ' <"$WORK/pid1.out" >"$WORK/pid1.flat"  # the terminal report wraps its lines
expect_grep 'SIGTERM at [0-9.]+ s did nothing \(PID 1 \(bash\) has no handler' "$WORK/pid1.flat"
expect_grep 'SIGKILL at [0-9.]+ s cut [0-9]+ requests? in flight \(grace-overrun\); it took [0-9.]+ s from its deletion to its exit' "$WORK/pid1.flat"
expect_grep 'the stop signal did nothing at [0-9]+ pods' "$WORK/pid1.flat"
echo "pid1: $ignored stop signals dropped, $kills kills at grace, no deregistration-race"

lab off --pid-namespace off
expect_grep 'pods run as plain process groups \(--pid-namespace off\)' "$WORK/off.err"
expect_grep 'pods run as plain process groups' "$WORK/off/events.ndjson"
if grep -q '"kind":"signal_ignored"' "$WORK/off/events.ndjson"; then
  fail "a process group dropped the stop signal"
fi
echo "off: the lab said the semantics differ"
