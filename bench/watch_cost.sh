#!/usr/bin/env bash
# What `zerodrop watch` costs while idle, against `zerodrop lab --kube-api` holding 1,000 extra
# Deployments (the lab's hidden --kube-api-seed N: Deployments with headless Services, no pods):
# the watcher's CPU (share of one core over SECONDS, from /proc's utime + stime) and resident
# memory (VmRSS; its kubectl proxy child is printed apart), and one agent's resident memory while
# it probes one Service at 5 requests/s.
# Goals (docs/watch.md): watcher <= 1 % of a core and <= 30 MiB; agent <= 10 MiB. Prints the
# numbers and the ratios to the goals; asserts nothing.
# Printed on 2026-12-07 (2 shared cores, load about 6): 1001 Deployments; watcher idle 0.03 % of
# a core over 30 s; watcher RSS 22 MiB, its kubectl proxy 48 MiB; agent RSS 9.4 MiB at 5
# requests/s (before the controller cached the Services it probes: 4.70 % and 31 MiB).
# Usage: bench/watch_cost.sh [ZERODROP] [DEPLOYMENTS] [SECONDS]
set -euo pipefail
zerodrop=${1:-${ZERODROP:-build/zerodrop}}
deployments=${2:-1000}
seconds=${3:-30}
[ -x "$zerodrop" ] || { echo "watch_cost: no zerodrop binary at $zerodrop" >&2; exit 2; }
examples=$(dirname "$zerodrop")/examples
[ -x "$examples/graceful" ] || { echo "watch_cost: no $examples/graceful (cmake --build)" >&2; exit 2; }
for tool in kubectl curl python3; do
  command -v "$tool" >/dev/null || { echo "watch_cost: $tool is missing" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-bench.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# cpu_ticks PID: utime + stime of the process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

"$zerodrop" lab --kube-api --kube-api-seed "$deployments" --action none --replicas 2 \
  --nodes 2 --rate 10 --warmup 1s --out "$work/lab" -- "$examples/graceful" --host '{ip}' \
  --port '{port}' >"$work/lab.out" 2>"$work/lab.err" &
pids+=($!)
for _ in $(seq 600); do
  grep -q 'Kubernetes API at' "$work/lab.err" && break
  kill -0 "${pids[0]}" 2>/dev/null || { cat "$work/lab.err"; exit 2; }
  sleep 0.1
done
export KUBECONFIG="$work/lab/kubeconfig"
listed=$(kubectl get deployments -A --no-headers 2>/dev/null | wc -l)

port=$(free_port)
"$zerodrop" watch --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$port" --out "$work/runs" \
  >"$work/watch.out" 2>"$work/watch.err" &
watch=$!
pids+=("$watch")
for _ in $(seq 300); do
  grep -q 'zerodrop: watch: leading' "$work/watch.err" && break
  sleep 0.1
done
sleep 5  # the informers' lists done
proxy=$(pgrep -P "$watch" -f 'kubectl' | head -1 || true)
[ -z "$proxy" ] && proxy=$(pgrep -f "kubectl.*proxy.*unix-socket" -n || true)

hz=$(getconf CLK_TCK)
t0=$(cpu_ticks "$watch")
sleep "$seconds"
t1=$(cpu_ticks "$watch")
cpu=$(python3 -c "print(f'{($t1 - $t0) / $hz / $seconds * 100:.2f}')")
watch_rss=$(rss_kib "$watch")
proxy_rss=$( [ -n "$proxy" ] && rss_kib "$proxy" || echo "?")

# One agent probing the lab's Service at 5 requests/s through node-1's router.
routers=$(kubectl get service web -o 'jsonpath={.metadata.annotations.zerodrop\.dev/node-routers}')
first=${routers%%,*}
addr=${first#*=}
WEB_SERVICE_HOST=${addr%:*} WEB_SERVICE_PORT=${addr##*:} POD_NAME=agent-1 NODE_NAME=node-1 \
  "$zerodrop" verify-agent --watcher "http://127.0.0.1:$port" >"$work/agent.out" 2>"$work/agent.err" &
agent=$!
pids+=("$agent")
sleep 20
agent_rss=$(rss_kib "$agent")
reporting=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '/^zerodrop_watch_agents\{state="reporting"\}/ {print $2}')

echo "deployments in the API: $listed (lab --kube-api-seed $deployments + web)"
echo "watcher idle: $cpu % of a core over ${seconds}s (goal <= 1 %: $(python3 -c "print(f'{$cpu / 1:.2f}')")x)"
echo "watcher RSS: $((watch_rss / 1024)) MiB (goal <= 30 MiB: $(python3 -c "print(f'{$watch_rss / 1024 / 30:.2f}')")x); its kubectl proxy: ${proxy_rss} KiB"
echo "agent RSS at 5 requests/s to 1 Service: $((agent_rss / 1024)) MiB ($agent_rss KiB; goal <= 10 MiB: $(python3 -c "print(f'{$agent_rss / 1024 / 10:.2f}')")x); agents reporting: ${reporting:-0}"
