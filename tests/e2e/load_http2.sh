#!/usr/bin/env bash
# zerodrop load --http2 / --grpc end to end: against the project's h2-server (classes, resends,
# exit codes, records) and against a real gRPC server (Debian's python3-grpcio) for interop.
source "$(dirname "$0")/lib.sh"
server=$BUILD_DIR/tests/testing/h2-server
need_built "$server"

start_server() {  # start_server NAME ARGS...: URL in $url
  local name=$1; shift
  "$server" --port-file "$WORK/$name.port" "$@" >/dev/null &
  for _ in $(seq 100); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cat "$WORK/$name.port")/"
}

start_server ok --mode ok
expect_exit 0 "$ZERODROP" load --http2 "$url" --rate 50 --duration 0.2s --records "$WORK/r.ndjson"
expect_all_ok 10 "$WORK/out"
expect_grep '^HTTP/2 +0 GOAWAY, 0 connection\(s\) closed without GOAWAY, 0 unprocessed' "$WORK/out"
expect_grep '"proto":"h2"' "$WORK/r.ndjson"

start_server grpc --mode ok --grpc
expect_exit 0 "$ZERODROP" load --grpc zd.Echo/Call --body hi "$url" --rate 50 --duration 0.2s \
  --json "$WORK/s.json"
expect_all_ok 10 "$WORK/out"
sent=$(load_sent "$WORK/out")
expect_grep "^grpc-status OK $sent\$" "$WORK/out"
expect_grep '"protocol": "grpc"' "$WORK/s.json"

start_server unavailable --mode grpc-status --code 14 --grpc
expect_exit 1 "$ZERODROP" load --grpc zd.Echo.Call "$url" --rate 50 --duration 0.2s
expect_all_failed grpc_unavailable 10 "$WORK/out"
expect_grep 'grpc_unavailable, first: grpc-status 14 UNAVAILABLE: boom here' "$WORK/out"
expect_exit 0 "$ZERODROP" load --grpc zd.Echo/Call "$url" --rate 50 --duration 0.2s \
  --ok-grpc-status OK,UNAVAILABLE

start_server single --mode goaway-single --after 2
expect_exit 0 "$ZERODROP" load --http2 "$url" --rate 50 --duration 0.2s
expect_grep 'unprocessed request\(s\) resent \([1-9][0-9]* ok, 0 failed\)' "$WORK/out"
expect_exit 1 "$ZERODROP" load --http2 "$url" --rate 50 --duration 0.2s --no-retry-unprocessed
expect_grep 'goaway_unprocessed [1-9]' "$WORK/out"

expect_exit 2 "$ZERODROP" load --grpc zd.Echo/Call --method GET "$url"
expect_grep 'error: --method' "$WORK/err"
expect_exit 2 "$ZERODROP" load --grpc nomethod "$url"
expect_grep "error: --grpc: expected SERVICE/METHOD" "$WORK/err"
expect_exit 2 "$ZERODROP" load --grpc zd.Echo/Call --ok-grpc-status NOPE "$url"
expect_grep "error: --ok-grpc-status: 'NOPE'" "$WORK/err"

# Interop with gRPC's C core: tests/testing/grpc_server.py on Debian's python3-grpcio.
/usr/bin/python3 -c 'import grpc' 2>/dev/null || { echo "python3-grpcio is missing: interop part skipped" >&2; exit 0; }
port=$(free_port)
/usr/bin/python3 "$SOURCE_DIR/tests/testing/grpc_server.py" --port "$port" --name py-0 \
  >"$WORK/py.log" 2>&1 &
for _ in $(seq 100); do grep -q listening "$WORK/py.log" && break; sleep 0.05; done
expect_exit 0 "$ZERODROP" load --grpc zd.Echo/Call --body hello "http://127.0.0.1:$port" \
  --rate 100 --duration 0.3s --records "$WORK/py.ndjson"
# Every request the open loop sent (about 30; one fewer when the machine is busy) answered OK.
sent=$(load_sent "$WORK/out")
[ "${sent:-0}" -ge 25 ] || fail "only '${sent}' requests sent at 100/s for 0.3 s"
expect_grep "^grpc-status OK $sent\$" "$WORK/out"
expect_grep '"backend":"py-0"' "$WORK/py.ndjson"
expect_exit 1 "$ZERODROP" load --grpc zd.Echo/Missing "http://127.0.0.1:$port" --rate 50 \
  --duration 0.1s
expect_all_failed grpc_other 5 "$WORK/out"
# Its health service: SERVING for the server and zd.Echo (08 01), NOT_FOUND for another service.
expect_exit 0 "$ZERODROP" load --grpc grpc.health.v1.Health/Check "http://127.0.0.1:$port" \
  --rate 50 --duration 0.1s --records "$WORK/health.ndjson"
expect_exit 1 "$ZERODROP" load --grpc grpc.health.v1.Health/Check --body $'\x0a\x04nope' \
  "http://127.0.0.1:$port" --rate 50 --duration 0.1s
expect_all_failed grpc_other 5 "$WORK/out"
