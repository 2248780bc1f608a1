# labels: timing
# linger keeps serving 2.5 s after SIGTERM (longer than the 1 s propagation), then exits without
# ever sending `Connection: close` (each request takes 50 ms, so some are on the wire then):
# keep-alive connections that routers pinned to it before their
# update carry requests to it until it exits and they break: keepalive-stale.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
server=$(example linger)

run_lab linger --replicas 3 --rate 200 --dataplane l4 --keepalive --prestop none --grace 10s \
  --readiness http:/readyz -- "$server" --port {port} --host {ip} --linger 2.5s --delay 50ms
[ "$lab_rc" = 1 ] || { cat "$WORK/linger.out"; fail "lab exited $lab_rc, expected 1"; }
check_holes linger --has keepalive-stale --only keepalive-stale,no-drain
expect_grep "requests? on reused keep-alive connections to pod" "$WORK/linger/report.json"
expect_grep "Connection: close" "$WORK/linger.out"
echo "ok"
