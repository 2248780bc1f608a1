#!/usr/bin/env bash
# labels: timing
# cost: 14
# gRPC in the lab behind `zerodrop run`'s front proxy: tests/testing/grpc_server.py with
# --on-term now (server.stop(None): every RPC in flight cancelled, no drain) loses RPCs bare
# (lab_grpc.sh: no-drain). Behind the proxy, the stop signal gives each h2c connection the double
# GOAWAY at once, clients move to the other pod through the updated routers, and the app's
# abrupt stop after --delay finds nothing in flight: no RPC is lost.
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
SERVER=$SOURCE_DIR/tests/testing/grpc_server.py

rc=0
"$ZERODROP" lab --grpc zd.Echo/Call --replicas 2 --nodes 2 --propagation 500ms --rate 100 \
  --connections 16 --warmup 500ms --tail 500ms --grace 10s --readiness grpc \
  --readiness-period 100ms --out "$WORK/front" \
  -- "$ZERODROP" run --delay 1.5s --drain-timeout 8s --h2-goaway-delay 100ms \
  --listen '{ip}:{port}' --to '{ip}:18090' \
  -- /usr/bin/python3 "$SERVER" --host '{ip}' --port 18090 --rpc-time 50ms --on-term now \
  >"$WORK/front.out" 2>"$WORK/front.err" || rc=$?
show() { echo "--- front.out"; tail -60 "$WORK/front.out"; echo "--- front.err"; tail -20 "$WORK/front.err"; }
[ "$rc" = 0 ] || { show; fail "behind the front proxy: exit $rc, expected 0"; }
python3 - "$WORK/front/requests.ndjson" "$WORK/front/events.ndjson" <<'PY' || { show; fail "records"; }
import json, sys
records = list(map(json.loads, open(sys.argv[1])))
assert len(records) > 200, len(records)
failed = [r for r in records if r["failed"]]
assert not failed, (len(failed), failed[:2])
assert all(r["proto"] == "grpc" for r in records)
# The proxy's notice (2^31-1) reached the clients. Its final GOAWAY reaches only a connection
# with an RPC still open 100 ms later (the client closes an idle one at the notice); the unit
# test FrontProxyH2.DrainsWithTheDoubleGoawayAtTheStopSignal counts the pair.
goaways = [e for e in map(json.loads, open(sys.argv[2])) if e.get("kind") == "goaway_received"]
ids = {g["connection"]["goaway"]["last_stream_id"] for g in goaways}
assert 2**31 - 1 in ids, ids
PY
echo "ok: $(grep -c . "$WORK/front/requests.ndjson") RPCs, the app stopped abruptly behind the front proxy, none lost"
