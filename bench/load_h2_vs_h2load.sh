#!/usr/bin/env bash
# HTTP/2 and gRPC throughput of `zerodrop load --rate 0` against h2load (Debian nghttp2-client),
# in the same run, on the same server: the project's h2-server (h2c, nghttp2's server API), plain
# and in gRPC mode. Same connections and streams per connection, same duration, closed loop; with
# two or more CPUs the server is pinned to CPU 0 and the client to CPU 1. Prints req/s and client
# CPU microseconds per request (user + sys / requests) for both, and the ratios.
# Targets: req/s >= 0.9x h2load, CPU per request <= 1.5x h2load's (zerodrop classifies every
# response, checks grpc-status, keeps records; h2load checks neither).
# Usage: bench/load_h2_vs_h2load.sh [build dir]   env: DURATION=3 CONNECTIONS=4 STREAMS=32
set -euo pipefail
build=${1:-build}
duration=${DURATION:-3}
connections=${CONNECTIONS:-4}
streams=${STREAMS:-32}
zerodrop=$build/zerodrop
server=$build/tests/testing/h2-server
for tool in h2load python3; do
  command -v "$tool" >/dev/null || { echo "load_h2_vs_h2load: $tool is missing (scripts/setup.sh bench)" >&2; exit 2; }
done
for bin in "$zerodrop" "$server"; do
  [ -x "$bin" ] || { echo "load_h2_vs_h2load: $bin is not built" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
server_cpu=() client_cpu=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  server_cpu=(taskset -c 0) client_cpu=(taskset -c 1)
fi

# cpu_of CMD...: runs CMD, prints "SECONDS" of user + sys CPU it used on its last line.
cpu_of() {
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=False)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"cpu {r.ru_utime + r.ru_stime:.3f}")' "$@"
}

start_server() {  # start_server ARGS...: h2-server in the background, URL in $url
  [ -n "$server_pid" ] && kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  rm -f "$work/port"
  "${server_cpu[@]}" "$server" --port-file "$work/port" "$@" >/dev/null &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cat "$work/port")/"
}

compare() {  # compare LABEL ZERODROP-FLAGS -- H2LOAD-FLAGS
  local label=$1; shift
  local zflags=() hflags=()
  while [ "$1" != -- ]; do zflags+=("$1"); shift; done
  shift; hflags=("$@")
  cpu_of "${client_cpu[@]}" "$zerodrop" load "$url" "${zflags[@]}" --rate 0 \
    --connections "$connections" --streams "$streams" --duration "${duration}s" \
    --json "$work/z.json" >"$work/z.txt"
  local z_cpu z_req z_rate
  z_cpu=$(awk '/^cpu / {print $2}' "$work/z.txt")
  read -r z_req z_rate < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["ok"], round(j["requests"]/j["elapsed_s"],1)); assert j["failed"] == 0, j["failures"]' "$work/z.json")
  cpu_of "${client_cpu[@]}" h2load -t1 -c"$connections" -m"$streams" -D"$duration" \
    "${hflags[@]}" "$url" >"$work/h.txt"
  local h_cpu h_req h_rate
  h_cpu=$(awk '/^cpu / {print $2}' "$work/h.txt")
  h_req=$(awk '/^requests:/ {print $8}' "$work/h.txt")
  h_rate=$(awk '/^finished in/ {print $4}' "$work/h.txt")
  python3 - "$label" "$z_rate" "$z_cpu" "$z_req" "$h_rate" "$h_cpu" "$h_req" <<'PY'
import sys
label, zr, zc, zn, hr, hc, hn = sys.argv[1], *map(float, sys.argv[2:])
zus, hus = zc / zn * 1e6, hc / hn * 1e6
print(f"{label}: zerodrop {zr:.0f} req/s, {zus:.2f} us CPU/request; "
      f"h2load {hr:.0f} req/s, {hus:.2f} us CPU/request; "
      f"ratios: req/s {zr / hr:.2f}x (target >= 0.9), CPU/request {zus / hus:.2f}x (target <= 1.5)")
PY
}

start_server --mode ok
compare "h2c GET" --http2 -- 
start_server --mode ok --grpc
printf '\0\0\0\0\5hello' >"$work/frame.bin"
compare "gRPC unary" --grpc zd.Echo/Call --body hello -- \
  -d "$work/frame.bin" -H 'content-type: application/grpc' -H 'te: trailers'
echo "(h2load checks no grpc-status; zerodrop checks it on every response)"
