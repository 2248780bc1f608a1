#!/usr/bin/env bash
# zerodrop watch over three workloads of one `zerodrop lab --kube-api --workloads` (naive exits at
# SIGTERM, graceful with a preStop, a gRPC server probed over gRPC), its agents run by a DaemonSet
# applied into the lab's API (namespace default, beside the workloads: the service links name
# each node's router, see data/watch-agents.yaml). Each workload restarted twice with `kubectl
# rollout restart`: per rollout, the holes watch names are the lab's own report's of the same
# rollout (tests/testing/watch_holes.py: as far as two samples agree); /metrics counts them as
# the six watch.json say; six
# Rollout* Events; /runs/ lists six folders whose report.html parse. A Service whose annotation
# names no gRPC method gets a WatchProbeConfig Warning Event. Then the watcher SIGKILLed during a
# third rollout of graceful and started again: the killed one's folder is marked abandoned (not
# "in progress" forever), the rollout is measured from the middle (partial), the fourth measured
# whole.
# labels: timing
# cost: 120
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
need_example graceful
command -v kubectl >/dev/null || skip "no kubectl on this host"
command -v curl >/dev/null || skip "no curl on this host"
pkg-config --exists grpc++ 2>/dev/null || skip "libgrpc++-dev is not installed (scripts/setup.sh test)"
GRPC=$BUILD_DIR/examples/grpc-server
need_built "$GRPC"
DATA="$SOURCE_DIR/tests/e2e/data"
WORKLOADS=(naive graceful grpc)

# The lab's load like the agents' probes: a new connection per HTTP/1.1 request, HTTP/2 kept
# alive for gRPC. minReadySeconds holds each old pod's deletion >= 1 s after the restart, as a
# real pod's start does: watch opens a rollout's pod watches when it sees the rollout begin
# (~0.1 s), and a pod deleted before they are open is seen late (docs/watch.md "What watch sees
# late").
# graceful's 2 s make its rollouts last long enough to kill the watcher in the middle of one.
common="--replicas 2 --nodes 2 --propagation 300ms --connections 8 --warmup 300ms --tail 1s --readiness-period 100ms --grace 5s"
cat >"$WORK/workloads" <<EOF2
naive: $common --rate 100 --no-keepalive --readiness http:/readyz --readiness-failure 1 --min-ready 1s -- $EXAMPLES/naive --host {ip} --port {port}
graceful: $common --rate 100 --no-keepalive --readiness http:/readyz --readiness-failure 1 --prestop sleep:1s --min-ready 2s -- $EXAMPLES/graceful --host {ip} --port {port} --delay 0s
grpc: $common --rate 50 --grpc zd.Echo/Call --readiness grpc --min-ready 1s -- $GRPC --host {ip} --port {port} --rpc-time 20ms --on-term graceful --delay 1s --drain 1s
EOF2
RUN="$WORK/lab"
timeout 300 "$ZERODROP" lab --kube-api --workloads "$WORK/workloads" --rollouts 4 --out "$RUN" \
  >"$WORK/lab.out" 2>"$WORK/lab.err" &
lab=$!
wait_for_kube_api "$lab" "$WORK/lab.err"
export KUBECONFIG="$RUN/kubeconfig"
K=(kubectl --request-timeout=20s)

# gRPC by annotation (the method is called with an empty message); a second Service of graceful
# whose annotation is no /pkg.Service/Method is said as a Warning Event and not probed (the
# first is).
"${K[@]}" annotate service grpc 'zerodrop.dev/probe=grpc:/zd.Echo/Call' >/dev/null || fail "kubectl annotate"
cat >"$WORK/bad-probe.yaml" <<'EOF2'
apiVersion: v1
kind: Service
metadata:
  name: graceful-rpc
  annotations: {zerodrop.dev/probe: "grpc:/zd.Echo"}
spec:
  selector: {app: graceful}
  ports: [{name: rpc, port: 9090}]
EOF2
"${K[@]}" apply --validate=false -f "$WORK/bad-probe.yaml" >/dev/null || fail "kubectl apply of graceful-rpc"

