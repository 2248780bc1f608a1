#!/usr/bin/env bash
# Throughput of `zerodrop load --rate 0` against wrk and hey, in the same run, on the same nginx.
# nginx-light (one process, `return 200 "ok"`, keep-alive) listens on a free loopback port with
# its own temporary prefix; every tool uses 64 keep-alive connections for the same duration.
# With two or more CPUs, nginx is pinned to CPU 0 and the load tool to CPU 1.
# Target: zerodrop >= 1.0x wrk and >= 2x hey, while zerodrop classifies every request.
# Then the same over https (nginx with a self-signed certificate; zerodrop verifies it with
# --cacert, wrk and hey do not verify), when the openssl command is there.
# Usage: bench/load_vs_peers.sh [path/to/zerodrop]   env: DURATION=5 ROUNDS=1 CONNECTIONS=64
set -euo pipefail
zerodrop=${1:-build/zerodrop}
duration=${DURATION:-5}
rounds=${ROUNDS:-1}
connections=${CONNECTIONS:-64}
for tool in nginx wrk hey python3; do
  command -v "$tool" >/dev/null || { echo "load_vs_peers: $tool is missing (scripts/setup.sh bench)" >&2; exit 2; }
done
[ -x "$zerodrop" ] || { echo "load_vs_peers: no zerodrop binary at $zerodrop" >&2; exit 2; }

source "$(dirname "$0")/lib/nginx.bash"
work=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
NGINX_PID=
cleanup() {
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
server_cpu=() client_cpu=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  server_cpu=(taskset -c 0) client_cpu=(taskset -c 1)
fi
command -v openssl >/dev/null && NGINX_TLS=1
start_nginx "$work/nginx" "${server_cpu[@]}"
url=$NGINX_URL
tls=()

run_wrk() {
  "${client_cpu[@]}" wrk -t1 -c"$connections" -d"${duration}s" "$url" | awk '/^Requests\/sec/ {print $2}'
}
run_hey() {
  "${client_cpu[@]}" hey -z "${duration}s" -c "$connections" "$url" | awk '/Requests\/sec/ {print $2}'
}
run_zerodrop() {
  "${client_cpu[@]}" "$zerodrop" load "$url" "${tls[@]}" --rate 0 --connections "$connections" \
    --duration "${duration}s" --json "$work/zerodrop.json" >"$work/zerodrop.txt"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["failed"] == 0, j; print(round(j["requests"] / j["elapsed_s"], 1))' "$work/zerodrop.json"
}
best() { printf '%s\n' "$@" | sort -g | tail -1; }

compare() {  # compare LABEL: rounds of the three tools against $url, then the ratios
  local z=() w=() h=()
  for round in $(seq "$rounds"); do
    z+=("$(run_zerodrop)")
    w+=("$(run_wrk)")
    h+=("$(run_hey)")
    echo "$1 round $round: zerodrop ${z[-1]}  wrk ${w[-1]}  hey ${h[-1]} req/s"
  done
  local zb wb hb
  zb=$(best "${z[@]}") wb=$(best "${w[@]}") hb=$(best "${h[@]}")
  echo "$1: connections $connections, ${duration}s, best of $rounds, nginx on $url"
  printf '%-10s %12s req/s\n' zerodrop "$zb" wrk "$wb" hey "$hb"
  python3 - "$zb" "$wb" "$hb" "$1" <<'PY'
import sys
z, w, h = map(float, sys.argv[1:4])
label = sys.argv[4]
print(f"{label}: zerodrop / wrk = {z / w:.2f}x (target >= 1.0)")
print(f"{label}: zerodrop / hey = {z / h:.2f}x (target >= 2.0)")
PY
}

compare http
if [ -n "${NGINX_TLS_URL:-}" ]; then
  url=$NGINX_TLS_URL
  tls=(--cacert "$NGINX_TLS_CERT")
  compare https
else
  echo "https: skipped (no openssl command to make a certificate)"
fi
