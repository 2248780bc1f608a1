#!/bin/bash
# Throughput and memory of `zerodrop audit` on generated manifests: N Deployments, each with a
# Service, a PDB for one in four and an HPA for one in eight, spread over files of W workloads
# (like a large monorepo of rendered charts). Runs on one core (taskset). Target: >= 10,000
# workloads/s; memory is reported against the largest file and the whole input.
# Two more shapes, each in one file, must stay linear: every Service selecting Helm's
# app.kubernetes.io/instance (the same for all) plus its own name, and the same app labels
# repeated in every namespace.
# Peers (kube-linter, kube-score) are run on the same input when installed, for the ratio.
# Usage: bench/audit_throughput.sh [ZERODROP] [N] [W]
set -euo pipefail
ZERODROP=${1:-${ZERODROP:-build/zerodrop}}
N=${2:-20000}
W=${3:-500}
[ -x "$ZERODROP" ] || { echo "audit_throughput: no zerodrop binary at $ZERODROP" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "audit_throughput: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# generate OUT N W [SHAPE]: N workloads (and their Services, PDBs, HPAs) in files of W workloads.
# SHAPE unique (default): labels unique per workload; instance: every selector also holds
# app.kubernetes.io/instance=shop, the first pair in key order; namespaces: 40 apps named alike
# in every namespace (N / 40 namespaces).
generate() {
  python3 - "$1" "$2" "$3" "${4:-unique}" <<'PY'
import os, sys
out, n, per, shape = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.makedirs(out)
def workload(i):
    app, ns = f"svc-{i}", f"team-{i % 40}"
    if shape == "namespaces":
        app, ns = f"svc-{i % 40}", f"team-{i // 40}"
    sel = f"app.kubernetes.io/name: {app}"
    if shape == "instance":
        sel = f"app.kubernetes.io/instance: shop, {sel}"
    doc = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  namespace: {ns}
  labels: {{{sel}, app.kubernetes.io/part-of: shop}}
spec:
  replicas: {1 + i % 4}
  selector:
    matchLabels: {{{sel}}}
  strategy:
    rollingUpdate: {{maxUnavailable: {i % 2}, maxSurge: 1}}
  template:
    metadata:
      labels: {{{sel}, app.kubernetes.io/part-of: shop}}
      annotations: {{prometheus.io/scrape: "true"}}
    spec:
      terminationGracePeriodSeconds: {10 + i % 40}
      containers:
        - name: app
          image: registry.example/shop/{app}:1.{i % 9}
          args: ["--port=8080", "--log-level=info"]
          ports:
            - {{name: http, containerPort: 8080}}
            - {{name: metrics, containerPort: 9090}}
          env:
            - {{name: POD_NAME, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{memory: 256Mi}}
"""
    if i % 3:
        doc += f"""          lifecycle:
            preStop:
              sleep: {{seconds: {i % 8}}}
"""
    doc += f"""          readinessProbe:
            httpGet: {{path: /ready, port: http}}
            periodSeconds: {2 + i % 5}
          livenessProbe:
            httpGet: {{path: {"/ready" if i % 5 == 0 else "/livez"}, port: {"http" if i % 2 else 8080}}}
            failureThreshold: {1 + i % 4}
---
apiVersion: v1
kind: Service
metadata: {{name: {app}, namespace: {ns}}}
spec:
  selector: {{{sel}}}
  ports: [{{name: http, port: 80, targetPort: http}}]
"""
    if i % 4 == 0:
        doc += f"""---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: {app}, namespace: {ns}}}
spec:
  maxUnavailable: 1
  selector: {{matchLabels: {{{sel}}}}}
"""
    if i % 8 == 0:
        doc += f"""---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {app}, namespace: {ns}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {app}}}
  minReplicas: 2
  maxReplicas: 10
