#!/usr/bin/env bash
# labels: offline
# zerodrop sim: a small rollout prints propagation and failures per hole, writes the run folder,
# the same seed gives the same output, and `zerodrop report` re-renders the folder identically.
source "$(dirname "$0")/lib.sh"

# A naive app without preStop on the lab profile: deregistration races, exit 1.
expect_exit 1 "$ZERODROP" sim --profile lab --nodes 3 --replicas 3 --rate 200 --seed 7 \
  --out "$WORK/run"
expect_grep '^propagation .*p50 [0-9.]+ s  p90 [0-9.]+ s  p99 [0-9.]+ s  max [0-9.]+ s' "$WORK/out"
expect_grep '^  deregistration-race +[1-9][0-9]*  \(' "$WORK/out"
for f in events.ndjson buckets.ndjson run.json report.json report.html; do
  [ -s "$WORK/run/$f" ] || fail "run folder lacks $f"
done
expect_grep '"kind":"router_applied"' "$WORK/run/events.ndjson"
expect_grep '"deregistration-race"' "$WORK/run/buckets.ndjson"
expect_grep '"engine": "sim"' "$WORK/run/run.json"

# Determinism: same seed, same output and run record (the wall-clock and folder lines aside).
grep -av -e '^rollout .* events/s' -e '^run folder' "$WORK/out" > "$WORK/first"
expect_exit 1 "$ZERODROP" sim --profile lab --nodes 3 --replicas 3 --rate 200 --seed 7 \
  --out "$WORK/again"
grep -av -e '^rollout .* events/s' -e '^run folder' "$WORK/out" > "$WORK/second"
diff "$WORK/first" "$WORK/second" || fail "same seed gave different output"
for f in events.ndjson buckets.ndjson; do
  cmp "$WORK/run/$f" "$WORK/again/$f" || fail "same seed gave a different $f"
done
expect_exit 1 "$ZERODROP" sim --profile lab --nodes 3 --replicas 3 --rate 200 --seed 8 \
  --out "$WORK/other"
cmp -s "$WORK/run/buckets.ndjson" "$WORK/other/buckets.ndjson" && fail "seeds 7 and 8 agree"

# The cure: a graceful app with a preStop longer than the propagation drops nothing, exit 0.
expect_exit 0 "$ZERODROP" sim --profile lab --nodes 3 --replicas 3 --rate 200 \
  --app graceful --prestop sleep:5
expect_grep '^  none$' "$WORK/out"

# Several seeds and a budget.
expect_exit 1 "$ZERODROP" sim --profile lab --replicas 3 --rate 200 --runs 5 \
  --budget '0 failures in 99%'
expect_grep '^over 5 seeds: failures per rollout mean' "$WORK/out"
expect_grep 'NOT met' "$WORK/out"

# A large cluster in a second or two, with the kube-proxy model.
expect_exit 1 "$ZERODROP" sim --nodes 2000 --replicas 100 --rate 20000 --profile eks
expect_grep 'kube-proxy-iptables, 2000 nodes \(2000 routers\)' "$WORK/out"

# zerodrop report re-renders a sim run folder (buckets.ndjson read back): the same report.json.
cp "$WORK/run/report.json" "$WORK/sim-report.json"
expect_exit 1 "$ZERODROP" report "$WORK/run" --color never
expect_grep '^FAIL  [0-9]+ of [0-9]+ requests failed: deregistration-race' "$WORK/out"
python3 - "$WORK/sim-report.json" "$WORK/run/report.json" <<'PY' || fail "re-rendered sim report differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for key in a:
    assert a[key] == b[key], (key, str(a[key])[:200], str(b[key])[:200])
assert a["engine"] == "sim" and a["timeline"], a["engine"]
PY
echo "ok (a sim run folder re-rendered by zerodrop report gives the same report.json)"
