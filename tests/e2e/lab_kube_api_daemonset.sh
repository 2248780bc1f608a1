#!/usr/bin/env bash
# zerodrop lab --kube-api takes a controller's install as `kubectl apply -k` sends it (Namespace,
# ServiceAccount, RBAC, ConfigMap, PVC, Service, Deployment: stored) and runs its DaemonSet: one
# pod per emulated node, each a process on this host (/zerodrop is this zerodrop) with the
# downward API and its node's router in the service links; status, a deleted pod replaced, a
# template change rolled out, and the DaemonSet's deletion stopping every pod. Bad manifests get
# the API's error. The hidden --kube-api-seed adds Deployments that run nothing (bench).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
DATA="$SOURCE_DIR/tests/e2e/data"

RUN="$WORK/run"
timeout 170 "$ZERODROP" lab --kube-api --action none --replicas 1 --nodes 3 --propagation 100ms \
  --rate 20 --connections 2 --warmup 200ms --tail 200ms --readiness http:/readyz \
  --readiness-period 100ms --grace 5s --kube-api-seed 1000 --out "$RUN" \
  -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' --delay 0s >"$WORK/lab.out" 2>"$WORK/lab.err" &
LAB=$!
wait_for_kube_api "$LAB" "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"
K=(kubectl --request-timeout=20s)

# The whole install applies, twice (the second time as patches of what is there).
for round in 1 2; do
  "${K[@]}" apply -k "$DATA/watch-like" --validate=false >"$WORK/apply.$round" 2>&1 \
    || { cat "$WORK/apply.$round"; fail "kubectl apply -k, round $round"; }
done
expect_grep '^daemonset.apps/zerodrop-agent created' "$WORK/apply.1"
expect_grep '^clusterrolebinding.rbac.authorization.k8s.io/zerodrop-watch created' "$WORK/apply.1"
expect_grep '^persistentvolumeclaim/zerodrop-watch-runs created' "$WORK/apply.1"
expect_grep '^daemonset.apps/zerodrop-agent unchanged' "$WORK/apply.2"
"${K[@]}" get sa,cm,svc,pvc,deploy,role,rolebinding -n zerodrop -o name >"$WORK/stored"
for o in serviceaccount/zerodrop-watch configmap/zerodrop-watch service/zerodrop-watch \
  persistentvolumeclaim/zerodrop-watch-runs deployment.apps/zerodrop-watch \
  role.rbac.authorization.k8s.io/zerodrop-watch-leader; do
  expect_grep "^$o\$" "$WORK/stored"
done

# One agent per node, each running; the DaemonSet's status says so.
ready=""
for _ in $(seq 100); do
  ready=$("${K[@]}" get ds -n zerodrop zerodrop-agent -o jsonpath='{.status.desiredNumberScheduled}/{.status.numberReady}')
  [ "$ready" = 3/3 ] && break
  sleep 0.1
done
[ "$ready" = 3/3 ] || fail "the DaemonSet's status says $ready, expected 3/3"
"${K[@]}" get ds -n zerodrop >"$WORK/ds"
expect_grep '^zerodrop-agent +3 +3 +3 +3 +3 ' "$WORK/ds"
"${K[@]}" get pods -n zerodrop -l app=zerodrop-agent -o wide >"$WORK/agents"
for node in node-1 node-2 node-3; do
  expect_grep "^zerodrop-agent-[a-z0-9]{5} +1/1 +Running +0 .* $node( |\$)" "$WORK/agents"
done
"${K[@]}" get pods -n zerodrop -l app=zerodrop-agent -o jsonpath='{.items[0].metadata.ownerReferences[0].kind}' >"$WORK/owner"
expect_grep '^DaemonSet$' "$WORK/owner"
expect_grep 'daemonset zerodrop-agent runs pod zerodrop-agent-[a-z0-9]{5} on node-3' "$RUN/events.ndjson"
pgrep -f -- "$ZERODROP sleep 300" >"$WORK/pids" || true
[ "$(grep -c . "$WORK/pids")" = 3 ] || fail "$(grep -c . "$WORK/pids") agent processes run, expected 3"

# In namespace default, a pod sees its node and name, and the lab's Service through its node's
# router (the Service's annotation names each node's).
"${K[@]}" apply --validate=false -f "$DATA/env-probe.yaml" >/dev/null || fail "kubectl apply of env-probe"
ROUTERS=$("${K[@]}" get svc web -o jsonpath='{.metadata.annotations.zerodrop\.dev/node-routers}')
for _ in $(seq 100); do
  [ "$(cat "$RUN"/pods/env-probe-*.log 2>/dev/null | grep -c node=)" = 3 ] && break
  sleep 0.1
