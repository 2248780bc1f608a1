#!/usr/bin/env bash
# Nothing of a pod outlives the lab, even a process that left the pod's process group (setsid)
# and a lab killed with SIGKILL: SIGKILL of a pod's PID 1 ends its whole PID namespace.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is missing"
python=$(python3 -c 'import sys; print(sys.executable)')  # not a shim that forks on its own
command -v setsid >/dev/null || skip "setsid is missing"
marker=$((900000 + RANDOM))  # sleep's argument: names this test's escapees

start_lab() {  # start_lab NAME: pods that start an escapee, then serve
  "$ZERODROP" lab --replicas 2 --nodes 1 --warmup "$2" --tail 200ms --readiness-period 100ms \
    --grace 1s --rate 20 --out "$WORK/$1" \
    -- bash -c "setsid sleep $marker & exec $python -m http.server {port} --bind {ip}" \
    >"$WORK/$1.out" 2>"$WORK/$1.err" &
  lab=$!
}

escapees() { pgrep -f "^sleep $marker\$" || true; }

wait_gone() {  # wait_gone WHAT: fails if escapees still run after 5 s
  for _ in $(seq 50); do
    [ -z "$(escapees)" ] && return 0
    sleep 0.1
  done
  fail "$1: processes outlived the lab: $(escapees | tr '\n' ' ')"
}

# A lab that ends normally.
start_lab normal 300ms
wait "$lab" || true
if grep -q "pods run as plain process groups" "$WORK/normal.err"; then
  skip "this host allows no PID namespace"
fi
wait_gone "normal end"

# A lab killed with SIGKILL once its pods run.
start_lab killed 60s
for _ in $(seq 100); do
  [ "$(escapees | wc -l)" -ge 2 ] && break
  sleep 0.1
done
[ "$(escapees | wc -l)" -ge 2 ] || { cat "$WORK/killed.err"; fail "the pods did not start"; }
kill -KILL "$lab"
wait "$lab" 2>/dev/null || true
wait_gone "SIGKILL of the lab"
echo "no process outlived the lab, normal end or SIGKILL"
