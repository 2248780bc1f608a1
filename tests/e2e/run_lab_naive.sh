#!/usr/bin/env bash
# cost: 25
# The cure for the deregistration race, under the lab's rollout: the naive example (exits at
# SIGTERM) drops requests bare, and drops none wrapped in `zerodrop run --delay` longer than the
# routers' propagation.
source "$(dirname "$0")/lib.sh"
NAIVE="$BUILD_DIR/examples/naive"
need_built "$NAIVE"
command -v python3 >/dev/null || skip "python3 is needed to read requests.ndjson"

failures() {  # DIR: failed requests in the run's requests.ndjson
  python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if l.strip() and json.loads(l).get("failed")))' "$1/requests.ndjson"
}
lab=("$ZERODROP" lab --replicas 2 --nodes 2 --propagation 1s --rate 200 --no-keepalive)

expect_exit 1 "${lab[@]}" --out "$WORK/bare" -- "$NAIVE" --port {port} --host {ip}
bare=$(failures "$WORK/bare")
[ "$bare" -gt 0 ] || fail "bare naive dropped nothing: the lab shows no hole to cure"

expect_exit 0 "${lab[@]}" --out "$WORK/wrapped" -- \
  "$ZERODROP" run --delay 2s --drain-timeout 10s -- "$NAIVE" --port {port} --host {ip}
wrapped=$(failures "$WORK/wrapped")
[ "$wrapped" = 0 ] || fail "naive wrapped in zerodrop run dropped $wrapped requests"
echo "ok: bare naive dropped $bare requests; wrapped in zerodrop run --delay 2s: 0"
