# labels: timing
# warmup-503 listens at once but answers 503 for its first 2 s; a tcpSocket readiness probe
# passes at once and routes traffic to it: readiness-lies, fixed by an httpGet probe. The preStop
# covers the propagation, so old pods drop nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example warmup-503)

run_lab warmup --replicas 2 --rate 200 --dataplane l4 --no-keepalive --prestop sleep:2s \
  --grace 10s --readiness tcp -- "$server" --port {port} --host {ip} --warmup 2s
[ "$lab_rc" = 1 ] || { cat "$WORK/warmup.out"; fail "lab exited $lab_rc, expected 1"; }
# (A request the lab sends before a router has applied any endpoint is capacity-dip: the router
# had no ready endpoint.)
check_holes warmup --has readiness-lies --only readiness-lies,capacity-dip
expect_grep "httpGet" "$WORK/warmup/report.json"
expect_grep "readiness probe: tcp" "$WORK/warmup/report.json"
echo "ok"
