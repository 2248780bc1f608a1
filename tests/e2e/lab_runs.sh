#!/usr/bin/env bash
# labels: timing
# `lab --runs 2`: the same rollout twice with seeds 1 and 2, one sub-folder each, and per hole
# the runs it appeared in. The default load mixes new and reused connections (--fresh-share 50%),
# and every report says what its terminations covered.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive

rc=0
"$ZERODROP" lab --runs 2 --replicas 2 --nodes 2 --propagation 300ms --rate 200 \
  --warmup 500ms --tail 300ms --readiness http:/readyz --readiness-period 100ms \
  --readiness-failure 1 --grace 5s --out "$WORK/runs" \
  -- "$EXAMPLES/naive" --host '{ip}' --port '{port}' >"$WORK/runs.out" 2>"$WORK/runs.err" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/runs.out" "$WORK/runs.err"; fail "exit $rc, expected 1"; }
expect_grep "^run 1/2 \(seed 1\): FAIL .*deregistration-race" "$WORK/runs.out"
expect_grep "^run 2/2 \(seed 2\): FAIL " "$WORK/runs.out"
expect_grep "^0 of 2 runs passed" "$WORK/runs.out"
expect_grep "^  deregistration-race in 2 of 2 runs \(runs 1, 2; " "$WORK/runs.out"

python3 - "$WORK/runs" <<'PY'
import json, sys
root = sys.argv[1]
runs = json.load(open(f"{root}/runs.json"))
assert runs["schema"] == "zerodrop-runs/1" and runs["runs"] == 2, runs
assert [r["seed"] for r in runs["each"]] == [1, 2], runs["each"]
dereg = [h for h in runs["holes"] if h["id"] == "deregistration-race"]
assert dereg and dereg[0]["runs"] == [1, 2], runs["holes"]
for i in (1, 2):
    report = json.load(open(f"{root}/run-{i}/report.json"))
    assert report["scenario"]["seed"] == str(i), report["scenario"]["seed"]
    assert report["scenario"]["fresh_share"] == "50%", report["scenario"]
    cov = report["coverage"]
    assert len(cov["pods"]) >= 2, cov
    assert all(p["fresh_per_s"] > 0 for p in cov["pods"]), cov["pods"]
    assert cov["summary"].startswith(f"{len(cov['pods'])} terminations"), cov["summary"]
    reused = fresh = 0
    for line in open(f"{root}/run-{i}/requests.ndjson"):
        r = json.loads(line)
        reused += r["reused"]
        fresh += not r["reused"]
    share = fresh / (fresh + reused)
    assert 0.3 < share < 0.7, f"run {i}: {fresh} new and {reused} reused connections"
    print(f"run {i}: {fresh} new, {reused} reused; {cov['summary']}")
PY
