#!/usr/bin/env bash
# zerodrop lab --kube-api serves what a leader-electing controller and an event recorder write
# (issue 34's watch): a coordination.k8s.io Lease that one candidate holds and a stale takeover
# cannot (409 Conflict), Events posted in core/v1 and events.k8s.io/v1 that `kubectl get events`
# lists beside the lab's own and a watch delivers, and bad input answered with the API's Status
# while the lab runs on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
command -v curl >/dev/null || skip "no curl on this host"

RUN="$WORK/run"
timeout 150 "$ZERODROP" lab --kube-api --action none --replicas 1 --nodes 2 --propagation 100ms \
  --rate 20 --connections 2 --warmup 200ms --tail 200ms --readiness http:/readyz \
  --readiness-period 100ms --grace 5s --out "$RUN" \
  -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' --delay 0s >"$WORK/lab.out" 2>"$WORK/lab.err" &
LAB=$!
wait_for_kube_api "$LAB" "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"
K=(kubectl --request-timeout=20s)

# A namespace and a Lease in it, as the watch's manifests and its first replica make them.
cat >"$WORK/lease.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: zerodrop}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: zerodrop-watch, namespace: zerodrop}
spec: {holderIdentity: replica-a, leaseDurationSeconds: 15, leaseTransitions: 0,
       renewTime: "2026-12-06T20:30:00.000001Z"}
YAML
"${K[@]}" apply --validate=false -f "$WORK/lease.yaml" >"$WORK/apply" 2>&1 || { cat "$WORK/apply"; fail "kubectl apply of a Lease"; }
"${K[@]}" get leases -n zerodrop >"$WORK/leases"
expect_grep '^NAME +HOLDER +AGE' "$WORK/leases"
expect_grep '^zerodrop-watch +replica-a ' "$WORK/leases"

# replica-a renews with the resourceVersion it read; replica-b read the Lease before that renewal,
# so its takeover is stale: 409 Conflict, and replica-a keeps it.
"${K[@]}" get lease -n zerodrop zerodrop-watch -o json >"$WORK/read-by-b.json"
sed 's/20:30:00.000001Z/20:30:05.000001Z/' "$WORK/read-by-b.json" | "${K[@]}" replace --validate=false -f - >"$WORK/renew" 2>&1 \
  || { cat "$WORK/renew"; fail "replica-a's renewal was refused"; }
sed 's/"replica-a"/"replica-b"/' "$WORK/read-by-b.json" | "${K[@]}" replace --validate=false -f - >"$WORK/takeover" 2>&1 \
  && fail "a takeover with a stale resourceVersion was accepted"
expect_grep 'the object has been modified' "$WORK/takeover"
[ "$("${K[@]}" get lease -n zerodrop zerodrop-watch -o jsonpath='{.spec.holderIdentity} {.spec.renewTime}')" \
  = "replica-a 2026-12-06T20:30:05.000001Z" ] || fail "the Lease is not replica-a's renewal"
# With the current resourceVersion replica-b takes it over.
"${K[@]}" get lease -n zerodrop zerodrop-watch -o json | sed 's/"replica-a"/"replica-b"/' \
  | "${K[@]}" replace --validate=false -f - >/dev/null || fail "a takeover with the current resourceVersion was refused"
expect_grep '^zerodrop-watch +replica-b ' <("${K[@]}" get leases -n zerodrop)

