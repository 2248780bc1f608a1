#!/bin/bash
# labels: offline
# cost: 80
# `zerodrop audit --fix` emits what kubectl accepts for every kind: each document is applied
# with `kubectl patch --local` as its own "# apply:" line says (strategic merge for built-in
# kinds, an RFC 6902 JSON patch for an Argo Rollout), the patched objects keep what the patch
# does not touch (a Rollout's image and ports), and auditing them again no longer finds what the
# patches say they close. Then the same over every project of $SHARED_DIR/eval/manifests.
source "$(dirname "$0")/lib.sh"
KUBECTL=$(command -v kubectl || true)
[ -n "$KUBECTL" ] || skip "kubectl is not installed on this machine"
# The google-cloud-sdk dispatcher picks a versioned binary per call: call one directly.
for v in "$KUBECTL".1.3[0-9]; do [ -x "$v" ] && KUBECTL=$v; done
HELPER="$(cd "$(dirname "$0")" && pwd)/audit_fix_kubectl.py"

cat > "$WORK/kinds.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: registry.example/web:1
          ports: [{name: http, containerPort: 8080}]
          startupProbe: {httpGet: {path: /started, port: http}}
          livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 2, failureThreshold: 1}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 3}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
        - name: redis
          image: redis:7
          ports: [{name: redis, containerPort: 6379}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {rollingUpdate: {maxUnavailable: "100%"}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
        - name: agent
          image: registry.example/agent:1
          ports: [{containerPort: 9000}]
          readinessProbe: {tcpSocket: {port: 9000}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: legacy, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: legacy}}
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers:
        - name: app
          image: registry.example/legacy:1
          readinessProbe: {exec: {command: [cat, /tmp/ready]}}
---
apiVersion: v1
kind: Pod
metadata: {name: single, namespace: shop, labels: {app: single}}
spec:
  containers:
    - name: app
      image: registry.example/single:1
      readinessProbe: {exec: {command: [cat, /tmp/ready]}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  strategy:
    canary:
      maxUnavailable: 1
      steps: [{setWeight: 20}, {pause: {duration: 60}}]
  template:
    metadata: {labels: {app: checkout}}
    spec:
      terminationGracePeriodSeconds: 10
      volumes: [{name: cache, emptyDir: {}}]
      initContainers:
        - {name: migrate, image: registry.example/migrate:1}
        - name: proxy
          image: registry.example/proxy:1
          restartPolicy: Always
          ports: [{name: proxy, containerPort: 15001}]
          readinessProbe: {tcpSocket: {port: 15001}}
      containers:
        - name: log
          image: registry.example/log:1
        - name: server
          image: gcr.io/distroless/static-debian12:nonroot
          ports: [{name: grpc, containerPort: 5050}]
          volumeMounts: [{name: cache, mountPath: /cache}]
          lifecycle:
            postStart: {exec: {command: [/server, warm]}}
            preStop:
              exec:
                command: ["/bin/sh", "-c", "sleep 10"]
          readinessProbe: {grpc: {port: 5050}, periodSeconds: 5}
          livenessProbe: {grpc: {port: 5050}, periodSeconds: 2, failureThreshold: 1}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: cart, namespace: shop}
spec:
  selector: {matchLabels: {app: cart}}
  strategy: {canary: {maxUnavailable: "50%"}}
  template:
    metadata: {labels: {app: cart}}
    spec:
      containers:
        - name: cart
          image: registry.example/cart:1
          ports: [{name: http, containerPort: 8080}]
          livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 15}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: cart, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: cart}
  minReplicas: 1
  maxReplicas: 4
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: shop}
spec:
  minAvailable: 3
  selector: {matchLabels: {app: db}}
YAML
for app in web db agent legacy single checkout cart; do
  printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: shop}\nspec:\n  selector: {app: %s}\n  ports: [{port: 80, targetPort: %s}]\n' \
    "$app" "$app" "$([ $app = checkout ] && echo proxy || echo 8080)" >> "$WORK/kinds.yaml"
done

cd "$WORK"
expect_exit 1 "$ZERODROP" audit --fix kinds.yaml
cp out fixes.yaml
# The Rollouts get JSON patches, every built-in kind a strategic merge.
expect_grep '^# apply: kubectl patch rollout.argoproj.io/checkout -n shop --type=json ' fixes.yaml
expect_grep '^# apply: kubectl patch deployment.apps/web -n shop --type=strategic ' fixes.yaml
expect_grep '^# apply: kubectl patch horizontalpodautoscaler.autoscaling/cart -n shop ' fixes.yaml
mkdir own
python3 "$HELPER" "$KUBECTL" fixes.yaml own kinds.yaml > own/summary || fail "see above"
cat own/summary
for kind in deployment.apps statefulset.apps daemonset.apps replicaset.apps pod \
    rollout.argoproj.io horizontalpodautoscaler.autoscaling poddisruptionbudget.policy; do
  expect_grep "[ (]$kind \(" own/summary
done

