#!/usr/bin/env bash
# zerodrop load against a healthy server: exit 0, summary printed, JSON and NDJSON written.
source "$(dirname "$0")/lib.sh"
server=$BUILD_DIR/tests/testing/misbehaving-server
need_built "$server"

"$server" --mode ok --name pod-e2e --port-file "$WORK/port" >/dev/null &
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$WORK/port")/"

expect_exit 0 "$ZERODROP" load "$url" --rate 200 --duration 1s -H 'X-Test: 1' \
  --json "$WORK/summary.json" --records "$WORK/records.ndjson"
expect_all_ok 200 "$WORK/out"
expect_grep 'latency +p50 .* p99\.9 .* max' "$WORK/out"
grep -q $'\r' "$WORK/out" && fail "live progress written although stdout is not a terminal"
python3 - "$WORK/summary.json" "$WORK/records.ndjson" <<'PY' || fail "bad JSON or NDJSON"
import json, sys
s = json.load(open(sys.argv[1]))
for key in ["requests", "ok", "failed", "failures", "late", "rate_achieved", "latency_ms",
            "disruption_s", "connections_opened"]:
    assert key in s, key
n = s["requests"]
assert n + s["unsent"] == 200 and n >= 150 and s["failed"] == 0 and s["ok"] == n, s
assert set(s["latency_ms"]) >= {"p50", "p90", "p99", "p999", "max"}
records = [json.loads(line) for line in open(sys.argv[2])]
assert len(records) == n, len(records)
assert len(set(r["seq"] for r in records)) == n and all(0 <= r["seq"] < 200 for r in records)
assert all(r["class"] == "ok" and r["backend"] == "pod-e2e" and r["local_port"] > 0 for r in records)
assert any(r["reused"] for r in records) and not records[0]["reused"]
PY
