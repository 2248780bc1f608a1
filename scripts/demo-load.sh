#!/usr/bin/env bash
# Demo of `zerodrop load` without the lab: a healthy test server for 3 s, then one that answers
# 503, so both a clean and a failing summary show. Usage: scripts/demo-load.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
zerodrop=$build/zerodrop
server=$build/tests/testing/misbehaving-server
[ -x "$zerodrop" ] && [ -x "$server" ] || { echo "demo-load: build first (make build)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-demo.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

start() {  # start NAME ARGS...: sets $url to the new server's URL
  "$server" --port-file "$work/$1.port" "${@:2}" >/dev/null &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$work/$1.port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cat "$work/$1.port")/"
}

start ok --mode ok --name demo-pod
echo "== zerodrop load $url --rate 500 --duration 3s   (a healthy server)"
"$zerodrop" load "$url" --rate 500 --duration 3s --interval 1s
start failing --mode status --status 503
echo
echo "== zerodrop load $url --rate 100 --duration 1s   (a server answering 503: exit 1)"
"$zerodrop" load "$url" --rate 100 --duration 1s || echo "(exit code $?: requests failed)"
