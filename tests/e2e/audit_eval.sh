#!/bin/bash
# labels: offline
# cost: 50
# zerodrop audit on the 27 sets of real public manifests ($SHARED_DIR/eval/manifests, read in
# place, never copied): no crash, and exactly the findings judged in audit_eval_judged.txt (each
# with its verdict against Kubernetes' semantics and the reason); a new or missing finding fails
# with a diff. Precision on the judged findings must stay >= 97%. Then: no readiness --fix points
# a probe at what cannot answer it.
source "$(dirname "$0")/lib.sh"
EVAL="${SHARED_DIR:-}/eval/manifests"
[ -d "$EVAL" ] || skip "no evaluation set at $EVAL (shared/eval is not on this machine)"
HERE="$(cd "$(dirname "$0")" && pwd)"
JUDGED="$HERE/audit_eval_judged.txt"

python3 "$HERE/audit_eval.py" check "$JUDGED" "$ZERODROP" "$EVAL" | tee "$WORK/check" \
  || fail "findings differ from the judged ones (- judged, not found; + found, not judged)"
precision=$(sed -n 's/.*precision \([0-9.]*\)%.*/\1/p' "$WORK/check" | head -1)
python3 -c "import sys; sys.exit(float('$precision') < 97.0)" \
  || fail "precision $precision% is below 97%"

# Every readiness probe --fix patches in is one the container already passes (its startup or
# liveness handler, same port and scheme) or a TCP connect to a datastore port; never an HTTP GET
# on a port whose protocol nothing states.
for project in "$EVAL"/*/; do
  "$ZERODROP" audit --fix "$project" 2>/dev/null || true
done > "$WORK/fixes.yaml"
python3 - "$WORK/fixes.yaml" "$EVAL" <<'PY' || fail "a readiness fix points a probe at what cannot answer it"
import sys, yaml, glob, os, re
patched = []
json_patched = []  # (kind, name, container index, probe) from RFC 6902 patches (custom resources)
for chunk in open(sys.argv[1]).read().split("\n---\n"):
    doc = yaml.safe_load(chunk)
    if isinstance(doc, list):
        head = re.search(r"# zerodrop --fix: (\S+) (?:\S+/)?(\S+) \(", chunk)
        for op in doc:
            m = re.fullmatch(r"/spec/template/spec/containers/(\d+)(/readinessProbe)?", op.get("path", ""))
            value = op.get("value")
            if not m or op.get("op") not in ("add", "replace") or not isinstance(value, dict):
                continue
            probe = value if m.group(2) else value.get("readinessProbe")
            if probe:
                json_patched.append((head.group(1), head.group(2), int(m.group(1)), probe))
        continue
    spec = ((doc or {}).get("spec") or {}).get("template", {}).get("spec", {})
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if c.get("readinessProbe"):
            patched.append((doc["kind"], doc["metadata"]["name"], c["name"], c["readinessProbe"]))
# The containers as written, to compare the patched probe with what they already pass.
written = {}
by_index = {}
for path in glob.glob(os.path.join(sys.argv[2], "*", "*")):
    try:
        docs = list(yaml.safe_load_all(open(path)))
    except Exception:
        continue
    for d in docs:
        if not isinstance(d, dict):
            continue
        spec = ((d.get("spec") or {}).get("template") or {}).get("spec") or {}
        for c in spec.get("containers") or []:
            written.setdefault((d.get("kind"), (d.get("metadata") or {}).get("name"), c.get("name")), []).append(c)
        for i, c in enumerate(spec.get("containers") or []):
            by_index.setdefault((d.get("kind"), (d.get("metadata") or {}).get("name"), i), c.get("name"))
DATASTORE_PORTS = {5432, 3306, 27017, 6379, 9092, 5672, 11211, 9042, 2181, 4222, 26379, 33060}
def handler(p):
    return {k: v for k, v in p.items() if k in ("httpGet", "tcpSocket", "grpc", "exec") and v}
for kind, name, index, probe in json_patched:
    patched.append((kind, name, by_index.get((kind, name, index)), probe))
bad = 0
for kind, name, container, probe in patched:
    h = handler(probe)
    ok = False
    for c in written.get((kind, name, container), []):
        proven = [handler(c[k]) for k in ("startupProbe", "livenessProbe") if c.get(k)]
        ports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}
        if h in proven:
            ok = True
        elif "tcpSocket" in h:
            port = h["tcpSocket"].get("port")
            ok = ports.get(port, port) in DATASTORE_PORTS
    if not ok:
        bad += 1
        print(f"{kind}/{name} {container}: readiness fix {h} is neither a handler it passes nor "
              f"a datastore connect")
print(f"audit_eval: {len(patched)} readiness probes patched in, {bad} unproven")
sys.exit(1 if bad else 0)
PY
