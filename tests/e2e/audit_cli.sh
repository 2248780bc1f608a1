#!/bin/bash
# labels: offline
# cost: 20
# zerodrop audit as a CI gate: exit codes, formats, stdin, bad input, --fix never edits files.
source "$(dirname "$0")/lib.sh"
DATA="$SOURCE_DIR/tests/audit/data"

# Usage errors: exit 2 with one line naming the culprit.
expect_exit 2 "$ZERODROP" audit
expect_grep 'give at least one PATH' "$WORK/err"
expect_exit 2 "$ZERODROP" audit "$WORK/missing.yaml"
expect_grep "missing.yaml: no such file or folder" "$WORK/err"
expect_exit 2 "$ZERODROP" audit --format xml "$DATA"
expect_grep "--format: expected text, json, sarif or github, got 'xml'" "$WORK/err"
expect_exit 2 "$ZERODROP" audit --propagation fast "$DATA"
expect_grep "--propagation" "$WORK/err"
expect_exit 2 "$ZERODROP" audit --ignore no-such-rule "$DATA"
expect_grep "unknown rule 'no-such-rule'" "$WORK/err"
expect_exit 0 "$ZERODROP" audit --list-rules
expect_grep '^prestop-missing +deregistration-race +error' "$WORK/out"
expect_exit 0 "$ZERODROP" audit --help
expect_grep 'zerodrop.dev/ignore' "$WORK/out"

# A clean workload exits 0; findings at or above --fail-on exit 1.
cat > "$WORK/good.yaml" <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: http}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: web:1
          ports: [{name: http, containerPort: 8080}]
          lifecycle: {preStop: {sleep: {seconds: 5}}}
          readinessProbe: {httpGet: {path: /ready, port: http}}
          livenessProbe: {httpGet: {path: /livez, port: http}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}
YAML
expect_exit 0 "$ZERODROP" audit "$WORK/good.yaml"
expect_grep '1 workload: 0 errors, 0 warnings, 0 infos' "$WORK/out"
expect_exit 0 "$ZERODROP" audit "$DATA/traefik.yaml"  # warnings only
expect_exit 1 "$ZERODROP" audit --fail-on warning "$DATA/traefik.yaml"
expect_grep 'traefik.yaml:[0-9]+:[0-9]+: warning: liveness and readiness both GET /ping on port 8080' "$WORK/out"

# Bad input: reported with file:line, the other documents and files are still audited.
printf '\x00\x01binary\xff\n' > "$WORK/junk.yaml"
expect_exit 1 "$ZERODROP" audit "$DATA/broken.yaml" "$WORK/junk.yaml" "$WORK/good.yaml"
expect_grep 'broken.yaml:13:13: error: spec.replicas: expected a whole number' "$WORK/out"
expect_grep 'broken.yaml:28:[0-9]+: error: invalid YAML' "$WORK/out"
expect_grep 'junk.yaml:[0-9]+:[0-9]+: error: ' "$WORK/out"
expect_grep 'container .api. takes traffic' "$WORK/out"

# Alias bombs and oversized files are bounded.
{
  echo 'apiVersion: v1'; echo 'kind: List'; echo 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
  for i in 1 2 3 4 5 6 7 8; do echo "a$i: &a$i [*a$((i-1)),*a$((i-1)),*a$((i-1)),*a$((i-1)),*a$((i-1)),*a$((i-1)),*a$((i-1)),*a$((i-1)),*a$((i-1))]" | sed "s/\*a0/*a/g"; done
  echo 'items: *a8'
} > "$WORK/bomb.yaml"
expect_exit 1 timeout 20 "$ZERODROP" audit "$WORK/bomb.yaml"
head -c 2200000 /dev/zero | tr '\0' '#' > "$WORK/big.yaml"
expect_exit 1 "$ZERODROP" audit --max-file-mb 1 "$WORK/big.yaml"
expect_grep 'big.yaml:1:1: error: larger than the limit of 1048576 bytes' "$WORK/out"

# stdin, JSON and GitHub annotations.
expect_exit 1 sh -c "cat '$DATA/argo-rollout.yaml' | '$ZERODROP' audit --format json -"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["findings"][0]["file"]=="<stdin>", d' "$WORK/out" \
  || fail "stdin findings should name <stdin>"
# A pipe (`<(helm template …)`) is read once and kept for both passes: the same findings as the file.
findings() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$WORK/out"; }
expect_exit 1 "$ZERODROP" audit --format json "$DATA/argo-rollout.yaml"
from_file=$(findings)
expect_exit 1 bash -c "'$ZERODROP' audit --format json <(cat '$DATA/argo-rollout.yaml')"
[ "$(findings)" = "$from_file" ] && [ "$from_file" -gt 0 ] \
  || fail "a pipe gave $(findings) findings, the file $from_file"
# A folder with nothing to audit is an error, not a silent pass; a dangling link is skipped.
mkdir -p "$WORK/empty" "$WORK/linked"
expect_exit 2 "$ZERODROP" audit "$WORK/empty"
expect_grep "empty: no \*.yaml, \*.yml or \*.json file in this folder" "$WORK/err"
ln -s "$WORK/nowhere.yaml" "$WORK/linked/a-dangling.yaml"
cp "$DATA/argo-rollout.yaml" "$WORK/linked/b.yaml"
expect_exit 1 "$ZERODROP" audit "$WORK/linked"
expect_grep "audited 1 file" "$WORK/out"
expect_exit 1 "$ZERODROP" audit --format github "$DATA/argo-rollout.yaml"
expect_grep '^::error file=.*argo-rollout.yaml,line=[0-9]+,col=[0-9]+,title=prestop-binary-missing \(deregistration-race\)::' "$WORK/out"

# Ignores: annotation and config file.
cat > "$WORK/config.yaml" <<'YAML'
propagation: 3s
ignore:
  - {rule: liveness-kills-drain, name: traef*}
YAML
expect_exit 1 "$ZERODROP" audit --config "$WORK/config.yaml" --fail-on warning "$DATA/traefik.yaml"
grep -q 'liveness-same-as-readiness' "$WORK/out" && fail "config ignore did not apply"
expect_grep 'replicas-too-few' "$WORK/out"

# --fix prints patches and leaves the input untouched.
cp "$DATA/argo-rollout.yaml" "$WORK/rollout.yaml"
before=$(sha256sum < "$WORK/rollout.yaml")
expect_exit 1 "$ZERODROP" audit --fix "$WORK/rollout.yaml"
[ "$before" = "$(sha256sum < "$WORK/rollout.yaml")" ] || fail "--fix modified the input file"
expect_grep '^# closes: prestop-binary-missing \(server\)' "$WORK/out"
# A Rollout is a custom resource: an RFC 6902 JSON patch, which kubectl accepts for it.
expect_grep '^# apply: kubectl patch rollout.argoproj.io/checkout -n shop --type=json ' "$WORK/out"
expect_grep '^- \{"op":"add","path":"/spec/template/spec/containers/0/lifecycle/preStop/sleep","value":\{"seconds":5\}\}$' "$WORK/out"
expect_grep '"path":"/spec/template/spec/terminationGracePeriodSeconds","value":12' "$WORK/out"
expect_grep 'audited 1 file' "$WORK/err"
expect_exit 1 "$ZERODROP" audit --fix --k8s-version 1.29 "$WORK/rollout.yaml"
expect_grep '"path":"/spec/template/spec/containers/0/lifecycle/preStop/exec/command","value":\["/zerodrop","sleep","5"\]' "$WORK/out"
echo "audit_cli: ok"
