# labels: timing
# One replica with maxUnavailable 1 and no surge: the old pod goes before its replacement is
# Ready (its readiness probe starts after 2 s) and the routers have no endpoint left:
# capacity-dip, fixed by maxUnavailable 0. (naive also refuses connections until the routers
# update: deregistration-race.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example naive)

run_lab capacity --replicas 1 --max-unavailable 1 --max-surge 0 --rate 200 --dataplane l4 \
  --prestop none --grace 10s --readiness http:/readyz --readiness-delay 2s -- \
  "$server" --port {port} --host {ip}
[ "$lab_rc" = 1 ] || { cat "$WORK/capacity.out"; fail "lab exited $lab_rc, expected 1"; }
check_holes capacity --has capacity-dip --only capacity-dip,deregistration-race,no-drain
expect_grep "maxUnavailable: 0" "$WORK/capacity/report.json"
echo "ok"
