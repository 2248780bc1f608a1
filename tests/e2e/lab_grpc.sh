#!/usr/bin/env bash
# labels: timing
# cost: 12
# gRPC through the lab's l4 routers against tests/testing/grpc_server.py (python3-grpcio): a
# graceful stop behind a wait longer than the propagation loses nothing.
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
SERVER=$SOURCE_DIR/tests/testing/grpc_server.py

# run_grpc NAME [lab flags...] -- [server flags...]: 2 pods over 2 routers, 0.5 s propagation.
run_grpc() {
  local name=$1; shift
  local lab_flags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do lab_flags+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  rc=0
  "$ZERODROP" lab --grpc zd.Echo/Call --replicas 2 --nodes 2 --propagation 500ms --rate 200 \
    --warmup 500ms --tail 500ms --grace 10s --out "$WORK/$name" "${lab_flags[@]}" \
    -- /usr/bin/python3 "$SERVER" --host '{ip}' --port '{port}' "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}
show() { echo "--- $1.out"; tail -40 "$WORK/$1.out"; echo "--- $1.err"; tail -20 "$WORK/$1.err"; }

run_grpc graceful -- --on-term graceful --delay 1.5s --drain 2s
[ "$rc" = 0 ] || { show graceful; fail "graceful: exit $rc, expected 0"; }
grep -q '"failed":true' "$WORK/graceful/requests.ndjson" && { show graceful; fail "graceful: failures"; }
expect_grep '"proto":"grpc"' "$WORK/graceful/requests.ndjson"
expect_grep '"backend":"pod-' "$WORK/graceful/requests.ndjson"
echo "graceful: 0 of $(grep -c . "$WORK/graceful/requests.ndjson") failed, as expected"
