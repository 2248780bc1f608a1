#!/usr/bin/env bash
# cost: 13
# Keep-alive hygiene under the lab's rollout with keep-alive load: naive never sends
# `Connection: close` (run_lab_naive.sh shows it dropping requests bare); behind the front proxy
# (--listen/--to) every response from SIGTERM on carries `Connection: close`, clients reconnect
# through updated routers, and nothing is dropped although connections were reused.
source "$(dirname "$0")/lib.sh"
NAIVE="$BUILD_DIR/examples/naive"
need_built "$NAIVE"
command -v python3 >/dev/null || skip "python3 is needed to read requests.ndjson"

failures() {
  python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if l.strip() and json.loads(l).get("failed")))' "$1/requests.ndjson"
}
lab=("$ZERODROP" lab --replicas 2 --nodes 2 --propagation 1s --rate 200 --keepalive)

# Each pod has its own 127.x.y.z address: the app listens on it at port 18080 behind the proxy.
expect_exit 0 "${lab[@]}" --out "$WORK/proxy" -- \
  "$ZERODROP" run --delay 2s --drain-timeout 10s --listen {ip}:{port} --to {ip}:18080 -- \
  "$NAIVE" --port 18080 --host {ip}
proxied=$(failures "$WORK/proxy")
[ "$proxied" = 0 ] || fail "naive behind the front proxy dropped $proxied requests"
reused=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if l.strip() and json.loads(l).get("reused")))' "$WORK/proxy/requests.ndjson")
[ "$reused" -gt 0 ] || fail "no request reused a connection: the load was not keep-alive"
# --keepalive given alone means every request on a kept-alive connection (--fresh-share 0%), not
# the mixed default.
share=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenario"]["fresh_share"])' "$WORK/proxy/report.json")
[ "$share" = "0%" ] || fail "--keepalive alone ran with --fresh-share $share, expected 0%"
echo "ok: keep-alive load ($reused requests on reused connections) through the front proxy: 0 dropped"
