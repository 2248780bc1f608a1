#!/bin/bash
# labels: offline
# cost: 10
# zerodrop audit reads its whole input or says why not: UTF-16 (PowerShell's ">"), a stream of
# concatenated JSON objects, and empty input (exit 2, as an empty folder).
source "$(dirname "$0")/lib.sh"

cat > "$WORK/three.yaml" <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: registry.example/web:1, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
YAML
expect_exit 1 "$ZERODROP" audit --format json "$WORK/three.yaml"
cp "$WORK/out" "$WORK/utf8.json"
python3 -c 'import sys; open(sys.argv[2], "w", encoding="utf-16").write(open(sys.argv[1]).read())' \
  "$WORK/three.yaml" "$WORK/ps.yaml"
expect_exit 1 "$ZERODROP" audit --format json "$WORK/ps.yaml"
python3 - "$WORK/utf8.json" "$WORK/out" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["summary"]["objects"] == 3, b["summary"]
assert [f["rule"] for f in a["findings"]] == [f["rule"] for f in b["findings"]], (a, b)
PY
# Without its byte order mark UTF-16 is refused by name, not read in part.
tail -c +3 "$WORK/ps.yaml" > "$WORK/nobom.yaml"
expect_exit 1 "$ZERODROP" audit "$WORK/nobom.yaml"
expect_grep 'nobom.yaml:1:1: error: holds NUL bytes: UTF-16' "$WORK/out"

# A stream of JSON objects, as a `for` loop of `kubectl get -o json` writes: every one is read.
python3 - "$WORK/three.yaml" > "$WORK/stream.json" <<'PY'
import json, sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    print(json.dumps(doc, indent=2))
PY
expect_exit 1 "$ZERODROP" audit --format json "$WORK/stream.json"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert s["objects"] == 3 and s["workloads"] == 1, s' "$WORK/out"

# Empty input is a usage error, as an empty folder is.
expect_exit 2 "$ZERODROP" audit - < /dev/null
expect_grep 'no Kubernetes object' "$WORK/err"
printf '# nothing\n---\n' > "$WORK/empty.yaml"
expect_exit 2 "$ZERODROP" audit "$WORK/empty.yaml"
# An empty file among others is fine.
expect_exit 1 "$ZERODROP" audit "$WORK/empty.yaml" "$WORK/three.yaml"
# A pipe over --max-file-mb is read once, up to the limit, and reported: a second read of the
# pipe would wait for a writer that is gone (the timeout fails it).
mkfifo "$WORK/big.pipe"
head -c 1500000 /dev/zero | tr '\0' '#' > "$WORK/big.comment"
cat "$WORK/big.comment" > "$WORK/big.pipe" &
expect_exit 1 timeout 60 "$ZERODROP" audit --max-file-mb 1 "$WORK/big.pipe" "$WORK/three.yaml"
expect_grep 'big.pipe:1:1: error: larger than the limit of 1048576 bytes; not read' "$WORK/out"
wait || true  # cat may end on SIGPIPE: the audit stops reading at the limit

# A linked folder is audited, a link loop ends, and a file linked under a second name once.
mkdir -p "$WORK/tree" "$WORK/elsewhere"
cp "$WORK/three.yaml" "$WORK/tree/a.yaml"
cp "$WORK/three.yaml" "$WORK/elsewhere/c.yaml"
ln -s "$WORK/elsewhere" "$WORK/tree/linked"
ln -s "$WORK/tree" "$WORK/tree/loop"
ln -s "$WORK/tree/a.yaml" "$WORK/tree/b.yaml"
expect_exit 1 timeout 60 "$ZERODROP" audit --format json "$WORK/tree"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert s["files"] == 2 and s["objects"] == 6, s' "$WORK/out"
echo "audit_input: ok"
