#!/usr/bin/env bash
# labels: timing
# cost: 20
# gRPC through the lab's l7 routers (HTTP/2 on both sides) against tests/testing/grpc_server.py:
# graceful behind a wait longer than the propagation loses nothing (the routers move each RPC,
# not each connection); Shutdown at once without a wait: the routers' refused connects are
# deregistration-race, the RPCs the pod cancelled no-drain, and the routers say why they
# answered.
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
SERVER=$SOURCE_DIR/tests/testing/grpc_server.py

# run_l7 NAME [server flags...]: 2 pods over 2 l7 routers, 0.5 s propagation, RPCs of 50 ms.
run_l7() {
  local name=$1; shift
  rc=0
  "$ZERODROP" lab --grpc zd.Echo/Call --dataplane l7 --replicas 2 --nodes 2 --propagation 500ms \
    --rate 100 --connections 4 --warmup 500ms --tail 500ms --grace 10s --readiness grpc \
    --readiness-period 100ms --out "$WORK/$name" \
    -- /usr/bin/python3 "$SERVER" --host '{ip}' --port '{port}' --rpc-time 50ms "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}
show() { echo "--- $1.out"; tail -60 "$WORK/$1.out"; echo "--- $1.err"; tail -20 "$WORK/$1.err"; }

run_l7 graceful --on-term graceful --delay 1.5s --drain 2s
[ "$rc" = 0 ] || { show graceful; fail "graceful: exit $rc, expected 0"; }
python3 - "$WORK/graceful/requests.ndjson" <<'PY' || { show graceful; fail "graceful: records"; }
import json, sys
records = list(map(json.loads, open(sys.argv[1])))
assert len(records) > 200, len(records)
assert not any(r["failed"] for r in records)
assert all(r["proto"] == "grpc" and r["backend"].startswith("pod-") for r in records)
PY
echo "graceful: $(grep -c . "$WORK/graceful/requests.ndjson") RPCs through the l7 routers, none lost"

run_l7 now --on-term now
[ "$rc" = 1 ] || { show now; fail "now: exit $rc, expected 1"; }
for hole in deregistration-race no-drain; do
  grep -Eq "\"hole\": *\"$hole\"" "$WORK/now/report.json" || { show now; fail "now: no $hole hole"; }
done
# The routers' own answers say why: refused connects, as trailers-only UNAVAILABLE.
expect_grep '"router_error":"connect_refused"' "$WORK/now/requests.ndjson"
expect_grep '"grpc_message":"router node-[0-9]: connect_refused at pod-[0-9]"' "$WORK/now/requests.ndjson"
echo "now: $(grep -c '"failed":true' "$WORK/now/requests.ndjson") failed: deregistration-race and no-drain"
