#!/usr/bin/env bash
# zerodrop watch end to end against `zerodrop lab --kube-api`: the real kubectl proxy, the lab's
# HTTPS API, and watch's agents (`zerodrop verify-agent --watcher URL`, one per node, each
# probing the Service through its node's router as the lab's service-link variables name it).
# `kubectl rollout restart` of the naive example (dies at SIGTERM, no preStop) is seen by watch's
# Deployment informer and measured: one run folder with report.html, report.json, junit.xml and
# watch.json naming deregistration-race, and the holes the lab's own report of the same rollout
# names (tests/testing/watch_holes.py; minReadySeconds 1 s: the old pods are deleted after
# watch's pod watches are open, as in a real cluster; docs/watch.md "What watch sees late");
# /metrics (OpenMetrics, ending in # EOF) counts that rollout and its failures by hole and class
# exactly as watch.json does, with the agents reporting; /runs/ lists the folder and serves its
# report; `kubectl get events` shows one RolloutDroppedRequests Event on the Deployment. SIGTERM
# ends watch (0) and the agents (0).
# labels: timing
# cost: 60
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
command -v kubectl >/dev/null || skip "no kubectl on this host"
command -v curl >/dev/null || skip "no curl on this host"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run="$WORK/lab"
timeout 240 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 2 \
  --propagation 500ms --rate 50 --connections 16 --no-keepalive --warmup 500ms --tail 30s --min-ready 1s \
  --readiness http:/readyz --readiness-period 100ms --readiness-failure 1 --grace 10s \
  --out "$run" -- "$EXAMPLES/naive" --host '{ip}' --port '{port}' \
  >"$WORK/lab.out" 2>"$WORK/lab.err" &
lab=$!
wait_for_kube_api "$lab" "$WORK/lab.err"
export KUBECONFIG="$run/kubeconfig"

port=$(free_port)
"$ZERODROP" watch --kubeconfig "$KUBECONFIG" -n default --listen "127.0.0.1:$port" \
  --out "$WORK/runs" --rate 40 --tail 2s >"$WORK/watch.out" 2>"$WORK/watch.err" &
watch=$!
show() {
  local f
  for f in watch.err lab.err agent-node-1.err; do echo "--- $f"; tail -30 "$WORK/$f"; done
}
for _ in $(seq 100); do
  grep -q "zerodrop: watch: leading" "$WORK/watch.err" && break
  kill -0 "$watch" 2>/dev/null || { show; fail "watch ended before serving"; }
  sleep 0.1
done
metrics() { curl -sf "http://127.0.0.1:$port/metrics"; }

