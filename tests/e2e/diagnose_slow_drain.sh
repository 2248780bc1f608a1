# labels: timing
# slow-drain's requests take 3 s; with a 1 s grace period the kubelet sends SIGKILL 2 s after
# SIGTERM (its 2 s minimum) and cuts the requests still draining: grace-overrun. The fix's grace
# period covers the measured 3 s requests.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example slow-drain)

run_lab slow-drain --replicas 2 --rate 20 --connections 128 --timeout 10s --dataplane l4 \
  --prestop none --grace 1s --readiness http:/readyz -- "$server" --port {port} --host {ip} \
  --delay 3s
[ "$lab_rc" = 1 ] || { cat "$WORK/slow-drain.out"; fail "lab exited $lab_rc, expected 1"; }
check_holes slow-drain --has grace-overrun --only grace-overrun,deregistration-race
python3 - "$WORK/slow-drain/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
hole = next(h for h in report["holes"] if h["id"] == "grace-overrun")
assert "cut by SIGKILL" in hole["evidence"], hole["evidence"]
grace = int(hole["fix"]["summary"].split()[-1])
assert grace >= 4, hole["fix"]  # the 3 s requests plus the 1 s margin, at least
PY
echo "ok"
