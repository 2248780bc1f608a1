# labels: timing
# close-listener closes its listener at SIGTERM and drains: no request is cut in flight, but the
# routers still send it new connections until they update: deregistration-race only.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example close-listener)

# Without keep-alive: close-listener also closes idle keep-alive connections at SIGTERM, and a
# request crossing that close on the wire (the HTTP/1.1 idle-close race) is a second, rarer hole
# that would make "deregistration-race only" flaky.
run_lab close-listener --replicas 3 --rate 200 --dataplane l4 --no-keepalive --prestop none \
  --grace 5s --readiness http:/readyz -- "$server" --port {port} --host {ip}
[ "$lab_rc" = 1 ] || { cat "$WORK/close-listener.out"; fail "lab exited $lab_rc, expected 1"; }
check_holes close-listener --has deregistration-race --only deregistration-race
# The failures hit pods after SIGTERM and before their router's update.
python3 - "$WORK/close-listener/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
# A connection sent just before the SIGTERM event (while serving, or between the deletion's stamp
# and the signal's) and refused just after it, or accepted into the backlog and reset when the
# listener closed: the diagnosis says so ("just after it stopped", "it had stopped taking
# connections").
for r in report["failed_requests"]:
    said = "just after it stopped" in r["reason"] or "stopped taking connections" in r["reason"]
    after_stop = r["backend_state"] in ("after_signal", "exited") or (
        r["backend_state"] in ("serving", "prestop") and said)
    assert after_stop and not r["router_applied"], r
PY
echo "ok"
