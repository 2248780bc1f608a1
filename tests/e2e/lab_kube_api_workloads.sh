#!/usr/bin/env bash
# labels: timing
# zerodrop lab --kube-api --workloads: three workloads in one lab and one API (naive exits at
# SIGTERM, graceful with a preStop, a gRPC server), each its own Deployment and Service,
# restarted twice each with kubectl rollout restart, independently; each rollout reported by the
# lab in RUN/NAME/rollouts/K. The rollouts' reports partition the run's requests: their failures
# add up to the whole run's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
pkg-config --exists grpc++ 2>/dev/null || skip "libgrpc++-dev is not installed (scripts/setup.sh test)"
GRPC=$BUILD_DIR/examples/grpc-server
need_built "$GRPC"

common="--replicas 2 --nodes 2 --propagation 300ms --connections 8 --warmup 300ms --tail 500ms --readiness-period 100ms --grace 5s"
cat >"$WORK/workloads" <<EOF2
# name: lab flags -- command
naive: $common --rate 100 --readiness http:/readyz --readiness-failure 1 -- $EXAMPLES/naive --host {ip} --port {port}
graceful: $common --rate 100 --readiness http:/readyz --readiness-failure 1 --prestop sleep:1s -- $EXAMPLES/graceful --host {ip} --port {port} --delay 0s
grpc: $common --rate 50 --grpc zd.Echo/Call --readiness grpc -- $GRPC --host {ip} --port {port} --rpc-time 20ms --on-term graceful --delay 1s --drain 1s
EOF2

# Bad input: one line error naming the file and line, before anything runs.
printf 'web: -- true\nweb: -- true\n' >"$WORK/twice"
expect_exit 2 "$ZERODROP" lab --kube-api --workloads "$WORK/twice"
expect_grep 'twice:2: workload .web. is given twice' "$WORK/err"
printf 'Web_1: -- true\n' >"$WORK/badname"
expect_exit 2 "$ZERODROP" lab --kube-api --workloads "$WORK/badname"
expect_grep 'badname:1: expected' "$WORK/err"
printf 'web: --replicas many -- true\n' >"$WORK/badflag"
expect_exit 2 "$ZERODROP" lab --kube-api --workloads "$WORK/badflag"
expect_grep 'badflag:1: .*--replicas' "$WORK/err"
expect_exit 2 "$ZERODROP" lab --workloads "$WORK/workloads"
expect_grep 'give --kube-api' "$WORK/err"

RUN="$WORK/run"
timeout 400 "$ZERODROP" lab --kube-api --workloads "$WORK/workloads" --rollouts 2 --out "$RUN" \
  >"$WORK/lab.out" 2>"$WORK/lab.err" &
LAB=$!
wait_for_kube_api "$LAB" "$WORK/lab.err"
expect_grep 'deployments naive, graceful, grpc' "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"
K=(kubectl --request-timeout=20s)
"${K[@]}" get deploy >"$WORK/deploys"
for name in naive graceful grpc; do
  expect_grep "^$name +2/2 " "$WORK/deploys"
done
"${K[@]}" get pods -l app=grpc -o name >"$WORK/grpc-pods"
expect_grep '^pod/grpc-pod-1$' "$WORK/grpc-pods"

# Two rounds: each workload restarted, waited for, and its rollout reported by the lab before the
# next round. Each restart moves only its own Deployment's generation.
for round in 1 2; do
  for name in naive graceful grpc; do
    "${K[@]}" rollout restart "deploy/$name" >/dev/null || fail "round $round: rollout restart $name"
    [ "$("${K[@]}" get deploy "$name" -o jsonpath='{.metadata.generation}')" = $((round + 1)) ] \
      || fail "round $round: $name's generation"
  done
  for name in naive graceful grpc; do
    timeout 120 "${K[@]}" rollout status "deploy/$name" >"$WORK/status" 2>&1 \
      || { cat "$WORK/status" "$WORK/lab.err"; fail "round $round: rollout status $name"; }
  done
  for name in naive graceful grpc; do
    for _ in $(seq 300); do grep -q "^rollout $round of $name: " "$WORK/lab.out" && break; sleep 0.1; done
    expect_grep "^rollout $round of $name: " "$WORK/lab.out"
  done
done

rc=0
wait "$LAB" || rc=$?
[ "$rc" = 1 ] || { tail -30 "$WORK/lab.out" "$WORK/lab.err"; fail "lab exit $rc, expected 1 (naive drops requests)"; }
for name in naive graceful grpc; do
  expect_grep '"detail":"rollout restart to revision 3' "$RUN/$name/events.ndjson"
  total=0
  for k in 1 2; do
    [ -s "$RUN/$name/rollouts/$k/report.html" ] || fail "no report.html for rollout $k of $name"
    f=$(failed_count "$RUN/$name/rollouts/$k")
    total=$((total + f))
    echo "$name rollout $k: $f of $(total_count "$RUN/$name/rollouts/$k") requests failed"
  done
  whole=$(failed_count "$RUN/$name")
  [ "$total" = "$whole" ] || fail "$name: its rollouts' reports hold $total failures, the run $whole"
done
for k in 1 2; do
  expect_grep '"verdict": *"fail"' "$RUN/naive/rollouts/$k/report.json"
  expect_grep '"verdict": *"pass"' "$RUN/graceful/rollouts/$k/report.json"
  expect_grep "^rollout $k of naive: .*(fail|FAIL|dropped|failed)" "$WORK/lab.out"
done
[ "$(failed_count "$RUN/graceful")" = 0 ] || fail "graceful with its preStop dropped requests"
expect_grep '^== workload grpc ==' "$WORK/lab.out"
echo "kube-api workloads: 3 workloads, 2 rollouts each, each reported"
