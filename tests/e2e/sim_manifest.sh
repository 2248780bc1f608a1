#!/usr/bin/env bash
# zerodrop sim -f: the workload's replicas, strategy, preStop and grace drive the simulation.
source "$(dirname "$0")/lib.sh"

cat > "$WORK/deploy.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 4
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 40
      containers:
        - name: app
          image: web:1
          lifecycle:
            preStop:
              sleep: {seconds: 12}
          readinessProbe:
            httpGet: {path: /ready, port: 8080}
            periodSeconds: 2
YAML
expect_exit 0 "$ZERODROP" sim -f "$WORK/deploy.yaml" --profile lab --app graceful --rate 100
expect_grep '4 replicas, 100 req/s, preStop 12s, grace 40s' "$WORK/out"
# A flag overrides the manifest.
expect_exit 1 "$ZERODROP" sim -f "$WORK/deploy.yaml" --profile lab --rate 100 --prestop 0
expect_grep 'preStop 0s, grace 40s' "$WORK/out"
expect_exit 2 "$ZERODROP" sim -f "$WORK/deploy.yaml" --container sidecar
expect_grep "no container 'sidecar'" "$WORK/err"
echo "ok"
