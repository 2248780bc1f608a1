#!/usr/bin/env bash
# labels: timing
# Validation: for a small scenario (3 nodes, 3 replicas, propagation 1s..3s, the naive example
# with no preStop, a connection per request) the simulator's expected failures per hole agree
# with what the lab measures on real processes, within 40% (or 30 requests, whichever is larger).
# Both runs are random (the lab's propagation draws, Poisson arrivals): a single lab run's total
# window varies by about 10%, the rest of the tolerance covers the lab's real startup and timing.
source "$(dirname "$0")/lib.sh"

NAIVE="$BUILD_DIR/examples/naive"
need_built "$NAIVE"
command -v python3 >/dev/null || skip "python3 is needed to read report.json"

SCENARIO=(--replicas 3 --nodes 3 --propagation 1s..3s --rate 200 --no-keepalive)
code=0
"$ZERODROP" lab "${SCENARIO[@]}" --out "$WORK/lab" -- "$NAIVE" --port '{port}' --host '{ip}' \
  >"$WORK/lab.out" 2>&1 || code=$?
[ "$code" -le 1 ] || { cat "$WORK/lab.out"; fail "zerodrop lab exited $code"; }
[ -s "$WORK/lab/report.json" ] || fail "the lab wrote no report.json"

"$ZERODROP" sim --profile lab "${SCENARIO[@]}" --out "$WORK/sim" >"$WORK/sim.out" 2>&1 || true
[ -s "$WORK/sim/run.json" ] || { cat "$WORK/sim.out"; fail "the sim wrote no run.json"; }

python3 - "$WORK/lab/report.json" "$WORK/sim/run.json" <<'PY'
import json, sys
lab = json.load(open(sys.argv[1]))
scenario = json.load(open(sys.argv[2]))["scenario"]
measured = {h["id"]: h["requests"] for h in lab.get("holes", [])}
expected = {k[len("expected."):]: float(v) for k, v in scenario.items()
            if k.startswith("expected.")}
print("hole                  lab   sim (expected)")
bad = []
for hole in sorted(set(measured) | set(expected)):
    m, e = measured.get(hole, 0), expected.get(hole, 0.0)
    tolerance = max(0.4 * max(m, e), 30)
    ok = abs(m - e) <= tolerance
    print(f"{hole:<20}{m:>6}{e:>10.1f}  {'ok' if ok else 'OUT OF TOLERANCE'}")
    if not ok:
        bad.append(hole)
if measured.get("deregistration-race", 0) == 0:
    bad.append("the lab measured no deregistration-race")
sys.exit(1 if bad else 0)
PY
echo "ok"
