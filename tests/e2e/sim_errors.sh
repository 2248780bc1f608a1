#!/usr/bin/env bash
# labels: offline
# zerodrop sim: bad input gets one line naming the culprit and exit 2.
source "$(dirname "$0")/lib.sh"

check() {  # check PATTERN ARGS...: exit 2 and PATTERN on stderr
  local pattern=$1; shift
  expect_exit 2 "$ZERODROP" sim "$@"
  expect_grep "^zerodrop: error: .*$pattern" "$WORK/err"
  [ "$(wc -l < "$WORK/err")" -eq 1 ] || fail "more than one line on stderr for: $*"
}
check "--nodes" --nodes many
check "--rate" --rate fast
check "did you mean 'gke'" --profile gek
check "unknown dataplane 'ipvs'" --dataplane ipvs
check "--sweep" --sweep prestop=9..1
check "--sweep: unknown parameter 'replicas'" --sweep replicas=1..3
check "--budget" --budget 'no failures please'
check "--prestop" --prestop soon
check "--propagation" --propagation 3s..1s
check "--max-surge, --max-unavailable: maxSurge and maxUnavailable may not both be 0" --max-surge 0 --max-unavailable 0
check "--app: unknown app 'sloppy'" --app sloppy
check "cannot read profile" --profile "$WORK/missing.yaml"
check "--protocol: unknown protocol 'spdy'" --protocol spdy
check "--goaway: expected graceful or abrupt" --goaway rude
check "--no-keepalive: HTTP/2 and gRPC clients keep their connections" --protocol grpc --no-keepalive
check "--proxy-sync-loss: expected a probability" --proxy-sync-loss 2
check "--ipvs-conn-reuse-mode: expected a number from 0 to 1" --ipvs-conn-reuse-mode 3
check "--min-sync-period" --min-sync-period soon
check "--sidecar: expected none, plain or native" --sidecar sometimes
check "--sidecar-drain" --sidecar-drain forever

printf 'kubeProxy:\n  minSyncPerod: 1s\n' > "$WORK/p.yaml"
check "line 2: kubeProxy.minSyncPerod: unknown key; did you mean 'kubeProxy.minSyncPeriod'" \
  --profile "$WORK/p.yaml"
printf 'kind: Deployment\nspec: [\n' > "$WORK/bad.yaml"
check "bad.yaml" -f "$WORK/bad.yaml"
echo "ok"
