#!/usr/bin/env bash
# labels: timing
# cost: 40
# Misbehaving routers, each fault named from the router's own log (docs/lab.md, "A real ingress").
# nginx reloaded 10 times a second (--dataplane-churn with --ingress nginx, as a controller reloads
# for configuration changes) under keep-alive load: its old workers close their idle client
# connections, cutting a request now and then; each is ingress-reload-reset, quoting the
# connection's last access.log line (its worker) and that worker's "gracefully shutting down" in
# error.log. Count-based: up to 3 runs to see one (a run of 13,393 requests over 147 reloads saw
# 7, each named so; none in 3 runs has a chance near 1e-9). HAProxy in front of a server whose every 10th response is malformed answers those 502
# itself: its log says PH, so bad_response, the router's failure, not the upstream_reset its header
# says of every 502.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
source "$(dirname "$0")/lab_common.inc"
source "$(dirname "$0")/lab_ingress.inc"
[ -x /usr/sbin/nginx ] || skip "nginx is not installed (scripts/setup.sh test)"
[ -x /usr/sbin/haproxy ] || skip "haproxy is not installed (scripts/setup.sh test)"
need_example graceful

# Bad input: HAProxy takes changes through its runtime API, with no reload to churn.
rc=0
"$ZERODROP" lab --ingress haproxy --dataplane-churn 5 -- true >"$WORK/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/bad.out"; fail "--dataplane-churn with haproxy: exit $rc, expected 2"; }
expect_grep "^zerodrop: error: --dataplane-churn: " "$WORK/bad.out"

# cuts NAME: how many failures are ingress-reload-reset; fails on any other failure, or one whose
# reason does not quote both of nginx's lines.
cuts() {
  python3 - "$WORK/$1" <<'PY' || { show "$1"; fail "$1: the reload cuts"; }
import json, sys
d = sys.argv[1]
report = json.load(open(d + "/report.json"))
events = [json.loads(l) for l in open(d + "/events.ndjson")]
quoted = {e["detail"] for e in events if e["kind"] == "note" and e.get("router")
          and e.get("detail", "").startswith("router log ")}
n = 0
for f in report["failed_requests"]:
    assert f["hole"] == "ingress-reload-reset", f
    assert f["class"] in ("closed_before_response", "reset_before_response"), f
    assert f["connection"] == "reused" and not f.get("backend"), f
    for line in (f["reason"].split("access.log «")[1].split("»")[0],
                 f["reason"].split("error.log «")[1].split("»")[0]):
        assert any(q.endswith(line) for q in quoted), (line, f)
    n += 1
print(n)
PY
}

# reloads NAME: graceful behind nginx, 2 nodes each reloading 10 times a second, 1,000 requests a
# second on 32 kept-alive connections, a preStop longer than propagation (the app drops nothing).
reloads() {
  local name=$1
  rc=0
  "$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms --rate 1000 --connections 32 \
    --keepalive --warmup 6s --tail 500ms --readiness http:/readyz --readiness-period 100ms \
    --readiness-failure 1 --grace 10s --prestop sleep:1500ms --ingress nginx \
    --dataplane-churn 10 --out "$WORK/$name" \
    -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' >"$WORK/$name.out" 2>"$WORK/$name.err" \
    || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || { show "$name"; fail "$name: exit $rc"; }
}

cut=0 runs=0
while [ "$runs" -lt 3 ] && [ "$cut" = 0 ]; do
  runs=$((runs + 1))
  reloads "nginx-reloads-$runs"
  n=$(cuts "nginx-reloads-$runs")
  shutdowns=$(cat "$WORK/nginx-reloads-$runs"/ingress/node-*/error.log | grep -c "gracefully shutting down" || true)
  echo "nginx run $runs: $n ingress-reload-reset of $(total_count "$WORK/nginx-reloads-$runs") requests, $shutdowns workers retired"
  cut=$((cut + n))
  ingress_gone "nginx-reloads-$runs"
done
[ "$cut" -gt 0 ] || fail "nginx's reloads cut no request in $runs runs"

# HAProxy and the malformed responses.
name=haproxy-bad-response
rc=0
"$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms --rate 200 --connections 16 \
  --warmup 500ms --tail 500ms --readiness http:/readyz --readiness-period 100ms \
  --readiness-failure 1 --grace 10s --prestop sleep:1500ms --ingress haproxy --out "$WORK/$name" \
  -- python3 "$(dirname "$0")/bad_response_server.py" '{ip}' '{port}' 10 \
  >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
[ "$rc" = 1 ] || { show "$name"; fail "$name: exit $rc, expected 1"; }
python3 - "$WORK/$name" <<'PY' || { show "$name"; fail "$name: PH read back"; }
import json, sys
d = sys.argv[1]
requests = {r["seq"]: r for r in map(json.loads, open(d + "/requests.ndjson"))}
report = json.load(open(d + "/report.json"))
ph = 0
for f in report["failed_requests"]:
    r = requests[f["seq"]]
    if r.get("status") != 502:
        # HAProxy's silent close when a server connection broke (lab_ingress_haproxy.sh).
        assert f["hole"] == "unexplained" and f["connection"] == "reused" and not f.get("backend"), f
        continue
    assert r["router_error"] == "upstream_reset", r  # what the header says of every 502
    assert f["hole"] == "unexplained", f
    assert "(bad_response): it could not parse the response of pod" in f["reason"], f
    assert "termination state PH" in f["reason"] and "not upstream_reset as its header said" in f["reason"], f
    assert " PH Tt=" in f["reason"].split("haproxy.log «")[1], f
    ph += 1
assert ph > 0, "no 502"
print(f"{ph} 502s read back as PH of {len(requests)} requests", file=sys.stderr)
PY
ingress_gone "$name"
