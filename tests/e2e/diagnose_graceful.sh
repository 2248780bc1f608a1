# labels: timing
# graceful behind a preStop longer than the propagation: no request fails, no hole, exit 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example graceful)

run_lab graceful --replicas 3 --rate 200 --dataplane l4 --prestop sleep:2s --grace 10s \
  --readiness http:/readyz -- "$server" --port {port} --host {ip}
[ "$lab_rc" = 0 ] || { cat "$WORK/graceful.out"; fail "lab exited $lab_rc, expected 0"; }
check_holes graceful --none
expect_grep "^PASS  no request failed" "$WORK/graceful.out"
echo "ok"