"""
    return doc
for f in range((n + per - 1) // per):
    with open(os.path.join(out, f"chart-{f:04d}.yaml"), "w") as fh:
        fh.write("---\n".join(workload(i) for i in range(f * per, min(n, (f + 1) * per))))
PY
}
generate "$WORK/in" "$N" "$W"
total=$(du -cb "$WORK"/in/*.yaml | tail -1 | cut -f1)
largest=$(ls -S "$WORK"/in/*.yaml | head -1 | xargs stat -c %s)

# measure NAME CMD...: one-core run; prints wall seconds, CPU seconds (user + sys) and max RSS
# (KiB). On a shared machine the core is contended, so throughput is judged on CPU time.
measure() {
  local name=$1; shift
  local code=0
  taskset -c 0 /usr/bin/time -v "$@" > "$WORK/$name.out" 2> "$WORK/$name.time" || code=$?
  if [ "$code" -gt 1 ]; then
    echo "audit_throughput: $name exited $code" >&2; tail -5 "$WORK/$name.time" >&2; exit 1
  fi
  local wall cpu rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$WORK/$name.time")
  cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$WORK/$name.time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/$name.time")
  echo "$wall $cpu $rss"
}

echo "zerodrop audit: $N workloads ($((total / 1024)) KiB in $(ls "$WORK"/in | wc -l) files, largest $((largest / 1024)) KiB)"
# Best of three: on a shared machine other processes inflate CPU time too (caches, SMT).
best() {
  local name=$1; shift
  local b=""
  for run in 1 2 3; do
    read -r w c r < <(measure "$name" "$@")
    if [ -z "$b" ] || python3 -c "import sys; sys.exit(0 if $c < ${b#* } else 1)" 2>/dev/null; then
      b="$w $c"; br=$r
    fi
  done
  echo "$b $br"
}
for format in text json; do
  read -r wall cpu rss < <(best "zerodrop-$format" "$ZERODROP" audit --format "$format" "$WORK/in")
  rate=$(python3 -c "print(f'{$N / max($cpu, 0.001):.0f}')")
  verdict=$([ "${rate%.*}" -ge 10000 ] && echo PASS || echo FAIL)
  echo "  --format $format (best of 3): ${cpu}s CPU (${wall}s wall) on one core = ${rate} workloads/s per CPU-second (target >= 10000): $verdict"
  echo "    max RSS $((rss / 1024)) MiB = $(python3 -c "print(f'{$rss*1024/$largest:.0f}')") x the largest file, $(python3 -c "print(f'{$rss*1024/$total:.1f}')") x the whole input"
  wall_zerodrop=$wall
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("    findings:", len(d["findings"]), "workloads:", d["summary"]["workloads"])' "$WORK/zerodrop-json.out"

# Memory against input size: the same files (same largest file), four times as many of them.
# Bounded by the largest file means the peak stays flat while the input grows.
generate "$WORK/in4" "$((4 * N))" "$W"
total4=$(du -cb "$WORK"/in4/*.yaml | tail -1 | cut -f1)
read -r _ _ rss4 < <(measure zerodrop-4x "$ZERODROP" audit --format json "$WORK/in4")
echo "  memory: $((total / 1048576)) MiB of input -> peak RSS $((rss / 1024)) MiB; $((total4 / 1048576)) MiB of input (4x, same largest file $((largest / 1024)) KiB) -> $((rss4 / 1024)) MiB = $(python3 -c "print(f'{$rss4/$rss:.2f}')")x for 4x the input"
rm -rf "$WORK/in4"

# peers DIR CPU: kube-linter and kube-score on the same input, when installed, for the ratio.
peers() {
  local dir=$1 zcpu=$2
  for peer in kube-linter kube-score; do
    if ! command -v "$peer" >/dev/null; then
      echo "    $peer: not installed on this machine; no ratio"
      continue
    fi
    if [ "$peer" = kube-linter ]; then
      read -r pwall pcpu prss < <(measure "$peer" kube-linter lint "$dir")
    else
      read -r pwall pcpu prss < <(measure "$peer" sh -c "kube-score score $dir/*.yaml")
    fi
    echo "    $peer: ${pcpu}s CPU, max RSS $((prss / 1024)) MiB; zerodrop (json) is $(python3 -c "print(f'{$pcpu / max($zcpu, 0.001):.1f}')")x faster"
  done
}
peers "$WORK/in" "$cpu"

# The shapes that were quadratic, each in one file (memory is judged against that file): every
# Service selecting the same app.kubernetes.io/instance first, and the same labels repeated in
# every namespace. Linear means the same workloads/s as above, in both formats.
SHAPE_N=${SHAPE_N:-20000}
for shape in instance namespaces; do
  generate "$WORK/$shape" "$SHAPE_N" "$SHAPE_N" "$shape"
  size=$(stat -c %s "$WORK/$shape"/*.yaml)
  for format in text json; do
    read -r swall scpu srss < <(best "zerodrop-$shape" "$ZERODROP" audit --format "$format" "$WORK/$shape")
    rate=$(python3 -c "print(f'{$SHAPE_N / max($scpu, 0.001):.0f}')")
    verdict=$([ "${rate%.*}" -ge 10000 ] && echo PASS || echo FAIL)
    echo "  shape $shape: $SHAPE_N workloads in one $((size / 1048576)) MiB file, --format $format: ${scpu}s CPU (${swall}s wall) = ${rate} workloads/s per CPU-second (target >= 10000): $verdict"
    echo "    max RSS $((srss / 1024)) MiB = $(python3 -c "print(f'{$srss*1024/$size:.1f}')") x the file"
  done
  peers "$WORK/$shape" "$scpu"
  rm -rf "$WORK/$shape"
done