# One agent per node, as the DaemonSet's pod on that node would run: the Service's link variables
# name that node's router.
routers=$(kubectl get service web -o 'jsonpath={.metadata.annotations.zerodrop\.dev/node-routers}')
agents=()
for pair in ${routers//,/ }; do
  node=${pair%%=*} addr=${pair#*=}
  WEB_SERVICE_HOST=${addr%:*} WEB_SERVICE_PORT=${addr##*:} POD_NAME="agent-$node" \
    NODE_NAME="$node" "$ZERODROP" verify-agent --watcher "http://127.0.0.1:$port" \
    >"$WORK/agent-$node.out" 2>"$WORK/agent-$node.err" &
  agents+=($!)
done
[ ${#agents[@]} = 2 ] || fail "expected two node routers, got '$routers'"
for _ in $(seq 100); do
  metrics | has '^zerodrop_watch_agents{state="reporting"} 2$' && break
  sleep 0.1
done
metrics | has '^zerodrop_watch_agents{state="reporting"} 2$' || { show; fail "the agents do not report"; }
# A baseline: the agents write each 100 ms bucket once settled (their timeout + 1 s later).
baseline='^zerodrop_watch_baseline_requests_total\{namespace="default",service="web"\} [1-9]'
for _ in $(seq 150); do
  metrics | has -E "$baseline" && break
  sleep 0.1
done
metrics | has -E "$baseline" || { metrics; show; fail "no baseline traffic counted"; }

kubectl rollout restart deploy/web >/dev/null
for _ in $(seq 600); do
  ls "$WORK"/runs/*/watch.json >/dev/null 2>&1 && break
  kill -0 "$watch" 2>/dev/null || { show; fail "watch ended mid-rollout"; }
  sleep 0.1
done
folders=("$WORK"/runs/default.web.*)
[ ${#folders[@]} = 1 ] || { show; fail "expected one run folder, got ${#folders[@]}"; }
folder=${folders[0]}
name=$(basename "$folder")
[ -f "$folder/watch.json" ] || { show; fail "no watch.json in $folder"; }
for f in report.html report.json junit.xml run.json events.ndjson propagation.ndjson; do
  [ -s "$folder/$f" ] || { show; fail "no $f in $folder"; }
done
expect_grep '"verdict": "dropped"' "$folder/watch.json"
expect_grep '"deregistration-race"' "$folder/watch.json"
expect_grep '"id": *"deregistration-race"' "$folder/report.json"
expect_grep '"engine": *"watch"' "$folder/run.json"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$folder/junit.xml"
for kind in rollout_started rollout_finished deletion_started pod_exited endpoint_changed; do
  expect_grep "\"kind\":\"$kind\"" "$folder/events.ndjson"
done
grep -q "RolloutDroppedRequests: " "$WORK/watch.err" || { show; fail "watch did not say the verdict"; }
# One Event on the Deployment, as kubectl shows it.
kubectl get events --field-selector involvedObject.name=web,reason=RolloutDroppedRequests \
  -o 'jsonpath={range .items[*]}{.type} {.involvedObject.kind} {.message}{"\n"}{end}' \
  >"$WORK/events.txt" || { show; fail "kubectl get events failed"; }
[ "$(grep -c . "$WORK/events.txt")" = 1 ] || { cat "$WORK/events.txt"; show; fail "expected one RolloutDroppedRequests Event"; }
grep -Eq "^Warning Deployment [0-9,]+ of [0-9,]+ requests failed: .*deregistration-race" "$WORK/events.txt" \
  || { cat "$WORK/events.txt"; fail "the Event does not name the hole"; }

# /metrics says what watch.json says: the rollout, its requests and its failures by hole and class.
metrics >"$WORK/metrics.txt"
tail -1 "$WORK/metrics.txt" | grep -qx '# EOF' || fail "/metrics does not end in # EOF"
python3 - "$folder/watch.json" "$WORK/metrics.txt" <<'PY' || { show; fail "/metrics and watch.json differ"; }
import json, re, sys
w = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
labels = 'namespace="default",kind="Deployment",workload="web"'
assert f'zerodrop_watch_rollouts_total{{{labels},verdict="dropped"}} 1' in text, "rollouts_total"
assert f'zerodrop_watch_rollout_requests_total{{{labels}}} {w["requests"]}' in text, "requests"
holes = {}
for m in re.finditer(r'zerodrop_watch_failed_requests_total\{' + re.escape(labels)
                     + r',hole="([^"]+)",class="([^"]+)"\} (\d+)', text):
    holes[m.group(1)] = holes.get(m.group(1), 0) + int(m.group(3))
assert holes == w["holes"], (holes, w["holes"])
assert sum(holes.values()) == w["failed"], "failed"
assert "pod=" not in text and "pod-" not in text, "a pod in a label"
print("metrics: %d of %d failed: %s" % (w["failed"], w["requests"], holes))
PY
# The lab's own report of the same rollout names the same holes, as far as two samples agree.
wait "$lab" || true
python3 "$SOURCE_DIR/tests/testing/watch_holes.py" "$folder" "$run/report.json" \
  || { show; fail "watch's holes are not the lab's"; }

# /runs/ lists the folder and serves its files, nothing outside.
curl -sf "http://127.0.0.1:$port/runs/" | has "$name/report.html" || fail "/runs/ does not list $name"
curl -sf "http://127.0.0.1:$port/runs/$name/report.html" | has -i '<html' || fail "/runs/ does not serve the report"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/runs/$name/../../lab/kubeconfig")
[ "$code" = 404 ] || fail "/runs/ served a path outside its folders ($code)"

kill -TERM "$watch" "${agents[@]}"
rc=0; wait "$watch" || rc=$?
[ "$rc" = 0 ] || { show; fail "watch exited $rc at SIGTERM"; }
for a in "${agents[@]}"; do
  rc=0; wait "$a" || rc=$?
  [ "$rc" = 0 ] || { show; fail "an agent exited $rc at SIGTERM"; }
done
echo "PASS: watch measured the rollout into $name"
