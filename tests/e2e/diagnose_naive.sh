# labels: timing
# naive dies at SIGTERM while routers still send it connections: deregistration-race (and
# no-drain when a request is in flight at the exit), under both dataplanes; `zerodrop report`
# re-renders the same diagnosis from the run folder.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
naive=$(example naive)

for dataplane in l4 l7; do
  run_lab "naive-$dataplane" --replicas 3 --rate 200 --dataplane "$dataplane" --prestop none \
    --grace 5s --readiness http:/readyz -- "$naive" --port {port} --host {ip}
  [ "$lab_rc" = 1 ] || { cat "$WORK/naive-$dataplane.out"; fail "lab exited $lab_rc, expected 1"; }
  check_holes "naive-$dataplane" --has deregistration-race --only deregistration-race,no-drain
  expect_grep "between SIGTERM at [0-9.]+ s and router node-[0-9]'s update at" \
    "$WORK/naive-$dataplane/report.json"
done

expect_exit 1 "$ZERODROP" report "$WORK/naive-l4"
expect_grep "^FAIL .*deregistration-race" "$WORK/out"
expect_grep "fix: preStop sleep [0-9]+ s, terminationGracePeriodSeconds [0-9]+" "$WORK/out"
echo "ok"