# The patched Rollout kept its containers (a merge patch would have replaced the list), the
# init container before the sidecar, and the postStart hook next to the new preStop.
python3 - own/after.json <<'PY' || fail "the patched Rollout lost what the patch does not touch"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
ro = next(o for o in items if o["kind"] == "Rollout" and o["metadata"]["name"] == "checkout")
spec = ro["spec"]["template"]["spec"]
server = spec["containers"][1]
assert [c["name"] for c in spec["containers"]] == ["log", "server"], spec["containers"]
assert server["image"] == "gcr.io/distroless/static-debian12:nonroot", server
assert server["ports"] == [{"name": "grpc", "containerPort": 5050}], server
assert server["lifecycle"]["postStart"] == {"exec": {"command": ["/server", "warm"]}}, server
assert server["lifecycle"]["preStop"] == {"sleep": {"seconds": 5}}, server
assert server["livenessProbe"]["grpc"] == {"port": 5050}, server
assert [c["name"] for c in spec["initContainers"]] == ["migrate", "proxy"], spec
assert ro["spec"]["strategy"]["canary"]["steps"][0] == {"setWeight": 20}, ro["spec"]
assert ro["spec"]["strategy"]["canary"]["maxUnavailable"] == 0, ro["spec"]
PY

# Audited again, the patched objects no longer have what each patch says it closes.
code=0
"$ZERODROP" audit --format json own/after.json > after.out 2> after.err || code=$?
[ "$code" -le 1 ] || { cat after.err; fail "the patched objects cannot be audited (exit $code)"; }
python3 - after.out own/closes.json <<'PY' || fail "a patch does not close what it says"
import json, sys
found = json.load(open(sys.argv[1]))["findings"]
left = {(f["object"]["kind"], f["object"]["name"], f["rule"], f["object"]["container"])
        for f in found}
checked = 0
for w in json.load(open(sys.argv[2])):
    for closed in w["closes"]:
        rule, _, container = closed.partition(" (")
        key = (w["kind"], w["name"], rule, container.rstrip(")"))
        assert key not in left, f"{key} is still found after its patch"
        checked += 1
assert checked >= 15, checked
print(f"audit_fix_kubectl: {checked} closed findings gone after the patches")
PY

# Kubernetes 1.29 has no native sleep: each workload whose preStop becomes an exec sleep gets
# the advice that copies zerodrop in. Made a patch as it says (sed, the image set), kubectl
# applies it after the workload's own patch; the pod then has the emptyDir, the init container
# running copy-self into it, and each such container mounting it and sleeping with it, while
# what it had (volumes, init containers, mounts) stays.
expect_exit 1 "$ZERODROP" audit --fix --k8s-version 1.29 kinds.yaml
cp out old-fixes.yaml
expect_grep "^## zerodrop --fix advice: Rollout checkout: " old-fixes.yaml
mkdir old
python3 "$HELPER" "$KUBECTL" old-fixes.yaml old kinds.yaml > old/summary || fail "see above"
cat old/summary
python3 - old/advised.json <<'PY' || fail "the copy-in advice does not wire zerodrop in"
import json, sys
advised = json.load(open(sys.argv[1]))
names = sorted(f'{o["kind"]}/{o["metadata"]["name"]}' for o in advised)
assert {"Rollout/checkout", "Deployment/web", "StatefulSet/db"} <= set(names), names
for o in advised:
    spec = o["spec"] if o["kind"] == "Pod" else o["spec"]["template"]["spec"]
    assert [v["name"] for v in spec["volumes"]].count("zerodrop") == 1, spec
    copy = [c for c in spec["initContainers"] if c["name"] == "zerodrop-copy"]
    assert len(copy) == 1, spec
    assert copy[0]["command"] == ["/zerodrop", "copy-self", "/target"], copy
    assert copy[0]["image"] == "registry.example/zerodrop:0.1.0", copy
    assert copy[0]["volumeMounts"] == [{"name": "zerodrop", "mountPath": "/target"}], copy
    pods = spec["containers"] + spec["initContainers"]
    sleepers = [c for c in pods
                if c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
                == ["/zerodrop/zerodrop", "sleep", "5"]]
    assert sleepers, spec
    for c in sleepers:
        assert {"name": "zerodrop", "mountPath": "/zerodrop"} in c["volumeMounts"], c
ro = next(o for o in advised if o["metadata"]["name"] == "checkout")
spec = ro["spec"]["template"]["spec"]
assert [c["name"] for c in spec["initContainers"]] == ["migrate", "proxy", "zerodrop-copy"], spec
assert [v["name"] for v in spec["volumes"]] == ["cache", "zerodrop"], spec
server = spec["containers"][1]
assert server["image"] == "gcr.io/distroless/static-debian12:nonroot", server
assert [m["name"] for m in server["volumeMounts"]] == ["cache", "zerodrop"], server
assert server["lifecycle"]["postStart"] == {"exec": {"command": ["/server", "warm"]}}, server
print(f"audit_fix_kubectl: copy-in advice applied to {len(advised)} objects ({', '.join(names)})")
PY

# Every project of the evaluation set: every patch the audit emits, kubectl accepts.
EVAL="${SHARED_DIR:-}/eval/manifests"
[ -d "$EVAL" ] || fail "no evaluation set at $EVAL"
total=0
for project in "$EVAL"/*/; do
  name=$(basename "$project")
  code=0
  "$ZERODROP" audit --fix "$project" > "$name.fix" 2> "$name.err" || code=$?
  [ "$code" -le 1 ] || { cat "$name.err"; fail "$name: audit --fix exited $code"; }
  mkdir "$name.out"
  python3 "$HELPER" "$KUBECTL" "$name.fix" "$name.out" "$project" > "$name.summary" \
    || fail "$name: see above"
  n=$(sed -n 's/^checked \([0-9]*\) patches.*/\1/p' "$name.summary")
  total=$((total + n))
done
[ "$total" -ge 50 ] || fail "only $total patches over the evaluation set"
echo "audit_fix_kubectl: kubectl accepted all $total patches over $(ls -d "$EVAL"/*/ | wc -l) projects"
