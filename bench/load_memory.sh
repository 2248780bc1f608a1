#!/usr/bin/env bash
# Resident memory of `zerodrop load` does not grow with the number of requests: peak RSS after
# 1,000,000 requests vs after 100,000 (closed loop, 64 connections, against nginx-light on
# loopback), then 1,000,000 again with --records streaming to /dev/null.
# Target: the 1M run within 10 % (+1 MiB) of the 100k run, with or without --records.
# --http2: the same over HTTP/2 (`zerodrop load --http2`, its defaults of 8 connections x 100
# streams, against the nginx speaking h2c by prior knowledge): nghttp2 keeps no closed streams and
# each connection a fixed array of stream slots, so the target is the same. Measured 2026-12-02
# with --http2: 7672 KiB after 1e5, 7800 KiB after 1e6, 8056 KiB with --records (1.02x, 1.05x).
# Usage: bench/load_memory.sh [--http2] [path/to/zerodrop]   env: SMALL=100000 LARGE=1000000
set -euo pipefail
protocol=(--connections 64)
if [ "${1:-}" = --http2 ]; then
  protocol=(--http2)
  export NGINX_HTTP2=1
  shift
fi
zerodrop=${1:-build/zerodrop}
small=${SMALL:-100000}
large=${LARGE:-1000000}
for tool in nginx python3 curl /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "load_memory: $tool is missing (scripts/setup.sh bench)" >&2; exit 2; }
done
[ -x "$zerodrop" ] || { echo "load_memory: no zerodrop binary at $zerodrop" >&2; exit 2; }

source "$(dirname "$0")/lib/nginx.bash"
work=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
NGINX_PID=
cleanup() {
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
start_nginx "$work/nginx"
url=$NGINX_URL

# peak_rss N [FLAGS...]: runs N requests, prints the peak resident set size in KiB.
peak_rss() {
  local n=$1; shift
  /usr/bin/time -v "$zerodrop" load "$url" "${protocol[@]}" --rate 0 --duration 1h \
    --requests "$n" --json "$work/summary.json" "$@" >"$work/out" 2>"$work/time"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["requests"] == int(sys.argv[2]) and j["failed"] == 0, j' \
    "$work/summary.json" "$n"
  awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time"
}

rss_small=$(peak_rss "$small")
rss_large=$(peak_rss "$large")
rss_records=$(peak_rss "$large" --records /dev/null)
echo "zerodrop load ${protocol[*]} against nginx on $url"
printf 'peak RSS after %9d requests: %7d KiB\n' "$small" "$rss_small"
printf 'peak RSS after %9d requests: %7d KiB\n' "$large" "$rss_large"
printf 'peak RSS after %9d requests: %7d KiB (--records streaming)\n' "$large" "$rss_records"
python3 - "$rss_small" "$rss_large" "$rss_records" <<'PY'
import sys
small, large, records = map(int, sys.argv[1:])
ok = all(x <= small * 1.10 + 1024 for x in (large, records))
print(f"growth: {large / small:.3f}x without records, {records / small:.3f}x with --records"
      f" -> {'PASS' if ok else 'FAIL'} (target <= 1.10x + 1 MiB)")
sys.exit(0 if ok else 1)
PY