# Events, as zerodrop watch records one per rollout: core/v1 with generateName, and
# events.k8s.io/v1. A watch started before sees them arrive.
timeout 60 "${K[@]}" get events --watch-only -o jsonpath='{.reason}{"\n"}' >"$WORK/events.watch" 2>&1 &
WATCH=$!
sleep 1
UID_WEB=$("${K[@]}" get deploy web -o jsonpath='{.metadata.uid}')
cat >"$WORK/event-core.yaml" <<YAML
apiVersion: v1
kind: Event
metadata: {generateName: web.}
involvedObject: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default, uid: $UID_WEB}
reason: RolloutClean
message: "0 of 3,390"
type: Normal
source: {component: zerodrop-watch}
firstTimestamp: "2026-12-06T20:30:00Z"
lastTimestamp: "2026-12-06T20:30:00Z"
count: 1
YAML
cat >"$WORK/event-v1.yaml" <<YAML
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.second}
regarding: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default, uid: $UID_WEB}
reason: RolloutDroppedRequests
note: "12 of 3,410: deregistration-race 12"
type: Warning
eventTime: "2026-12-06T20:31:00.000001Z"
reportingController: zerodrop.dev/watch
reportingInstance: replica-b
action: Measured
YAML
"${K[@]}" create --validate=false -f "$WORK/event-core.yaml" >"$WORK/created" 2>&1 || { cat "$WORK/created"; fail "kubectl create of a core/v1 Event"; }
expect_grep '^event/web\.[a-z0-9]{5} created' "$WORK/created"
"${K[@]}" create --validate=false -f "$WORK/event-v1.yaml" >"$WORK/created" 2>&1 || { cat "$WORK/created"; fail "kubectl create of an events.k8s.io/v1 Event"; }
"${K[@]}" get events >"$WORK/events"
expect_grep '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE' "$WORK/events"
expect_grep 'Normal +RolloutClean +deployment/web +0 of 3,390' "$WORK/events"
expect_grep 'Warning +RolloutDroppedRequests +deployment/web +12 of 3,410' "$WORK/events"
expect_grep 'Normal +Scheduled +pod/pod-1 ' "$WORK/events"  # the lab's own, beside them
"${K[@]}" get events --field-selector reason=RolloutDroppedRequests -o jsonpath='{.items[*].reportingComponent}' >"$WORK/v1-as-core"
expect_grep '^zerodrop.dev/watch$' "$WORK/v1-as-core"
"${K[@]}" get events.v1.events.k8s.io -o jsonpath='{range .items[?(@.reason=="RolloutClean")]}{.note}{end}' >"$WORK/core-as-v1"
expect_grep '^0 of 3,390$' "$WORK/core-as-v1"
for _ in $(seq 50); do grep -q RolloutDroppedRequests "$WORK/events.watch" && break; sleep 0.1; done
kill "$WATCH" 2>/dev/null || true
wait "$WATCH" 2>/dev/null || true
expect_grep '^RolloutClean$' "$WORK/events.watch"
expect_grep '^RolloutDroppedRequests$' "$WORK/events.watch"

# Bad input: the API's Status with its code, and the lab goes on answering.
URL=$(awk '/server:/ {print $2}' "$KUBECONFIG")
TOKEN=$(awk '/token:/ {print $2}' "$KUBECONFIG")
post() {  # post PATH BODY: the status code; the answer in $WORK/answer
  curl -sk -o "$WORK/answer" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -X POST --data "$2" "$URL$1"
}
[ "$(post /apis/coordination.k8s.io/v1/namespaces/zerodrop/leases '{"metadata":')" = 400 ] || fail "malformed JSON was not a 400"
expect_grep '"kind":"Status"' "$WORK/answer"
[ "$(post /apis/coordination.k8s.io/v1/namespaces/zerodrop/leases '{"kind":"Pod","metadata":{"name":"x"}}')" = 400 ] \
  || fail "a Pod posted as a Lease was not a 400"
[ "$(post /apis/coordination.k8s.io/v1/namespaces/zerodrop/leases '{"metadata":{"name":"Bad_Name"}}')" = 400 ] \
  || fail "an invalid name was not a 400"
[ "$(post /apis/example.com/v1/namespaces/default/widgets '{}')" = 404 ] || fail "an unknown resource was not a 404"
[ "$(post /api/v1/namespaces/default/events '[]')" = 400 ] || fail "an array as an Event was not a 400"
"${K[@]}" get lease -n zerodrop zerodrop-watch >/dev/null || fail "the API stopped answering after bad input"

# The lab ends as any interrupted run: its record written.
kill -INT "$LAB"
rc=0
wait "$LAB" || rc=$?
[ "$rc" = 130 ] || { cat "$WORK/lab.err"; fail "lab exit $rc, expected 130 (interrupted)"; }
[ -s "$RUN/events.ndjson" ] || fail "no events.ndjson"
echo "kube-api lease/events: a stale takeover refused, $(grep -c . "$WORK/events") events listed"