done
for node in node-1 node-2 node-3; do
  router=$(tr ',' '\n' <<<"$ROUTERS" | sed -n "s/^$node=//p")
  log=$(grep -l "node=$node " "$RUN"/pods/env-probe-*.log) || fail "no env-probe pod on $node"
  pod=$(basename "$log" .log)
  expect_grep "^node=$node pod=$pod ns=default web=$router http=${router##*:}\$" "$log"
done

# A deleted agent is replaced by a new pod on its node; a template change replaces every pod.
victim=$("${K[@]}" get pods -n zerodrop -l app=zerodrop-agent --field-selector spec.nodeName=node-2 -o jsonpath='{.items[0].metadata.name}')
"${K[@]}" delete pod -n zerodrop "$victim" --wait=false >/dev/null || fail "kubectl delete pod"
for _ in $(seq 100); do
  names=$("${K[@]}" get pods -n zerodrop -l app=zerodrop-agent --field-selector spec.nodeName=node-2 -o jsonpath='{.items[*].metadata.name}')
  [ -n "$names" ] && [ "$names" != "$victim" ] && ! grep -qw "$victim" <<<"$names" && break
  sleep 0.1
done
grep -qw "$victim" <<<"$names" && fail "the deleted pod $victim is still there: $names"
[ -n "$names" ] || fail "no agent on node-2 after its pod's deletion"
expect_grep "daemonset pod $victim on node-2: killed by SIGTERM|daemonset pod $victim on node-2: exit code 143" "$RUN/events.ndjson"

"${K[@]}" set env -n zerodrop ds/zerodrop-agent SLEEP_FOR=301 >/dev/null || fail "kubectl set env"
for _ in $(seq 150); do
  updated=$("${K[@]}" get ds -n zerodrop zerodrop-agent -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.updatedNumberScheduled} {.status.numberReady}')
  [ "$updated" = "2 2 3 3" ] && break
  sleep 0.1
done
[ "$updated" = "2 2 3 3" ] || fail "after the template change: generation, observed, updated, ready = $updated"
[ "$(pgrep -fc -- "$ZERODROP sleep 301")" = 3 ] || fail "the new template does not run on 3 nodes"
[ "$(pgrep -fc -- "$ZERODROP sleep 300")" = 0 ] || fail "pods of the old template still run"

# 1,000 seeded Deployments beside the workload's: listed (in pages), rolled out, and a restart
# of one is observed at once; the workload's own cannot be deleted.
[ "$("${K[@]}" get deploy -o name | grep -c '^deployment.apps/seed-')" = 1000 ] || fail "not 1000 seeded Deployments"
"${K[@]}" rollout restart deploy/seed-0500 >/dev/null || fail "rollout restart of a seeded Deployment"
timeout 20 "${K[@]}" rollout status deploy/seed-0500 >/dev/null || fail "a seeded Deployment's restart never completed"
"${K[@]}" delete deploy web >"$WORK/del" 2>&1 && fail "the workload's Deployment was deleted"
expect_grep 'the lab ends it' "$WORK/del"

# A DaemonSet that selects what its template does not label: the API's 400, nothing stored.
sed 's/matchLabels: {app: zerodrop-agent}/matchLabels: {app: other}/; s/name: zerodrop-agent/name: mislabeled/' \
  "$DATA/watch-like/agents.yaml" | "${K[@]}" apply -n zerodrop --validate=false -f - >"$WORK/bad" 2>&1 \
  && fail "a DaemonSet whose selector misses its template was accepted"
expect_grep 'does not match template' "$WORK/bad"

# Deleting the DaemonSets stops every pod; the lab runs on.
"${K[@]}" delete ds -n zerodrop zerodrop-agent >/dev/null || fail "kubectl delete ds"
"${K[@]}" delete ds env-probe >/dev/null || fail "kubectl delete ds env-probe"
for _ in $(seq 100); do
  left=$("${K[@]}" get pods -A -o name | grep -c -e zerodrop-agent -e env-probe || true)
  [ "$left" = 0 ] && break
  sleep 0.1
done
[ "$left" = 0 ] || fail "$left DaemonSet pods left in the API after the deletion"
[ "$(pgrep -fc -- "$ZERODROP sleep 30[01]")" = 0 ] || fail "agent processes outlived their DaemonSet"
"${K[@]}" get deploy web >/dev/null || fail "the API stopped answering"

kill -INT "$LAB"
rc=0
wait "$LAB" || rc=$?
[ "$rc" = 130 ] || { cat "$WORK/lab.err"; fail "lab exit $rc, expected 130 (interrupted)"; }
echo "kube-api daemonset: 3 agents ran, replaced, rolled out and stopped with their DaemonSet"
