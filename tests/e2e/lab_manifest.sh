#!/usr/bin/env bash
# -f deploy.yaml: replicas, strategy, preStop, grace and the readiness probe come from the
# manifest (flags override it); graceful with the manifest's preStop sleep drops nothing.
# (Without keep-alive: graceful's idle-close race can fail one request in ~1000 at l4, see
# docs/lab.md; lab_graceful.sh covers keep-alive.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful

cat >"$WORK/deploy.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 6
      containers:
        - name: web
          image: example/web:1
          ports: [{containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /readyz, port: 8080}
            periodSeconds: 1
            failureThreshold: 1
          lifecycle:
            preStop:
              sleep: {seconds: 2}
YAML
rc=0
"$ZERODROP" lab -f "$WORK/deploy.yaml" --port 0 --nodes 2 --propagation 500ms --rate 200 \
  --no-keepalive \
  --warmup 500ms --tail 500ms --out "$WORK/run" \
  -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' --delay 0s >"$WORK/run.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { tail -30 "$WORK/run.out"; fail "exit $rc, expected 0"; }
expect_grep '"detail":"sleep:2s","kind":"prestop_started"' "$WORK/run/events.ndjson"
expect_grep '"detail":"grace period 6s"' "$WORK/run/events.ndjson"
[ "$(grep -c '"kind":"pod_created"' "$WORK/run/events.ndjson")" = 4 ] \
  || fail "expected 2 pods and 2 replacements"
[ "$(grep -c '"failed":true' "$WORK/run/requests.ndjson" || true)" = 0 ] || fail "requests failed"

expect_exit 2 "$ZERODROP" lab -f "$WORK/deploy.yaml" --container nope -- true
expect_grep "12:5: Deployment 'web' has no container 'nope'" "$WORK/err"
echo "manifest: replicas, preStop and grace taken from deploy.yaml; 0 failures"
