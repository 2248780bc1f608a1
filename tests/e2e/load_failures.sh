#!/usr/bin/env bash
# Failures are classified, change the exit code, and --max-failures tolerates some.
source "$(dirname "$0")/lib.sh"
server=$BUILD_DIR/tests/testing/misbehaving-server
need_built "$server"

start_server() {  # start_server NAME ARGS...: URL in $url
  local name=$1; shift
  "$server" --port-file "$WORK/$name.port" "$@" >/dev/null &
  for _ in $(seq 100); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cat "$WORK/$name.port")/"
}

start_server s503 --mode status --status 503
expect_exit 1 "$ZERODROP" load "$url" --rate 50 --duration 0.2s
expect_all_failed http_503 10 "$WORK/out"
expect_grep '^disruption ' "$WORK/out"
expect_exit 0 "$ZERODROP" load "$url" --rate 50 --duration 0.2s --max-failures 10
expect_exit 0 "$ZERODROP" load "$url" --rate 50 --duration 0.2s --ok-status 200-399,503

start_server reset --mode reset
expect_exit 1 "$ZERODROP" load "$url" --rate 50 --duration 0.2s
expect_all_failed reset_before_response 10 "$WORK/out"

start_server stall --mode stall
expect_exit 1 "$ZERODROP" load "$url" --rate 20 --duration 0.1s --timeout 200ms
expect_all_failed timeout 2 "$WORK/out"

start_server headers --mode endless-headers
expect_exit 1 "$ZERODROP" load "$url" --rate 20 --duration 0.1s --timeout 2s
expect_all_failed protocol_error 2 "$WORK/out"

start_server refuse --mode refuse
expect_exit 1 "$ZERODROP" load "$url" --rate 20 --duration 0.1s
expect_all_failed connect_refused 2 "$WORK/out"
