#!/usr/bin/env bash
# labels: timing
# node's server.close() at SIGTERM, under l4 with keep-alive, rerun with three seeds: every
# failure is joined to its own connection (backend_fate) and the same kind of event gets the same
# hole in every run: a reused connection node closed while idle is keepalive-stale at the close's
# time, a new connection reset before any response while node ran on is deregistration-race.
# None is unexplained: a new connection the router bound before it applied the termination went to
# the old pod rightly, however late the client wrote its request (bound_us, not sent_us).
source "$(dirname "$0")/lib.sh"
command -v node >/dev/null || skip "node is not installed"
SERVER="$(cd "$(dirname "$0")" && pwd)/servers/node_close.js"

for seed in 1 2 3; do
  rc=0
  "$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms --rate 400 --connections 16 \
    --warmup 500ms --tail 500ms --readiness tcp --readiness-period 100ms --grace 5s \
    --seed "$seed" --out "$WORK/run-$seed" -- node "$SERVER" '{ip}' '{port}' \
    >"$WORK/run-$seed.out" 2>"$WORK/run-$seed.err" || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$WORK/run-$seed.err"; fail "seed $seed: exit $rc"; }
done

python3 - "$WORK" <<'PY'
import json, sys, glob
work = sys.argv[1]
seen = {}
for run in sorted(glob.glob(f"{work}/run-*/")):
    run = run.rstrip("/")
    requests = {}
    for line in open(f"{run}/requests.ndjson"):
        r = json.loads(line)
        requests[r["seq"]] = r
    joined = [r for r in requests.values() if r.get("local_port")]
    if any(r.get("backend_fate") is None or r.get("bound_us") is None for r in joined):
        sys.exit(f"FAIL: {run}: an l4 request without backend_fate or bound_us")
    report = json.load(open(f"{run}/report.json"))
    for f in report["failed_requests"]:
        r = requests[f["seq"]]
        fate = r["backend_fate"]
        if f["reason"].startswith("refused by") and fate != "refused":
            sys.exit(f"FAIL: {run}: seq {f['seq']} ({fate}) blamed on a refusal: {f['reason']}")
        key = (fate, f["connection"], "first_byte" if r.get("first_byte_us") else "no byte",
               "at exit" if "at the pod's exit" in f["reason"] else "running",
               f["backend_state"], f["router_applied"])
        seen.setdefault(key, set()).add(f["hole"])
        if f["hole"] == "unexplained":
            sys.exit(f"FAIL: {run}: seq {f['seq']} unexplained: {f['reason']}")
    print(f"{run}: {len(report['failed_requests'])} failed")
for key, holes in sorted(seen.items()):
    print(f"{key}: {sorted(holes)}")
    if len(holes) != 1:
        sys.exit(f"FAIL: the same event {key} got different holes: {sorted(holes)}")
PY
