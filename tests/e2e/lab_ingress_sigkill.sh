#!/usr/bin/env bash
# A lab killed with SIGKILL mid-run leaves nothing of its real ingresses behind: no nginx master
# or worker, no HAProxy, no socket file (the keeper that holds every child kills them).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
for ingress in nginx haproxy; do
  [ -x "/usr/sbin/$ingress" ] || skip "$ingress is not installed (scripts/setup.sh test)"
done

labs=()
for ingress in nginx haproxy; do
  "$ZERODROP" lab --ingress "$ingress" --replicas 1 --nodes 1 --warmup 60s \
    --readiness-period 100ms --out "$WORK/$ingress" -- "$EXAMPLES/naive" --host '{ip}' \
    --port '{port}' >"$WORK/$ingress.out" 2>&1 &
  labs+=($!)
done
ingress_pids() {  # the programs started in the run's ingress folder, and their children
  local pid
  for pid in $(pgrep -f "$WORK/$1/ingress"); do echo "$pid $(pgrep -P "$pid")"; done | tr '\n' ' '
}
for ingress in nginx haproxy; do
  for _ in $(seq 100); do  # the load runs once the ingress routes to the ready pod
    grep -q '"router_applied"' "$WORK/$ingress/events.ndjson" 2>/dev/null && break
    sleep 0.1
  done
  grep -q '"router_applied"' "$WORK/$ingress/events.ndjson" \
    || { cat "$WORK/$ingress.out"; fail "$ingress: the ingress never applied the pod"; }
done
nginx_pids=$(ingress_pids nginx)
haproxy_pids=$(ingress_pids haproxy)
[ "$(echo "$nginx_pids" | wc -w)" -ge 2 ] || fail "no nginx master and worker running: $nginx_pids"
[ "$(echo "$haproxy_pids" | wc -w)" -ge 1 ] || fail "no haproxy running"

kill -KILL "${labs[@]}"
wait "${labs[@]}" 2>/dev/null || true
alive() {  # a pid that still runs (zombies hold no socket)
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
for _ in $(seq 50); do
  left=""
  for pid in $nginx_pids $haproxy_pids; do alive "$pid" && left="$left $pid"; done
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "ingress processes outlived the SIGKILLed lab:$left"
sockets=$(find "$WORK/nginx" "$WORK/haproxy" -type s)
[ -z "$sockets" ] || fail "socket files left: $sockets"
echo "nginx ($nginx_pids) and haproxy ($haproxy_pids) died with the lab"
