#!/usr/bin/env bash
# zerodrop verify's objects against `zerodrop lab --kube-api` (one lab, the graceful example):
# --dry-run prints the plan and the anchor ConfigMap and agents' Job as YAML that kubectl reads,
# and creates nothing; --cleanup with nothing left says so (exit 0); a SIGKILLed verify leaves its
# anchor and the Job it owns, and --cleanup deletes the anchor, names what it owned, and the lab's
# garbage collector removes the Job and its pods; a Ctrl-C'd verify removes both itself; a whole
# run started by --action set-image with --junit leaves nothing behind.
# labels: timing
# cost: 30 (four verify runs against one lab: its start, one rollout, agents started three times)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

run="$WORK/lab"
timeout 240 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 2 \
  --propagation 200ms --rate 20 --warmup 500ms --tail 120s --readiness http:/readyz \
  --readiness-period 100ms --readiness-failure 1 --grace 10s --prestop sleep:500ms \
  --out "$run" -- "$EXAMPLES/graceful" --host '{ip}' --port '{port}' --delay 300ms \
  >"$WORK/lab.out" 2>"$WORK/lab.err" &
lab=$!
wait_for_kube_api "$lab" "$WORK/lab.err"
export KUBECONFIG="$run/kubeconfig"
managed() {  # what verify's label finds: configmaps, jobs and pods, one "kind/name" a line
  kubectl get configmaps,jobs,pods -l app.kubernetes.io/managed-by=zerodrop -o name 2>&1
}
wait_none() {  # wait_none WHY: until nothing of verify's is left (the collector runs in the lab)
  for _ in $(seq 100); do [ -z "$(managed)" ] && return 0; sleep 0.1; done
  managed; fail "$1: verify's objects are left"
}
# An array, not a function: a function run with & is a subshell, and its pid is not verify's.
verify=("$ZERODROP" verify deploy/web --agents per-node --agent-image zerodrop:lab --rate 40)

# --dry-run: the plan, then YAML that kubectl itself reads as a ConfigMap and a Job owned by it.
"${verify[@]}" --dry-run >"$WORK/dry.yaml" 2>"$WORK/dry.err" || { cat "$WORK/dry.err"; fail "--dry-run failed"; }
expect_grep '^# action: +restart: PATCH deploy/web' "$WORK/dry.yaml"
expect_grep '^# agents: +2 \(one per node\), 20 requests/s each' "$WORK/dry.yaml"
python3 - "$WORK/dry.yaml" <<'PY' || fail "--dry-run's YAML"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = [d["kind"] for d in docs]
assert kinds == ["ConfigMap", "Job"], kinds
anchor, job = docs
assert job["metadata"]["ownerReferences"][0]["name"] == anchor["metadata"]["name"], job["metadata"]
assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == 2, job["spec"]
assert anchor["metadata"]["labels"]["zerodrop.dev/run"] == job["metadata"]["labels"]["zerodrop.dev/run"]
PY
kubectl create --dry-run=client --validate=false -o name -f "$WORK/dry.yaml" >"$WORK/dry.kubectl" \
  || fail "kubectl does not read --dry-run's YAML"
expect_grep '^configmap/zerodrop-verify-' "$WORK/dry.kubectl"
expect_grep '^job.batch/zerodrop-verify-' "$WORK/dry.kubectl"
[ -z "$(managed)" ] || fail "--dry-run created something: $(managed)"
expect_grep 'zerodrop: warning: audit of the live deploy/web' "$WORK/dry.err"

# --cleanup with nothing to remove.
"$ZERODROP" verify --cleanup >"$WORK/clean0" || fail "--cleanup with nothing left exited $?"
expect_grep '^nothing to clean up in namespace default' "$WORK/clean0"

# A SIGKILLed verify: its anchor and Job stay, --cleanup removes both (the Job through the lab's
# garbage collector) and the agents with them.
"${verify[@]}" --warmup 120s --out "$WORK/killed" >"$WORK/killed.out" 2>"$WORK/killed.err" &
pid=$!
for _ in $(seq 300); do
  [ "$(grep -c '"detail":"agent zerodrop-verify-.* is loading' "$WORK/killed/events.ndjson" 2>/dev/null)" = 2 ] && break
  sleep 0.1
done
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
managed >"$WORK/left"
expect_grep '^configmap/zerodrop-verify-[a-z0-9]+$' "$WORK/left"
expect_grep '^job.batch/zerodrop-verify-[a-z0-9]+$' "$WORK/left"
run_id=$(sed -n 's|^configmap/zerodrop-verify-||p' "$WORK/left")
"$ZERODROP" verify --cleanup >"$WORK/clean1" || fail "--cleanup exited $?"
expect_grep "^removed configmap/zerodrop-verify-$run_id \(run of deploy/web, started .*; owns job/zerodrop-verify-$run_id\)$" "$WORK/clean1"
wait_none "after a SIGKILLed verify and --cleanup"
expect_grep "the garbage collector \(its owner configmap/zerodrop-verify-$run_id is gone\) deleted job zerodrop-verify-$run_id \(Background\)" "$run/events.ndjson"
"$ZERODROP" verify --cleanup >"$WORK/clean2" || fail "a second --cleanup exited $?"
expect_grep '^nothing to clean up' "$WORK/clean2"

# Ctrl-C: verify removes its objects on the way out (exit 130).
"${verify[@]}" --warmup 120s --out "$WORK/int" >"$WORK/int.out" 2>"$WORK/int.err" &
pid=$!
for _ in $(seq 300); do
  [ "$(grep -c '"detail":"agent zerodrop-verify-.* is loading' "$WORK/int/events.ndjson" 2>/dev/null)" = 2 ] && break
  sleep 0.1
done
kill -INT "$pid"
got=0; wait "$pid" || got=$?
[ "$got" = 130 ] || { cat "$WORK/int.err"; fail "Ctrl-C'd verify exited $got, expected 130"; }
wait_none "after Ctrl-C"

# --action set-image names a container the Deployment does not have: exit 2 before anything.
expect_exit 2 "${verify[@]}" --action set-image nope=web:v2
[ -z "$(managed)" ] || fail "a refused set-image created something: $(managed)"

# A whole run (graceful, a preStop longer than the propagation) started by kubectl set image's
# patch, which the lab's API accepts and rolls out: it passes, its JUnit says so, and nothing is
# left.
got=0
"${verify[@]}" --action set-image app=zerodrop.dev/lab:v2 --warmup 1s --tail 1s --rollout-timeout 60s --out "$WORK/whole" --junit "$WORK/junit.xml" \
  >"$WORK/whole.out" 2>"$WORK/whole.err" || got=$?
[ "$got" = 0 ] || { tail -30 "$WORK/whole.out" "$WORK/whole.err"; fail "the whole run exited $got"; }
wait_none "after a whole run"
expect_grep "verify patched container app's image to zerodrop.dev/lab:v2" "$WORK/whole/events.ndjson"
python3 - "$WORK/junit.xml" <<'PY' || fail "the whole run's JUnit"
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot()
assert (s.get("failures"), s.get("errors")) == ("0", "0"), s.attrib
assert any(c.get("name") == "verify run" for c in s.findall("testcase"))
PY
echo PASS