port=$(free_port)
start_watch() {  # start_watch N: the watcher on $port, leading
  "$ZERODROP" watch --kubeconfig "$KUBECONFIG" -n default --listen "127.0.0.1:$port" \
    --out "$WORK/runs" --rate 40 --tail 2s >"$WORK/watch-$1.out" 2>"$WORK/watch-$1.err" &
  watch=$!
  for _ in $(seq 100); do
    grep -qs "zerodrop: watch: watching" "$WORK/watch-$1.err" && return 0
    kill -0 "$watch" 2>/dev/null || break
    sleep 0.1
  done
  cat "$WORK/watch-$1.err"; fail "watch $1 does not start"
}
show() { for f in "$WORK"/watch-*.err "$WORK/lab.err"; do echo "--- $f"; tail -20 "$f"; done; }
metrics() { curl -sf "http://127.0.0.1:$port/metrics"; }
start_watch 1

sed "s|WATCHER_URL|http://127.0.0.1:$port|" "$DATA/watch-agents.yaml" >"$WORK/agents.yaml"
"${K[@]}" apply --validate=false -f "$WORK/agents.yaml" >/dev/null || fail "kubectl apply of the agents"
for _ in $(seq 150); do
  metrics | has '^zerodrop_watch_agents{state="reporting"} 2$' && break
  sleep 0.1
done
metrics | has '^zerodrop_watch_agents{state="reporting"} 2$' || { show; fail "the DaemonSet's agents do not report"; }
# A baseline for each Service, gRPC's included (an agent writes a 100 ms bucket once settled).
for name in "${WORKLOADS[@]}"; do
  baseline="^zerodrop_watch_baseline_requests_total\{namespace=\"default\",service=\"$name\"\} [1-9]"
  for _ in $(seq 150); do metrics | has -E "$baseline" && break; sleep 0.1; done
  metrics | has -E "$baseline" || { metrics; show; fail "no baseline traffic to $name"; }
done
metrics | has -E '^zerodrop_watch_baseline_failed_requests_total\{namespace="default",service="grpc"\} 0$' \
  || { metrics | grep baseline; show; fail "the gRPC probes fail outside any rollout"; }
"${K[@]}" get events --field-selector reason=WatchProbeConfig,involvedObject.name=graceful-rpc \
  -o 'jsonpath={range .items[*]}{.type} {.message}{"\n"}{end}' >"$WORK/probe-events"
expect_grep "^Warning annotation zerodrop.dev/probe 'grpc:/zd.Echo' on Service graceful-rpc: expected grpc:/pkg.Service/Method$" "$WORK/probe-events"

folders_of() { ls -d "$WORK"/runs/default."$1".* 2>/dev/null; }
# wait_rollout NAME K [F]: the lab's report of rollout K of NAME, and watch's F-th folder of NAME
# (default K) finished (watch.json).
wait_rollout() {
  local f=${3:-$2}
  for _ in $(seq 600); do
    grep -q "^rollout $2 of $1: " "$WORK/lab.out" && [ "$(folders_of "$1" | wc -l)" -ge "$f" ] \
      && [ -f "$(folders_of "$1" | sed -n "${f}p")/watch.json" ] && return 0
    kill -0 "$watch" 2>/dev/null || { show; fail "watch ended"; }
    sleep 0.1
  done
  show; fail "rollout $2 of $1: not reported by both the lab and watch"
}
for round in 1 2; do
  for name in "${WORKLOADS[@]}"; do
    "${K[@]}" rollout restart "deploy/$name" >/dev/null || fail "round $round: rollout restart $name"
  done
  for name in "${WORKLOADS[@]}"; do wait_rollout "$name" "$round"; done
done

# Per rollout, watch's holes are the lab's (tests/testing/watch_holes.py says how far two samples
# of one rollout can agree); /metrics holds the six.
for name in "${WORKLOADS[@]}"; do
  for k in 1 2; do
    python3 "$SOURCE_DIR/tests/testing/watch_holes.py" "$(folders_of "$name" | sed -n "${k}p")" \
      "$RUN/$name/rollouts/$k/report.json" || { show; fail "rollout $k of $name: watch's holes are not the lab's"; }
  done
