#!/usr/bin/env bash
# cost: 16
# zerodrop verify end to end through the real kubectl proxy against tests/e2e/fake_kube_api.py:
# a graceful app rolls out with no failure (exit 0); a naive one that dies at SIGTERM while the
# routers still send it new connections is named deregistration-race (exit 1). Both leave a run
# folder that 'zerodrop report' renders again.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl is not installed"
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# Called as $(run_fake APP): a subshell, whose background jobs lib.sh's cleanup cannot see, so
# the subshell stops its fake itself, however it ends.
run_fake() {  # run_fake APP: starts the fake, verifies deploy/web with load on its /app
  local port
  port=$(free_port)
  python3 "$SOURCE_DIR/tests/e2e/fake_kube_api.py" "$port" --app "$1" >"$WORK/fake-$1.log" 2>&1 &
  trap "kill $! 2>/dev/null || true" EXIT
  for _ in $(seq 600); do grep -q listening "$WORK/fake-$1.log" && break; sleep 0.05; done
  cat >"$WORK/kubeconfig-$1" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: me, user: {}}]
contexts: [{name: fake, context: {cluster: fake, user: me, namespace: shop}}]
current-context: fake
YAML
  local got=0
  "$ZERODROP" verify deploy/web --kubeconfig "$WORK/kubeconfig-$1" --agents none \
    --url "http://127.0.0.1:$port/app" \
    --rate 200 --warmup 500ms --tail 500ms --rollout-timeout 30s --out "$WORK/run-$1" \
    --junit "$WORK/junit-$1.xml" \
    >"$WORK/out-$1" 2>"$WORK/err-$1" || got=$?
  echo "$got"
}

got=$(run_fake graceful)
[ "$got" = 0 ] || { cat "$WORK/out-graceful" "$WORK/err-graceful"; fail "graceful exited $got"; }
events="$WORK/run-graceful/events.ndjson"
for kind in rollout_started rollout_finished deletion_started pod_exited endpoint_changed; do
  expect_grep "\"kind\":\"$kind\"" "$events"
done
[ "$(grep -c '"kind":"deletion_started"' "$events")" = 2 ] || fail "two old pods should be deleted"
expect_grep '"engine": *"verify"' "$WORK/run-graceful/run.json"
# The live Deployment has no preStop: the audit says so before the run.
expect_grep "warning: audit of the live deploy/web: .*deregistration-race" "$WORK/err-graceful"
expect_exit 0 "$ZERODROP" report "$WORK/run-graceful"

got=$(run_fake naive)
[ "$got" = 1 ] || { cat "$WORK/out-naive" "$WORK/err-naive"; fail "naive exited $got"; }
expect_grep "deregistration-race" "$WORK/out-naive"
expect_grep '"id": *"deregistration-race"' "$WORK/run-naive/report.json"
expect_grep "carried no backend name" "$WORK/run-naive/events.ndjson"
expect_exit 1 "$ZERODROP" report "$WORK/run-naive"
# --junit: what a CI system parses. graceful: every testcase passes; naive: the hole and the run
# fail, the hole's failure carrying its evidence.
junit() {  # junit APP: "tests failures errors" then each failed testcase and its evidence
  python3 - "$WORK/junit-$1.xml" <<'PY'
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot()
assert s.tag == "testsuite", s.tag
print(s.get("tests"), s.get("failures"), s.get("errors"), len(s.findall("testcase")))
for c in s.findall("testcase"):
    for f in c.findall("failure"):
        print(c.get("name"), f.get("type"), (f.text or "").strip()[:60])
PY
}
# One testcase per hole of record::kHoles (ten and unexplained, since ingress-reload-reset) and
# the run.
[ "$(junit graceful)" = "12 0 0 12" ] || { junit graceful; fail "graceful's JUnit should pass"; }
junit naive >"$WORK/junit-naive" || fail "naive's JUnit does not parse"
head -1 "$WORK/junit-naive" | grep -Eq '^12 [2-9] 0 12$' || { cat "$WORK/junit-naive"; fail "naive's JUnit counts"; }
expect_grep '^deregistration-race deregistration-race .+' "$WORK/junit-naive"
expect_grep '^verify run requests-failed' "$WORK/junit-naive"
expect_exit 2 "$ZERODROP" verify deploy/web --kubeconfig "$WORK/kubeconfig-naive" --agents none \
  --url http://127.0.0.1:1/ --junit /nonexistent/dir/junit.xml
[ -z "$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'zerodrop-verify.*')" ] \
  || fail "a private kubectl folder was left behind"
echo PASS
