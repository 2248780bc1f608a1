#!/usr/bin/env bash
# cost: 16
# zerodrop verify's setup errors: one line naming what is wrong, exit 2, nothing left behind
# (no kubectl proxy, no private folder). Drives the real kubectl against tests/e2e/fake_kube_api.py.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl is not installed"
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# leftovers: kubectl proxies started under $WORK, or private folders of verify.
leftovers() {
  pgrep -f "kubectl.*proxy --unix-socket=$WORK" || true
  find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'zerodrop-verify.*' || true
}
expect_clean() {
  [ -z "$(leftovers)" ] || fail "left behind after '$1': $(leftovers)"
}
expect_one_line() {  # expect_one_line PATTERN: stderr is one error line matching PATTERN
  [ "$(grep -c 'zerodrop: error:' "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "not one error line"; }
  expect_grep "$1" "$WORK/err"
}

kubeconfig() {  # kubeconfig PORT: a kubeconfig whose cluster is http://127.0.0.1:PORT
  cat >"$WORK/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$1"}}]
users: [{name: me, user: {}}]
contexts: [{name: fake, context: {cluster: fake, user: me, namespace: shop}}]
current-context: fake
YAML
}
start_fake() {  # start_fake PORT ARGS...
  python3 "$SOURCE_DIR/tests/e2e/fake_kube_api.py" "$@" >"$WORK/fake-$1.log" 2>&1 &
  for _ in $(seq 600); do grep -q listening "$WORK/fake-$1.log" && return 0; sleep 0.05; done
  cat "$WORK/fake-$1.log"; fail "the fake API on port $1 did not start"
}

# Flags: a Deployment is needed, and a URL; --action is checked.
expect_exit 2 "$ZERODROP" verify --url http://127.0.0.1:1/
expect_one_line "needs a Deployment"
expect_exit 2 "$ZERODROP" verify pod/web --url http://127.0.0.1:1/
expect_one_line "'pod/web': verify checks a Deployment"
expect_exit 2 "$ZERODROP" verify deploy/web --agents none
expect_one_line "agents none needs --url"
expect_exit 2 "$ZERODROP" verify deploy/web --agents 0
expect_one_line "agents: "
expect_exit 2 "$ZERODROP" verify deploy/web --kubectl "$WORK/none" --url http://127.0.0.1:1/
expect_one_line "kubectl not found .*kubernetes-client"
expect_clean "no kubectl"

# --print-rbac needs no cluster.
expect_exit 0 "$ZERODROP" verify --print-rbac -n shop
expect_grep "kind: Role" "$WORK/out"
expect_grep "resources: \[deployments\]" "$WORK/out"
expect_grep "verbs: \[get, list, watch, patch\]" "$WORK/out"
expect_grep "resources: \[jobs\]" "$WORK/out"
expect_grep "resources: \[pods/log\]" "$WORK/out"

# The API refuses connections: kubectl proxy answers for it; its words reach the one line.
dead=$(free_port)
kubeconfig "$dead"
expect_exit 2 "$ZERODROP" verify deploy/web --kubeconfig "$WORK/kubeconfig" --url http://127.0.0.1:1/
expect_one_line "the API server does not answer: .*(refused|connect)"
expect_clean "refused API"

# A kubeconfig context that does not exist: kubectl's own words.
expect_exit 2 "$ZERODROP" verify deploy/web --kubeconfig "$WORK/kubeconfig" --context nowhere \
  --url http://127.0.0.1:1/
expect_one_line "kubectl proxy exited .*nowhere"
expect_clean "bad context"

port=$(free_port)
kubeconfig "$port"
start_fake "$port" --deny "pods watch,deployments.apps patch,endpointslices.discovery.k8s.io list"
# Missing permissions: one line listing every one of them, then nothing changed.
expect_exit 2 "$ZERODROP" verify deploy/web --kubeconfig "$WORK/kubeconfig" --url http://127.0.0.1:1/
expect_one_line "missing permissions in namespace shop: .*pods watch"
expect_grep "endpointslices.discovery.k8s.io list" "$WORK/err"
expect_grep "deployments.apps patch .*--print-rbac" "$WORK/err"
expect_clean "missing RBAC"
# Watching needs no patch: still refused for the rest.
expect_exit 2 "$ZERODROP" verify deploy/web --action watch --kubeconfig "$WORK/kubeconfig" \
  --url http://127.0.0.1:1/
expect_one_line "missing permissions in namespace shop: pods watch, endpointslices"
if grep -q "patch" "$WORK/err"; then fail "--action watch asked for patch"; fi

port2=$(free_port)
kubeconfig "$port2"
start_fake "$port2"
# No such Deployment, no such Service, a Service that selects other pods.
expect_exit 2 "$ZERODROP" verify deploy/nope --kubeconfig "$WORK/kubeconfig" --url http://127.0.0.1:1/
expect_one_line "deployment nope in namespace shop not found"
expect_exit 2 "$ZERODROP" verify deploy/web --service other --kubeconfig "$WORK/kubeconfig" \
  --url http://127.0.0.1:1/
expect_one_line "service other in namespace shop not found"
expect_clean "no deployment"

port3=$(free_port)
kubeconfig "$port3"
start_fake "$port3" --no-slices
expect_exit 2 "$ZERODROP" verify deploy/web --kubeconfig "$WORK/kubeconfig" --url http://127.0.0.1:1/
expect_one_line "does not serve discovery.k8s.io/v1"
expect_clean "no EndpointSlices"
echo "PASS"
