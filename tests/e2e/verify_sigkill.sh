#!/usr/bin/env bash
# A zerodrop verify killed with SIGKILL leaves no kubectl proxy behind (the proxy's keeper has
# PR_SET_PDEATHSIG); a SIGINT ends the run with exit 130 and removes the private folder too; a
# proxy that dies mid-run ends it with exit 2, the record kept.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl is not installed"
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
port=$(free_port)
python3 "$SOURCE_DIR/tests/e2e/fake_kube_api.py" "$port" >"$WORK/fake.log" 2>&1 &
for _ in $(seq 600); do grep -q listening "$WORK/fake.log" && break; sleep 0.05; done
cat >"$WORK/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: me, user: {}}]
contexts: [{name: fake, context: {cluster: fake, user: me, namespace: shop}}]
current-context: fake
YAML

start_watching() {  # a run that waits for someone else's rollout: it never ends by itself
  "$ZERODROP" verify deploy/web --action watch --kubeconfig "$WORK/kubeconfig" \
    --agents none --url "http://127.0.0.1:$port/app" --rate 20 --warmup 0s --out "$WORK/run-$1" \
    >"$WORK/out-$1" 2>"$WORK/err-$1" &
  verify=$!
  proxy=""
  for _ in $(seq 200); do
    proxy=$(pgrep -f "proxy --unix-socket=$TMPDIR/zerodrop-verify" || true)
    [ -n "$proxy" ] && grep -q "waiting for a rollout" "$WORK/err-$1" 2>/dev/null && break
    sleep 0.05
  done
  [ -n "$proxy" ] || { cat "$WORK/err-$1"; fail "no kubectl proxy started"; }
}

start_watching kill
kill -KILL "$verify"
wait "$verify" 2>/dev/null || true
for _ in $(seq 100); do
  pgrep -f "proxy --unix-socket=$TMPDIR/zerodrop-verify" >/dev/null || break
  sleep 0.05
done
if pgrep -f "proxy --unix-socket=$TMPDIR/zerodrop-verify" >/dev/null; then
  fail "kubectl proxy outlived a SIGKILLed zerodrop verify"
fi
rm -rf "$TMPDIR"/zerodrop-verify.*  # SIGKILL leaves the (empty of secrets) folder: no one to remove it

start_watching int
kill -INT "$verify"
got=0
wait "$verify" || got=$?
[ "$got" = 130 ] || { cat "$WORK/err-int"; fail "SIGINT: exit $got, expected 130"; }
pgrep -f "proxy --unix-socket=$TMPDIR/zerodrop-verify" >/dev/null && fail "proxy left after SIGINT"
[ -z "$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'zerodrop-verify.*')" ] \
  || fail "the private folder was left after SIGINT"
[ -s "$WORK/run-int/events.ndjson" ] || fail "the interrupted run kept no record"
# The proxy dies mid-run: one line naming it, exit 2, the record so far kept.
start_watching proxy
kill -KILL "$proxy"
got=0
wait "$verify" || got=$?
[ "$got" = 2 ] || { cat "$WORK/err-proxy"; fail "proxy death: exit $got, expected 2"; }
expect_grep "kubectl proxy exited mid-run .*record so far is in $WORK/run-proxy" "$WORK/err-proxy"
[ "$(grep -c 'zerodrop: error:' "$WORK/err-proxy")" = 1 ] || fail "not one error line"
[ -s "$WORK/run-proxy/events.ndjson" ] || fail "the record was not kept"
echo PASS
