# labels: timing
# close-listener closes its listener at SIGTERM and drains: no request is cut in flight, but the
# routers still send it new connections until they update: deregistration-race only.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example close-listener)

run_lab close-listener --replicas 3 --rate 200 --dataplane l4 --prestop none --grace 5s \
  --readiness http:/readyz -- "$server" --port {port} --host {ip}
[ "$lab_rc" = 1 ] || { cat "$WORK/close-listener.out"; fail "lab exited $lab_rc, expected 1"; }
check_holes close-listener --has deregistration-race --only deregistration-race
# The failures hit pods after SIGTERM and before their router's update.
python3 - "$WORK/close-listener/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for r in report["failed_requests"]:
    assert r["backend_state"] in ("after_signal", "exited") and not r["router_applied"], r
PY
echo "ok"
