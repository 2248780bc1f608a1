#!/usr/bin/env bash
# Each real ingress of `zerodrop lab --ingress` (Debian's nginx, HAProxy) against the lab's own l7
# router, in the same role: alone in front of the same nginx backend, configured exactly as the
# lab configures them (one worker / one thread, upstream keep-alive, access log, the headers that
# name the pod). Throughput: wrk with keep-alive, closed loop. Latency: zerodrop load, open loop at
# RATE (below every router's saturation, so queueing does not swamp what the router adds): the
# p99 each router adds over the backend alone. Prints the ratios ingress / l7 router.
# The machine is shared: every measure is taken ROUNDS times, the routers interleaved, and the
# best kept (highest req/s, lowest p99), which is the least disturbed.
# Usage: bench/lab_ingress.sh [path/to/zerodrop]   (DURATION=5s CONNECTIONS=50 RATE=1000 ROUNDS=3)
set -euo pipefail
ZERODROP=${1:-build/zerodrop}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-50}
RATE=${RATE:-1000}
ROUNDS=${ROUNDS:-3}
for tool in nginx haproxy wrk; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] \
    || { echo "lab_ingress: skipped: '$tool' is missing (scripts/setup.sh bench)"; exit 0; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

source "$(dirname "$0")/lib/nginx.bash"
start_nginx "$WORK/backend"
pids+=("$NGINX_PID")

# Each router alone in front of the backend; it prints its port once it routes to it.
declare -A port
for router in l7 nginx haproxy; do
  "$ZERODROP" lab --router-only "$router" --listen 127.0.0.1:0 --backend "127.0.0.1:$NGINX_PORT" \
    >"$WORK/$router.out" 2>"$WORK/$router.err" & pids+=($!)
  for _ in $(seq 200); do grep -qs '^listening on' "$WORK/$router.out" && break; sleep 0.05; done
  port[$router]=$(sed -n 's/^listening on 127.0.0.1://p' "$WORK/$router.out")
  [ -n "${port[$router]}" ] \
    || { cat "$WORK/$router.err"; echo "lab_ingress: $router did not start"; exit 1; }
done

# rps PORT: the requests per second wrk reaches through 127.0.0.1:PORT.
rps() {
  wrk -t1 -c"$CONNECTIONS" -d"$DURATION" "http://127.0.0.1:$1/" | awk '/Requests\/sec/ {print $2}'
}
# p99 PORT: the p99 latency in ms of zerodrop load at RATE through 127.0.0.1:PORT.
p99() {
  "$ZERODROP" load "http://127.0.0.1:$1/" --rate "$RATE" -d "$DURATION" -c 16 \
    --json "$WORK/load.json" >/dev/null
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["latency_ms"]["p99"])' \
    "$WORK/load.json"
}
echo "lab_ingress: wrk -t1 -c$CONNECTIONS -d$DURATION; zerodrop load --rate $RATE -d $DURATION;" \
  "nginx backend; one worker/thread per router; best of $ROUNDS rounds"
declare -A through p99s
for _ in $(seq "$ROUNDS"); do
  for router in direct l7 nginx haproxy; do
    target=${port[$router]:-$NGINX_PORT}
    r=$(rps "$target"); p=$(p99 "$target")
    through[$router]=$(awk -v a="${through[$router]:-0}" -v b="$r" 'BEGIN {print (b > a ? b : a)}')
    p99s[$router]=$(awk -v a="${p99s[$router]:-1e9}" -v b="$p" 'BEGIN {print (b < a ? b : a)}')
  done
done
printf '  %-16s %10s req/s  p99 %7.3f ms\n' "backend direct" "${through[direct]}" "${p99s[direct]}"
declare -A added
for router in l7 nginx haproxy; do
  added[$router]=$(awk -v p="${p99s[$router]}" -v d="${p99s[direct]}" \
    'BEGIN {printf "%.3f", p - d}')
  printf '  %-16s %10s req/s  p99 %7.3f ms (adds %s ms)\n' "$router" "${through[$router]}" \
    "${p99s[$router]}" "${added[$router]}"
done
for ingress in nginx haproxy; do
  awk -v name="$ingress" -v r="${through[$ingress]}" -v r7="${through[l7]}" \
    -v a="${added[$ingress]}" -v a7="${added[l7]}" 'BEGIN {
      printf "  %-8s req/s %.2f x the l7 router; added p99 %s ms vs %s ms", name, r / r7, a, a7
      if (a7 > 0) printf " (%.2f x)", a / a7
      printf "\n"
    }'
done
