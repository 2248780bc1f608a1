#!/usr/bin/env bash
# `zerodrop load --out DIR` during a deploy done by hand (here: the server stopped, then started
# again on its port; the load runs long enough for a busy machine's slow restart of the server to
# leave ok seconds after it), then `zerodrop report DIR`: the run folder holds the requests and the
# disruption, the report draws them over time and names no hole it has no pod events for.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/setup.sh test)"

port=$(free_port)
start_tls_server "$port" - -
server=$!
run="$WORK/run"
"$ZERODROP" load "http://127.0.0.1:$port/" --rate 100 --duration 10s --connections 8 \
  --out "$run" >"$WORK/load.out" 2>"$WORK/load.err" &
load=$!
# Requests flow to disk as they finish (the folder is streamed, not kept in memory).
for _ in $(seq 100); do [ -s "$run/requests.ndjson" ] && break; sleep 0.05; done
[ -s "$run/requests.ndjson" ] || fail "no request reached $run/requests.ndjson"
sleep 1.5
kill "$server"
wait "$server" 2>/dev/null || true
sleep 1.5
start_tls_server "$port" - -
code=0
wait "$load" || code=$?
[ "$code" = 1 ] || { cat "$WORK/load.out" "$WORK/load.err"; fail "load exited $code, expected 1"; }
expect_grep "^run folder: $run " "$WORK/load.out"
for f in events.ndjson requests.ndjson run.json; do
  [ -s "$run/$f" ] || fail "no $f in the run folder"
done
expect_grep '"kind":"disruption_started"' "$run/events.ndjson"
expect_grep '"engine": "load"' "$run/run.json"

expect_exit 1 "$ZERODROP" report "$run"
expect_grep "no hole can be named" "$WORK/out"
expect_grep "longest disruption \(consecutive failures\): [0-9.]+ s, from" "$WORK/out"
expect_grep "disruption starts" "$WORK/out"
python3 - "$run/report.json" "$run/requests.ndjson" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
lines = sum(1 for _ in open(sys.argv[2]))
assert report["engine"] == "load", report["engine"]
assert report["verdict"] == "fail", report["verdict"]
load = report["load"]
assert load["requests"] == lines, (load["requests"], lines)
assert load["failed"] > 0 and load["ok"] > 0, load
assert "connect_refused" in load["failures_by_class"], load["failures_by_class"]
# No pod and no router events: no hole is invented, and the reason is said.
assert [h["id"] for h in report["holes"]] == ["unexplained"], report["holes"]
hole = report["holes"][0]
assert "no hole can be named" in hole["evidence"] and "connect_refused" in hole["evidence"], hole
assert "pod and router events" in hole["fix"]["summary"], hole["fix"]
assert report["pods"] == [] and report["propagation"]["updates"] == [], report["pods"]
assert "no hole can be named" in report["conclusion"], report["conclusion"]
# The disruption: where the server was down (stopped about 1.5 s in; how long its restart takes
# depends on the machine's load, so only the order is checked, not a duration).
d = report["disruption"]
assert d is not None, "no disruption in report.json"
assert 0.5 < d["start_s"] < d["end_s"] < 10.5, d
# The hill over time: ok seconds, then failing ones, then ok again.
failed = [row["failed"] for row in report["timeline"]]
requests = [row["requests"] for row in report["timeline"]]
first = next(i for i, f in enumerate(failed) if f > 0)
last = max(i for i, f in enumerate(failed) if f > 0)
assert first > 0 and failed[0] == 0, failed
assert last < len(failed) - 1 and any(r > 0 and f == 0 for r, f in zip(requests[last + 1:], failed[last + 1:])), failed
assert set(report["scenario"]) >= {"url", "rate", "duration"}, report["scenario"]
PY
expect_grep 'class="disruption"' "$run/report.html"
expect_grep 'class="requests"' "$run/report.html"
expect_grep 'longest disruption' "$run/report.html"

# Bad input: --out under a file is one line naming the folder, exit 2.
touch "$WORK/file"
expect_exit 2 "$ZERODROP" load "http://127.0.0.1:$port/" --duration 1s --out "$WORK/file/run"
expect_grep "^zerodrop: error: cannot create the run folder '$WORK/file/run'" "$WORK/err"
echo "ok"
