#!/usr/bin/env bash
# labels: timing
# cost: 35
# gRPC through the lab's l4 routers against tests/testing/grpc_server.py (python3-grpcio), one
# short rollout per shutdown mode: graceful behind a wait longer than the propagation loses
# nothing; graceful at once loses reconnects to the deregistration race; stop(None) cuts the
# drain (no-drain); os._exit closes connections without GOAWAY (no-drain, and the note).
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
SERVER=$SOURCE_DIR/tests/testing/grpc_server.py

# run_grpc NAME [lab flags...] -- [server flags...]: 2 pods over 2 routers, 0.5 s propagation,
# RPCs of 50 ms so that some are in flight at every stop.
run_grpc() {
  local name=$1; shift
  local lab_flags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do lab_flags+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  rc=0
  "$ZERODROP" lab --grpc zd.Echo/Call --replicas 2 --nodes 2 --propagation 500ms --rate "${RATE:-100}" \
    --connections 16 --warmup 500ms --tail 500ms --grace 10s --readiness grpc \
    --readiness-period 100ms --out "$WORK/$name" "${lab_flags[@]}" \
    -- /usr/bin/python3 "$SERVER" --host '{ip}' --port '{port}' --rpc-time 50ms "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}
show() { echo "--- $1.out"; tail -60 "$WORK/$1.out"; echo "--- $1.err"; tail -20 "$WORK/$1.err"; }
expect_rc() {  # expect_rc NAME CODE
  [ "$rc" = "$2" ] || { show "$1"; fail "$1: exit $rc, expected $2"; }
}
expect_hole() {  # expect_hole NAME HOLE: the report names HOLE among the holes
  grep -Eq "\"hole\": *\"$2\"" "$WORK/$1/report.json" || { show "$1"; fail "$1: no $2 hole"; }
  echo "$1: $(grep -c '"failed":true' "$WORK/$1/requests.ndjson") failed, $2 among the holes"
}

run_grpc graceful -- --on-term graceful --delay 1.5s --drain 2s
# gRPC's C core may cancel an RPC that crosses its first GOAWAY on a kept connection (measured:
# 1 of ~300 in 2 of 10 runs here, grpc_cancelled): at most two such, nothing else, and the exit
# code says whether any failed.
python3 - "$WORK/graceful/requests.ndjson" <<'PY' || { show graceful; fail "graceful: failures"; }
import json, sys
failed = [r for r in map(json.loads, open(sys.argv[1])) if r["failed"]]
other = [r for r in failed if r["class"] != "grpc_cancelled"]
assert not other and len(failed) <= 2, (len(failed), other[:2])
PY
if grep -q '"failed":true' "$WORK/graceful/requests.ndjson"; then
  expect_rc graceful 1
  echo "graceful: $(grep -c '"failed":true' "$WORK/graceful/requests.ndjson") RPC(s) cancelled by the C core's GOAWAY race"
else
  expect_rc graceful 0
fi
expect_grep '"proto":"grpc"' "$WORK/graceful/requests.ndjson"
expect_grep '"backend":"pod-' "$WORK/graceful/requests.ndjson"
expect_grep '"readiness": *"grpc"' "$WORK/graceful/report.json"
# The drain's GOAWAYs reached the clients, joined to the pod that sent them; on the timeline too.
expect_grep '"kind":"goaway_received".*"pod":"pod-' "$WORK/graceful/events.ndjson"
expect_grep 'pod-[0-9] GOAWAY \([0-9]+ conn\)' "$WORK/graceful.out"
expect_grep 'class="goaway"' "$WORK/graceful/report.html"
echo "graceful: $(grep -c . "$WORK/graceful/requests.ndjson") RPCs, none lost but to the C core's race"

# Only new connections meet the closed listener, and the load resends a refused one once: a new
# connection per RPC at 300/s makes the race certain, not a matter of luck (at 100/s over kept
# connections it lost 1 of 291, and some runs none).
RATE=300 run_grpc at-once --no-keepalive -- --on-term graceful --drain 2s
expect_rc at-once 1
expect_hole at-once deregistration-race

run_grpc now -- --on-term now
expect_rc now 1
expect_hole now no-drain

run_grpc exit -- --on-term exit
expect_rc exit 1
expect_hole exit no-drain
expect_grep '"kind":"connection_closed".*"pod":"pod-' "$WORK/exit/events.ndjson"
expect_grep 'closed [0-9]+ HTTP/2 connection\(s\) without GOAWAY' "$WORK/exit.out"
