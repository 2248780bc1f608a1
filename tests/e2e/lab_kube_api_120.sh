#!/usr/bin/env bash
# zerodrop lab --kube-api with Debian's kubectl 1.20 (kubernetes-client, unpacked by
# scripts/fetch-kubectl-1.20.sh, never installed over the kubectl on PATH): one lab run, every verb
# a user watches or drives a rollout with — get, get -w, get -o json|yaml, describe pod, scale,
# delete pod, logs -f, rollout restart, rollout status.
# labels: timing
# cost: 35
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
command -v python3 >/dev/null || skip "no python3 on this host"

# Where scripts/setup.sh test puts it, else fetched into the build tree (no root needed).
K=${KUBECTL_120:-/var/cache/zerodrop/kubectl-1.20/usr/bin/kubectl}
if [ ! -x "$K" ]; then
  K=$("$SOURCE_DIR/scripts/fetch-kubectl-1.20.sh" "$BUILD_DIR/kubectl-1.20" 2>"$WORK/fetch.err") \
    || skip "kubectl 1.20 cannot be downloaded: $(cat "$WORK/fetch.err")"
fi
"$K" version --client 2>&1 | grep -q 'GitVersion:"v1.20' || fail "$K is not kubectl 1.20"

RUN="$WORK/run"
timeout 180 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 2 --propagation 300ms \
  --rate 50 --connections 8 --warmup 500ms --tail 8s --readiness http:/readyz \
  --readiness-period 100ms --readiness-failure 1 --grace 10s --out "$RUN" \
  -- "$EXAMPLES/naive" --host '{ip}' --port '{port}' >"$WORK/lab.out" 2>"$WORK/lab.err" &
LAB=$!
wait_for_kube_api "$LAB" "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"
k() { "$K" "$@" 2>>"$WORK/kubectl.err"; }
# ready_pods N: until kubectl lists N Ready pods and nothing terminating.
ready_pods() {
  local n
  for _ in $(seq 300); do
    n=$(k get pods -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
live = [p for p in items if "deletionTimestamp" not in p["metadata"]]
ready = [p for p in live if any(c["type"] == "Ready" and c["status"] == "True"
                                for c in p["status"].get("conditions", []))]
print(len(ready) if len(live) == len(items) else -1)')
    [ "$n" = "$1" ] && return 0
    sleep 0.1
  done
  cat "$WORK/kubectl.err"; fail "kubectl 1.20 never saw $1 ready pods (last: $n)"
}
ready_pods 2

# Tables, JSON and YAML.
k get pods >"$WORK/pods" || fail "get pods"
expect_grep '^NAME +READY +STATUS' "$WORK/pods"
expect_grep '^pod-1 +1/1 +Running' "$WORK/pods"
k get deploy web >"$WORK/deploy" || fail "get deploy"
expect_grep '^web +2/2 ' "$WORK/deploy"
k get pod pod-1 -o yaml >"$WORK/pod.yaml" || fail "get -o yaml"
expect_grep '^  name: pod-1$' "$WORK/pod.yaml"
k get deploy web -o json >"$WORK/deploy.json" || fail "get -o json"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["status"]["readyReplicas"] == 2, d["status"]' \
  "$WORK/deploy.json" || fail "the Deployment's status as kubectl 1.20 reads it"
k get endpointslices -l kubernetes.io/service-name=web -o json >"$WORK/slices" || fail "get endpointslices"
expect_grep '"ready": true' "$WORK/slices"
k describe pod pod-1 >"$WORK/describe" || { cat "$WORK/kubectl.err"; fail "describe pod"; }
expect_grep '^Name: +pod-1$' "$WORK/describe"
expect_grep '^Status: +Running$' "$WORK/describe"
expect_grep 'Started' "$WORK/describe"

# Watch pods and follow pod-1's log through everything that follows.
k get pods -w -o jsonpath='{.metadata.name} {.metadata.deletionTimestamp}{"\n"}' >"$WORK/watch" &
WATCH=$!
k logs -f pod-1 >"$WORK/log" &
LOGS=$!

# scale: a third pod; delete pod: pod-3 goes, the ReplicaSet replaces it; then the rollout.
k scale deploy/web --replicas 3 >"$WORK/scale" || { cat "$WORK/kubectl.err"; fail "scale"; }
expect_grep 'scaled' "$WORK/scale"
ready_pods 3
k delete pod pod-3 --wait=false >"$WORK/delete" || { cat "$WORK/kubectl.err"; fail "delete pod"; }
expect_grep 'pod "pod-3" deleted' "$WORK/delete"
ready_pods 3
k rollout restart deploy/web >"$WORK/restart" || { cat "$WORK/kubectl.err"; fail "rollout restart"; }
expect_grep 'restarted' "$WORK/restart"
timeout 120 "$K" rollout status deploy/web >"$WORK/status" 2>&1 || { cat "$WORK/status"; fail "rollout status"; }
expect_grep 'successfully rolled out' "$WORK/status"

rc=0
wait "$LAB" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/lab.out" "$WORK/lab.err"; fail "lab exit $rc, expected 1 (naive)"; }
# logs -f ended with pod-1 (the rollout deleted it); the watch saw every pod the lab deleted.
for _ in $(seq 50); do kill -0 "$LOGS" 2>/dev/null || break; sleep 0.1; done
kill -0 "$LOGS" 2>/dev/null && fail "logs -f did not end when its pod was gone"
[ "$(stat -c %s "$WORK/log")" = "$(stat -c %s "$RUN/pods/pod-1.log")" ] \
  || fail "logs -f did not return pod-1's whole log"
kill "$WATCH" 2>/dev/null || true
for pod in $(grep '"kind":"deletion_started"' "$RUN/events.ndjson" | sed 's/.*"pod":"\([^"]*\)".*/\1/'); do
  expect_grep "^$pod [0-9T:-]+Z$" "$WORK/watch"
done
expect_grep '"detail":"scale from 2 to 3"' "$RUN/events.ndjson"
echo "kubectl 1.20: every verb against the lab; $(grep -c . "$WORK/watch") pod watch events seen"
