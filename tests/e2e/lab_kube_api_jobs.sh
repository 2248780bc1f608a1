#!/usr/bin/env bash
# zerodrop lab --kube-api runs Jobs as kubectl creates them: an Indexed Job's pods one per node
# (required pod anti-affinity), each pod a process whose Service variables name its node's router,
# its stdout served as the pod's log (kubectl logs -f ends with the pod); Job status and
# completion; an unschedulable pod; DELETE with foreground propagation. Lists page with
# limit/continue. The same run, watched with kubectl from its first object to its end, shows
# every pod deletion, pod removal and EndpointSlice change of the lab's events.ndjson, in order and
# at the endpoint controller's time.
# labels: timing
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
command -v kubectl >/dev/null || skip "no kubectl on this host"
command -v python3 >/dev/null || skip "no python3 on this host"

RUN="$WORK/run"
timeout 180 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 3 --propagation 300ms \
  --rate 100 --connections 16 --warmup 300ms --tail 500ms --readiness http:/readyz \
  --readiness-period 100ms --readiness-failure 1 --grace 10s --out "$RUN" \
  -- "$EXAMPLES/naive" --host '{ip}' --port '{port}' >"$WORK/lab.out" 2>"$WORK/lab.err" &
LAB=$!
wait_for_kube_api "$LAB" "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"

# Watch from the first object on; the lab's exit ends the streams.
timeout 170 kubectl get --raw '/api/v1/namespaces/default/pods?watch=1&resourceVersion=1' >"$WORK/pods.watch" &
timeout 170 kubectl get --raw '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?watch=1&resourceVersion=1' \
  >"$WORK/slices.watch" &

job() {  # job NAME COUNT COMMAND: an Indexed Job of COUNT pods at once, at most one per node
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  completionMode: Indexed
  completions: $2
  parallelism: $2
  backoffLimit: 0
  template:
    metadata: {labels: {run: $1}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {run: $1}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: c
        image: busybox
        command: [sh, -c, '$3']
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
YAML
}
# kubectl create validates against OpenAPI, which the lab does not serve: --validate=false.
job probe 3 'echo "index=$JOB_COMPLETION_INDEX node=$NODE_NAME target=$WEB_SERVICE_HOST:$WEB_SERVICE_PORT"; for i in 1 2 3; do echo tick $i; sleep 0.3; done' \
  | kubectl create --validate=false -f - >/dev/null || fail "kubectl create job"
for _ in $(seq 100); do
  [ "$(kubectl get pods -l job-name=probe -o jsonpath='{.items[*].status.phase}')" = "Running Running Running" ] && break
  sleep 0.1
done
POD0=$(kubectl get pods -l batch.kubernetes.io/job-completion-index=0,job-name=probe -o jsonpath='{.items[0].metadata.name}')
timeout 20 kubectl logs -f "$POD0" >"$WORK/follow" || fail "kubectl logs -f $POD0 did not end with the pod"
expect_grep '^tick 3$' "$WORK/follow"
timeout 30 kubectl wait --for=condition=complete job/probe --timeout=25s >/dev/null || fail "job probe never completed"
[ "$(kubectl get job probe -o jsonpath='{.status.succeeded} {.status.completedIndexes}')" = "3 0-2" ] \
  || fail "job status: $(kubectl get job probe -o jsonpath='{.status}')"
# One pod per node, each loading its own node's router (the Service annotation's address).
ROUTERS=$(kubectl get svc web -o jsonpath='{.metadata.annotations.zerodrop\.dev/node-routers}')
for pod in $(kubectl get pods -l job-name=probe -o name); do
  kubectl logs "$pod" >"$WORK/log" && head -1 "$WORK/log" >>"$WORK/probes"
done
for n in 1 2 3; do
  addr=$(tr ',' '\n' <<<"$ROUTERS" | sed -n "s/^node-$n=//p")
  expect_grep "node=node-$n target=$addr\$" "$WORK/probes"
done

# A fourth pod finds no node; a foreground delete returns once every pod is gone.
job sleeper 4 'sleep 60' | kubectl create --validate=false -f - >/dev/null
for _ in $(seq 100); do
  why=$(kubectl get pods -l job-name=sleeper -o jsonpath='{.items[*].status.conditions[0].message}')
  [[ "$why" == *"didn't match pod anti-affinity"* ]] && break
  sleep 0.1
done
kubectl get pods -l job-name=sleeper -o jsonpath='{.items[*].status.conditions[0].message}' >"$WORK/unsched"
expect_grep "0/3 nodes are available: 3 node\(s\) didn't match pod anti-affinity" "$WORK/unsched"
timeout 30 kubectl delete job sleeper --cascade=foreground >/dev/null || fail "kubectl delete --cascade=foreground"
[ -z "$(kubectl get pods -l job-name=sleeper -o name)" ] || fail "the sleeper's pods outlived its foreground deletion"
expect_grep 'job pod sleeper-[0-9]-[a-z0-9]+ on node-[123]: killed by SIGTERM' "$RUN/events.ndjson"

# Paging: two at a time, as kubectl get --chunk-size asks; the same pods as one list.
timeout 170 kubectl get --raw '/api/v1/namespaces/default/pods?limit=2' >"$WORK/page"
expect_grep '"continue":"[^"]+"' "$WORK/page"
[ "$(kubectl get pods --chunk-size=2 -o name | sort)" = "$(kubectl get pods --chunk-size=0 -o name | sort)" ] \
  || fail "a paged list differs from the whole list"

# The rollout, then the API and the lab's record over the whole run.
kubectl rollout restart deploy/web >/dev/null
rc=0
wait "$LAB" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/lab.err"; fail "lab exit $rc, expected 1 (naive drops requests)"; }
wait
python3 "$(dirname "$0")/kube_api_events.py" "$RUN" "$WORK/pods.watch" "$WORK/slices.watch" \
  >"$WORK/compare" || { cat "$WORK/compare"; fail "the API contradicts the lab's events"; }
cat "$WORK/compare"
echo PASS
