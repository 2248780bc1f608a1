#!/usr/bin/env bash
# Each real ingress of `zerodrop lab --ingress` (Debian's nginx, HAProxy) against the lab's own l7
# router, in the same role: alone in front of the same nginx backend, configured exactly as the
# lab configures them (one worker / one thread, upstream keep-alive, access log, the headers that
# name the pod). Throughput: wrk with keep-alive, closed loop. Latency: zerodrop load, open loop at
# RATE (below every router's saturation, so queueing does not swamp what the router adds): the
# p99 each router adds over the backend alone. Prints the ratios ingress / l7 router.
# Usage: bench/lab_ingress.sh [path/to/zerodrop]   (DURATION=5s CONNECTIONS=50 RATE=1000)
set -euo pipefail
ZERODROP=${1:-build/zerodrop}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-50}
RATE=${RATE:-1000}
for tool in nginx haproxy wrk; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] \
    || { echo "lab_ingress: skipped: '$tool' is missing (scripts/setup.sh bench installs it)"; exit 0; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

source "$(dirname "$0")/lib/nginx.bash"
start_nginx "$WORK/backend"
pids+=("$NGINX_PID")

# Each router alone in front of the backend; it prints its port once it routes to it.
declare -A port
for router in l7 nginx haproxy; do
  "$ZERODROP" lab --router-only "$router" --listen 127.0.0.1:0 --backend "127.0.0.1:$NGINX_PORT" \
    >"$WORK/$router.out" 2>"$WORK/$router.err" & pids+=($!)
  for _ in $(seq 200); do grep -q '^listening on' "$WORK/$router.out" && break; sleep 0.05; done
  port[$router]=$(sed -n 's/^listening on 127.0.0.1://p' "$WORK/$router.out")
  [ -n "${port[$router]}" ] || { cat "$WORK/$router.err"; echo "lab_ingress: $router did not start"; exit 1; }
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
  "nginx backend; one worker/thread per router"
direct_rps=$(rps "$NGINX_PORT"); direct_p99=$(p99 "$NGINX_PORT")
printf '  %-16s %10s req/s  p99 %7.3f ms\n' "backend direct" "$direct_rps" "$direct_p99"
declare -A through added
for router in l7 nginx haproxy; do
  through[$router]=$(rps "${port[$router]}")
  p=$(p99 "${port[$router]}")
  added[$router]=$(awk -v p="$p" -v d="$direct_p99" 'BEGIN {printf "%.3f", p - d}')
  printf '  %-16s %10s req/s  p99 %7.3f ms (adds %s ms)\n' "$router" "${through[$router]}" "$p" \
    "${added[$router]}"
done
for ingress in nginx haproxy; do
  awk -v name="$ingress" -v r="${through[$ingress]}" -v r7="${through[l7]}" \
    -v a="${added[$ingress]}" -v a7="${added[l7]}" 'BEGIN {
      printf "  %-8s req/s %.2f x the l7 router; added p99 %s ms vs %s ms", name, r / r7, a, a7
      if (a7 > 0) printf " (%.2f x)", a / a7
      printf "\n"
    }'
done
