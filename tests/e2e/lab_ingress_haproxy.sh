#!/usr/bin/env bash
# labels: timing
# cost: 20
# Debian's haproxy as each node's L7 router (--ingress haproxy): naive and close-listener fail with
# deregistration-race, which haproxy reports as its own 503; graceful with a preStop longer than
# propagation drops nothing. Three rollouts (the three examples), hence the cost. Each response
# HAProxy made itself carries its haproxy.log line and termination state in its reason.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
source "$(dirname "$0")/lab_common.inc"
source "$(dirname "$0")/lab_ingress.inc"
[ -x /usr/sbin/haproxy ] || skip "haproxy is not installed (scripts/setup.sh test)"

# unexplained: HAProxy closes a kept-alive client connection without an answer or a log line when
# the server connection it reused for the request breaks first (docs/lab.md "A real ingress");
# reload_cuts_only still requires each such failure to be that shape.
ingress_must_show haproxy 503 ",unexplained"

# Each response HAProxy made itself was read back from haproxy.log: its reason quotes the line,
# whose termination state for a refused connect is SC (not assumed from the 503).
for name in haproxy-naive haproxy-close-listener; do
  python3 - "$WORK/$name" <<'PY' || { show "$name"; fail "$name: haproxy.log read back"; }
import json, sys
d = sys.argv[1]
requests = {r["seq"]: r for r in map(json.loads, open(d + "/requests.ndjson"))}
states = {}
for f in json.load(open(d + "/report.json"))["failed_requests"]:
    r = requests[f["seq"]]
    if not r.get("router_error"):
        continue
    assert "haproxy.log «" in f["reason"], f
    state = f["reason"].split("its log's termination state ")[1][:2]
    assert state != "SC" or r["router_error"] == "connect_refused", (r, f)
    states[state] = states.get(state, 0) + 1
assert states.get("SC", 0) > 0, states
print(d, "termination states read back:", states, file=sys.stderr)
PY
done
