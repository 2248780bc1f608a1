#!/usr/bin/env bash
# labels: timing
# cost: 16
# examples/grpc-server (C++, Debian's grpc++) in the lab through the l4 routers, as lab_grpc runs
# the python one: graceful behind a wait longer than the propagation loses nothing (but the C
# core's GOAWAY race, see below); Shutdown(now) cancels the RPCs in flight (no-drain).
source "$(dirname "$0")/lib.sh"
pkg-config --exists grpc++ 2>/dev/null || skip "libgrpc++-dev is not installed (scripts/setup.sh test)"
SERVER=$BUILD_DIR/examples/grpc-server
need_built "$SERVER"

# run_grpc NAME [server flags...]: 2 pods over 2 routers, 0.5 s propagation, RPCs of 50 ms.
run_grpc() {
  local name=$1; shift
  rc=0
  "$ZERODROP" lab --grpc zd.Echo/Call --replicas 2 --nodes 2 --propagation 500ms --rate 100 \
    --connections 16 --warmup 500ms --tail 500ms --grace 10s --readiness grpc \
    --readiness-period 100ms --out "$WORK/$name" \
    -- "$SERVER" --host '{ip}' --port '{port}' --rpc-time 50ms "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}
show() { echo "--- $1.out"; tail -60 "$WORK/$1.out"; echo "--- $1.err"; tail -20 "$WORK/$1.err"; }

run_grpc graceful --on-term graceful --delay 1.5s --drain 2s
# gRPC's C core may cancel an RPC that crosses its first GOAWAY on a kept connection (grpc++
# shares python3-grpcio's core; lab_grpc measured 1 of ~300 in 2 of 10 runs): at most two such
# grpc_cancelled, nothing else, and the exit code says whether any failed.
python3 - "$WORK/graceful/requests.ndjson" <<'PY' || { show graceful; fail "graceful: failures"; }
import json, sys
records = list(map(json.loads, open(sys.argv[1])))
failed = [r for r in records if r["failed"]]
other = [r for r in failed if r["class"] != "grpc_cancelled"]
assert len(records) > 200, len(records)
assert not other and len(failed) <= 2, (len(failed), other[:2])
PY
want=0
grep -q '"failed":true' "$WORK/graceful/requests.ndjson" && want=1
[ "$rc" = "$want" ] || { show graceful; fail "graceful: exit $rc, expected $want"; }
expect_grep '"backend":"pod-' "$WORK/graceful/requests.ndjson"
expect_grep '"kind":"goaway_received".*"pod":"pod-' "$WORK/graceful/events.ndjson"
echo "graceful: $(grep -c . "$WORK/graceful/requests.ndjson") RPCs, $(grep -c '"failed":true' "$WORK/graceful/requests.ndjson") lost to the C core's race"

run_grpc now --on-term now
[ "$rc" = 1 ] || { show now; fail "now: exit $rc, expected 1"; }
grep -Eq '"hole": *"no-drain"' "$WORK/now/report.json" || { show now; fail "now: no no-drain hole"; }
echo "now: $(grep -c '"failed":true' "$WORK/now/requests.ndjson") failed, no-drain among the holes"
