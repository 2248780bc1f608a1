#!/usr/bin/env bash
# The lab's routers against HAProxy in the same role, in front of the same nginx backend:
# throughput with wrk (keep-alive), one process / one thread each. Prints ratios.
# Targets: l4 >= 0.8 x HAProxy (mode tcp), l7 >= 0.5 x HAProxy (mode http).
# Usage: bench/lab_overhead.sh [path/to/zerodrop]   (DURATION=5s CONNECTIONS=50 to change)
set -euo pipefail
ZERODROP=${1:-build/zerodrop}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-50}
for tool in nginx haproxy wrk; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] \
    || { echo "lab_overhead: skipped: '$tool' is missing (scripts/setup.sh bench installs it)"; exit 0; }
done
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

wait_port() {
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done
  echo "lab_overhead: nothing listens on port $1" >&2; cat "$WORK"/*.log "$WORK"/nginx/error.log >&2 2>/dev/null; exit 1
}

# The backend: nginx, one worker, a tiny fixed answer.
source "$(dirname "$0")/lib/nginx.bash"
start_nginx "$WORK/nginx"
pids+=("$NGINX_PID")
backend=$NGINX_PORT

# HAProxy in both roles, one thread.
hl4=$(bench_free_port); hl7=$(bench_free_port)
cat >"$WORK/haproxy.cfg" <<CONF
global
  nbthread 1
  maxconn 4000
defaults
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend l4
  mode tcp
  bind 127.0.0.1:$hl4
  default_backend l4
backend l4
  mode tcp
  server nginx 127.0.0.1:$backend
frontend l7
  mode http
  bind 127.0.0.1:$hl7
  default_backend l7
backend l7
  mode http
  http-reuse always
  server nginx 127.0.0.1:$backend
CONF
"$HAPROXY" -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 & pids+=($!)

# The lab's routers, alone in front of the same backend.
zl4=$(bench_free_port); zl7=$(bench_free_port)
"$ZERODROP" lab --router-only l4 --listen "127.0.0.1:$zl4" --backend "127.0.0.1:$backend" >/dev/null & pids+=($!)
"$ZERODROP" lab --router-only l7 --listen "127.0.0.1:$zl7" --backend "127.0.0.1:$backend" >/dev/null & pids+=($!)
for p in $backend $hl4 $hl7 $zl4 $zl7; do wait_port "$p"; done

rps() {  # requests per second wrk measured through port $1
  wrk -t1 -c"$CONNECTIONS" -d"$DURATION" "http://127.0.0.1:$1/" | awk '/Requests\/sec/ {print $2}'
}
echo "lab_overhead: wrk -t1 -c$CONNECTIONS -d$DURATION, nginx backend, one thread per proxy"
direct=$(rps "$backend")
h4=$(rps "$hl4"); z4=$(rps "$zl4")
h7=$(rps "$hl7"); z7=$(rps "$zl7")
printf '  %-28s %10s req/s\n' "nginx direct" "$direct" "haproxy mode tcp" "$h4" \
  "zerodrop l4 router" "$z4" "haproxy mode http" "$h7" "zerodrop l7 router" "$z7"
awk -v z4="$z4" -v h4="$h4" -v z7="$z7" -v h7="$h7" 'BEGIN {
  r4 = z4 / h4; r7 = z7 / h7
  printf "  l4 ratio %.2f x HAProxy (target >= 0.80): %s\n", r4, (r4 >= 0.8 ? "met" : "NOT met")
  printf "  l7 ratio %.2f x HAProxy (target >= 0.50): %s\n", r7, (r7 >= 0.5 ? "met" : "NOT met")
}'
