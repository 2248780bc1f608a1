# labels: offline
# zerodrop report RUN_DIR: re-renders a past run folder (hand-made, see report_fixture.py) into
# the terminal report, report.json and report.html; exit 1 because requests failed.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/setup.sh test)"

run="$WORK/run"
python3 "$(dirname "$0")/report_fixture.py" "$run"
refused=$(grep -c '"connect_refused"' "$run/requests.ndjson")
[ "$refused" -gt 0 ] || fail "the fixture has no refused request"

expect_exit 1 "$ZERODROP" report "$run"
expect_grep "^FAIL  $refused of 1000 requests failed: deregistration-race $refused" "$WORK/out"
expect_grep "$refused connections refused by pod web-0 between SIGTERM at 4.00 s and router" "$WORK/out"
expect_grep "fix: preStop sleep 3 s, terminationGracePeriodSeconds 30" "$WORK/out"
expect_grep "seconds: 3" "$WORK/out"
expect_grep "web-0 SIGTERM" "$WORK/out"
! grep -q $'\x1b' "$WORK/out" || fail "colour escapes in output that is not a terminal"
python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 100 for l in open(sys.argv[1], encoding="utf-8")))' \
  "$WORK/out" || fail "terminal report wider than 100 columns"

# report.json: verdict, holes, every failed request with its hole and backend state.
python3 - "$run/report.json" "$refused" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
refused = int(sys.argv[2])
assert report["verdict"] == "fail", report["verdict"]
assert report["load"]["failed"] == refused
assert [h["id"] for h in report["holes"]] == ["deregistration-race"], report["holes"]
hole = report["holes"][0]
assert hole["requests"] == refused and hole["pods"] == ["web-0"], hole
assert hole["routers"] == ["node-1", "node-2", "node-3"], hole
assert hole["evidence"] == (f"{refused} connections refused by pod web-0 between SIGTERM at "
                            "4.00 s and router node-3's update at 5.90 s"), hole["evidence"]
assert "sleep:\n          seconds: 3" in hole["fix"]["snippet"], hole["fix"]
assert len(report["failed_requests"]) == refused
for r in report["failed_requests"]:
    assert r["hole"] == "deregistration-race" and r["backend_state"] == "exited", r
    assert r["router_applied"] is False, r
assert [p["name"] for p in report["pods"]] == ["web-0", "web-1", "web-2", "web-3"]
PY
[ -s "$run/report.html" ] || fail "no report.html"

# --json prints the same document; --k8s-version 1.29 switches to an exec preStop.
expect_exit 1 "$ZERODROP" report "$run" --json --k8s-version 1.29 --out "$WORK"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert "exec" in j["holes"][0]["fix"]["snippet"]; assert "distroless" in j["holes"][0]["fix"]["warning"]' "$WORK/out"

# Bad input: one line naming the culprit, exit 2.
expect_exit 2 "$ZERODROP" report "$WORK/nowhere"
expect_grep "^zerodrop: error: .*nowhere.*not a run folder" "$WORK/err"
mkdir "$WORK/empty"
expect_exit 2 "$ZERODROP" report "$WORK/empty"
expect_grep "no events.ndjson or requests.ndjson" "$WORK/err"
expect_exit 2 "$ZERODROP" report "$run" --color sometimes
expect_grep "^zerodrop: error: --color" "$WORK/err"
expect_exit 2 "$ZERODROP" report "$run" --k8s-version latest
expect_grep "^zerodrop: error: --k8s-version" "$WORK/err"
echo '{"t_us": 1, "kind": "pod_exploded"}' >> "$run/events.ndjson"
expect_exit 2 "$ZERODROP" report "$run"
expect_grep "events.ndjson:[0-9]+: unknown event kind 'pod_exploded'" "$WORK/err"
echo "ok"
