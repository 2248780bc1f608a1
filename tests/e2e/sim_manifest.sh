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
# An exec preStop is read as audit reads it: `sh -c "sleep 5s"` is a 5 s delay (was silently none).
sed 's/sleep: {seconds: 12}/exec: {command: [sh, -c, "sleep 5s"]}/' "$WORK/deploy.yaml" > "$WORK/shell.yaml"
expect_exit 0 "$ZERODROP" sim -f "$WORK/shell.yaml" --profile lab --app graceful --rate 100
expect_grep 'preStop 5s, grace 40s' "$WORK/out"
# A preStop whose duration the manifest does not tell is an error naming file:line, unless
# --prestop says it.
sed 's/sleep: {seconds: 12}/exec: {command: [\/wait-shutdown]}/' "$WORK/deploy.yaml" > "$WORK/unknown.yaml"
expect_exit 2 "$ZERODROP" sim -f "$WORK/unknown.yaml" --profile lab
expect_grep "unknown.yaml:18:13: preStop exec /wait-shutdown of container 'app' runs for a time" "$WORK/err"
expect_exit 0 "$ZERODROP" sim -f "$WORK/unknown.yaml" --profile lab --app graceful --prestop 3s
# Recreate is refused by sim and lab alike, naming the line.
sed 's/rollingUpdate: {maxSurge: 1, maxUnavailable: 0}/type: Recreate/' "$WORK/deploy.yaml" > "$WORK/recreate.yaml"
expect_exit 2 "$ZERODROP" sim -f "$WORK/recreate.yaml" --profile lab
expect_grep "recreate.yaml:8:5: strategy Recreate of Deployment 'web' is not a rolling update" "$WORK/err"
expect_exit 2 "$ZERODROP" lab -f "$WORK/recreate.yaml" -- true
expect_grep "recreate.yaml:8:5: strategy Recreate of Deployment 'web' is not a rolling update" "$WORK/err"
# maxSurge and maxUnavailable both written as 0: refused at the manifest's line.
sed 's/maxSurge: 1, maxUnavailable: 0/maxSurge: 0, maxUnavailable: 0/' "$WORK/deploy.yaml" > "$WORK/zero.yaml"
expect_exit 2 "$ZERODROP" sim -f "$WORK/zero.yaml" --profile lab
expect_grep "zero.yaml:8:34: Deployment 'web': maxSurge and maxUnavailable may not both be 0" "$WORK/err"
# A mesh's proxy as a regular container (Istio's injection written out): its 5 s drain ends
# under the app's 12 s preStop, and the routers' 1-3 s propagation meets no listener from then;
# as a native sidecar (restartPolicy: Always) it stops after the app and nothing fails.
cat > "$WORK/meshed.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 40
      containers:
        - name: app
          image: web:1
          lifecycle: {preStop: {sleep: {seconds: 12}}}
          readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}
        - name: istio-proxy
          image: docker.io/istio/proxyv2:1.24.0
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080, appProtocol: kubernetes.io/h2c}]
YAML
expect_exit 0 "$ZERODROP" sim -f "$WORK/meshed.yaml" --profile lab --app graceful --rate 100 --sidecar native
expect_grep 'protocol h2, sidecar native \(drain 5s\)' "$WORK/out"
expect_exit 1 "$ZERODROP" sim -f "$WORK/meshed.yaml" --profile lab --app graceful --rate 100
expect_grep 'protocol h2, sidecar plain \(drain 5s\)' "$WORK/out"
expect_grep 'deregistration-race' "$WORK/out"
expect_exit 0 "$ZERODROP" sim -f "$WORK/meshed.yaml" --profile lab --app graceful --rate 100 --sidecar-exit-on-zero
expect_exit 2 "$ZERODROP" sim -f "$WORK/meshed.yaml" --sidecar sometimes
expect_grep "sidecar: expected none, plain or native, got 'sometimes'" "$WORK/err"
# A real manifest (microservices-demo's gRPC paymentservice, read from the evaluation corpus at
# test time) whose Service names no appProtocol: the protocol comes from the flag.
payment="${SHARED_DIR:-$SOURCE_DIR/../shared}/eval/manifests/microservices-demo/paymentservice.yaml"
[ -f "$payment" ] || fail "the evaluation corpus is missing ($payment)"
# (Its grace period of 5 s cuts what a graceful app still serves: exit 0 or 1, the header counts.)
"$ZERODROP" sim -f "$payment" --profile lab --app graceful --rate 100 >"$WORK/out" || [ $? = 1 ] \
  || fail "sim -f $payment failed"
expect_grep 'grace 5s, app graceful, seed 1$' "$WORK/out"
"$ZERODROP" sim -f "$payment" --profile lab --app graceful --rate 100 --protocol grpc \
  >"$WORK/out" || [ $? = 1 ] || fail "sim -f $payment --protocol grpc failed"
expect_grep 'grace 5s, app graceful, seed 1, protocol grpc$' "$WORK/out"
echo "ok"