done
metrics >"$WORK/metrics.txt"
tail -1 "$WORK/metrics.txt" | grep -qx '# EOF' || fail "/metrics does not end in # EOF"
python3 - "$WORK/runs" "$WORK/metrics.txt" <<'PY' || { show; fail "/metrics does not sum the six watch.json"; }
import glob, json, re, sys
runs, text = sys.argv[1], open(sys.argv[2]).read()
for name in ("naive", "graceful", "grpc"):
    folders = sorted(glob.glob(f"{runs}/default.{name}.*"))
    assert len(folders) == 2, (name, folders)
    total = {}
    for k, folder in enumerate(folders, 1):
        w = json.load(open(f"{folder}/watch.json"))
        assert w["whole"], (folder, "not whole")
        for hole, n in w["holes"].items():
            total[hole] = total.get(hole, 0) + n
    labels = f'namespace="default",kind="Deployment",workload="{name}"'
    found = {}
    for m in re.finditer(r'zerodrop_watch_failed_requests_total\{' + re.escape(labels)
                         + r',hole="([^"]+)",class="[^"]+"\} (\d+)', text):
        found[m.group(1)] = found.get(m.group(1), 0) + int(m.group(2))
    assert found == total, (name, found, total)
    rollouts = sum(int(n) for n in re.findall(
        r'zerodrop_watch_rollouts_total\{' + re.escape(labels) + r',verdict="[^"]+"\} (\d+)', text))
    assert rollouts == 2, (name, rollouts)
assert "pod=" not in text, "a pod in a label"
PY
[ "$("${K[@]}" get events -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' | grep -c '^Rollout')" = 6 ] \
  || { "${K[@]}" get events; fail "expected six Rollout* Events"; }
curl -sf "http://127.0.0.1:$port/runs/" >"$WORK/index.html" || fail "GET /runs/"
[ "$(grep -c '/report.html"' "$WORK/index.html")" = 6 ] || { cat "$WORK/index.html"; fail "/runs/ does not list six reports"; }
for folder in "$WORK"/runs/default.*; do
  curl -sf "http://127.0.0.1:$port/runs/$(basename "$folder")/report.html" >"$WORK/report.html" \
    || fail "/runs/ does not serve $(basename "$folder")"
  python3 "$SOURCE_DIR/tests/testing/html_balanced.py" "$WORK/report.html" || fail "$(basename "$folder")/report.html does not parse"
done

# The watcher SIGKILLed mid-rollout, then started again on the same port (the agents' --watcher).
"${K[@]}" rollout restart deploy/graceful >/dev/null || fail "rollout restart 3"
for _ in $(seq 100); do [ "$(folders_of graceful | wc -l)" = 3 ] && break; sleep 0.1; done
[ "$(folders_of graceful | wc -l)" = 3 ] || { show; fail "watch 1 did not start measuring rollout 3"; }
killed=$(folders_of graceful | sed -n 3p)
sleep 1
kill -KILL "$watch"; wait "$watch" 2>/dev/null || true
[ ! -f "$killed/watch.json" ] || fail "rollout 3 was finished before the SIGKILL: no mid-rollout kill"
start_watch 2
expect_grep "$(basename "$killed"): abandoned by a watcher killed while measuring it" "$WORK/watch-2.err"
expect_grep '"verdict": "abandoned"' "$killed/watch.json"
curl -sf "http://127.0.0.1:$port/runs/" >"$WORK/index.html" || fail "GET /runs/"
grep "$(basename "$killed")" "$WORK/index.html" >"$WORK/killed-row" || fail "/runs/ does not list the killed run"
expect_grep 'class="abandoned">abandoned<' "$WORK/killed-row"
wait_rollout graceful 3 4  # the resumed rollout 3: watch's 4th folder
partial=$(folders_of graceful | sed -n 4p)
expect_grep '"verdict": "partial"' "$partial/watch.json"
expect_grep '"whole": false' "$partial/watch.json"
"${K[@]}" rollout restart deploy/graceful >/dev/null || fail "rollout restart 4"
wait_rollout graceful 4 5
expect_grep '"whole": true' "$(folders_of graceful | sed -n 5p)/watch.json"
metrics | has -E '^zerodrop_watch_rollouts_total\{namespace="default",kind="Deployment",workload="graceful",verdict="partial"\} 1$' \
  || fail "/metrics does not count the partial rollout"

kill -TERM "$watch"
rc=0; wait "$watch" || rc=$?
[ "$rc" = 0 ] || { show; fail "watch exited $rc at SIGTERM"; }
"${K[@]}" delete daemonset zerodrop-agent >/dev/null || fail "kubectl delete daemonset"
kill -INT "$lab"; wait "$lab" 2>/dev/null || true
echo "PASS: watch measured 3 workloads x 2 rollouts as the lab did, and survived a SIGKILL"
