#!/usr/bin/env bash
# zerodrop lab --kube-api: the real kubectl watches a lab run, drives its rollout (--action none)
# and waits for it; the lab diagnoses that rollout as usual. Every request needs the token, and
# the API listens on loopback only.
# labels: timing
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
command -v kubectl >/dev/null || skip "no kubectl on this host"
command -v curl >/dev/null || skip "no curl on this host"

# Refused before anything starts: a non-loopback address, and --action none without a client.
expect_exit 2 "$ZERODROP" lab --kube-api 0.0.0.0 -- true
expect_grep 'not a loopback address' "$WORK/err"
expect_exit 2 "$ZERODROP" lab --kube-api 10.1.2.3:6443 -- true
expect_exit 2 "$ZERODROP" lab --action none -- true
expect_grep 'add --kube-api' "$WORK/err"

# A lab run that waits for a client to act.
RUN="$WORK/run"
timeout 180 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 2 --propagation 500ms \
  --rate 200 --connections 16 --warmup 500ms --tail 500ms --readiness http:/readyz \
  --readiness-period 100ms --readiness-failure 1 --grace 10s --out "$RUN" \
  -- "$EXAMPLES/naive" --host '{ip}' --port '{port}' >"$WORK/lab.out" 2>"$WORK/lab.err" &
LAB=$!
wait_for_kube_api "$LAB" "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"
[ -f "$KUBECONFIG" ] || { cat "$WORK/lab.err"; fail "no kubeconfig in the run folder"; }
[ "$(stat -c %a "$KUBECONFIG")" = 600 ] || fail "the kubeconfig is readable by others"
URL=$(awk '/server:/ {print $2}' "$KUBECONFIG")
TOKEN=$(awk '/token:/ {print $2}' "$KUBECONFIG")
PORT=${URL##*:}

# Loopback only: the listening socket is bound to 127.0.0.1.
ss -Hltn "sport = :$PORT" >"$WORK/ss"
expect_grep "^LISTEN +[0-9]+ +[0-9]+ +127\.0\.0\.1:$PORT " "$WORK/ss"

# No token, a wrong one: 401. The right one: 200.
code() { curl -sk -o /dev/null -w '%{http_code}' "$@" "$URL/api/v1/namespaces/default/pods"; }
[ "$(code)" = 401 ] || fail "a request without the token was not refused"
[ "$(code -H 'Authorization: Bearer wrong')" = 401 ] || fail "a wrong token was not refused"
[ "$(code -H "Authorization: Bearer $TOKEN")" = 200 ] || fail "the token was refused"

# Wait until both pods are ready, as kubectl sees them.
for _ in $(seq 300); do
  ready=$(kubectl get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true)
  [ "$ready" = 2 ] && break
  sleep 0.1
done
[ "$ready" = 2 ] || fail "kubectl never saw 2 ready pods"
kubectl get deploy web >"$WORK/deploy" || fail "kubectl get deploy failed"
kubectl get endpointslices -l kubernetes.io/service-name=web -o json >"$WORK/slices"
expect_grep '"ready": true' "$WORK/slices"

# Every kubectl version on the machine lists the lab's pods.
for k in /usr/lib/google-cloud-sdk/bin/kubectl.1.*; do
  [ -x "$k" ] || continue
  "$k" get pods >"$WORK/pods.$(basename "$k")" 2>&1 || { cat "$WORK/pods.$(basename "$k")"; fail "$k get pods"; }
  expect_grep '^pod-1 ' "$WORK/pods.$(basename "$k")"
done

# Watch pods, then drive the rollout with kubectl and wait for it as a user would.
kubectl get pods -w -o jsonpath='{.metadata.name} {.metadata.deletionTimestamp} {.status.phase}{"\n"}' \
  >"$WORK/watch" 2>"$WORK/watch.err" &
WATCH=$!
sleep 0.5
kubectl rollout restart deploy/web >"$WORK/restart" || fail "kubectl rollout restart failed"
timeout 120 kubectl rollout status deploy/web >"$WORK/status" || { cat "$WORK/status"; fail "rollout status"; }
expect_grep 'successfully rolled out' "$WORK/status"

# The lab diagnoses the rollout kubectl started: naive dies at SIGTERM.
rc=0
wait "$LAB" || rc=$?
kill "$WATCH" 2>/dev/null || true
[ "$rc" = 1 ] || { cat "$WORK/lab.out" "$WORK/lab.err"; fail "lab exit $rc, expected 1"; }
expect_grep '"verdict": *"fail"' "$RUN/report.json"
expect_grep 'deregistration-race' "$WORK/lab.out"
expect_grep '"detail":"rollout restart to revision 2.*"kind":"rollout_started"' "$RUN/events.ndjson"

# kubectl saw the terminating pods: each pod the lab deleted, with its deletionTimestamp.
for pod in $(grep '"kind":"deletion_started"' "$RUN/events.ndjson" | sed 's/.*"pod":"\([^"]*\)".*/\1/'); do
  expect_grep "^$pod [0-9T:-]+Z " "$WORK/watch"
done
expect_grep '^pod-3 ' "$WORK/watch"
echo "kube-api: kubectl drove the rollout; $(grep -c . "$WORK/watch") pod watch events seen"
