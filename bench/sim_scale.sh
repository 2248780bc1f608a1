#!/usr/bin/env bash
# zerodrop sim at scale: a rollout of 1,000 replicas on 5,000 nodes at 100,000 requests/s for
# 10 minutes of virtual time, then with the nodes doubled and with the rate doubled, each pinned
# to one core under GNU time -v. Goals (issue 36): 10,000 nodes in under 1 s of wall time, at
# most 32 MiB, and the cost at most x1.6 when the nodes double. Wall time needs an idle core;
# the CPU time (user + sys) is printed beside it for a busy machine.
# Also prints the propagation of the calibration scenario (100 replicas, docs/sim.md,
# "Calibration"), which the 1,000-replica rollout's own figures are not.
# Usage: bench/sim_scale.sh [path/to/zerodrop]   (default: build/zerodrop)
set -euo pipefail
ZERODROP=${1:-${ZERODROP:-build/zerodrop}}
[ -x "$ZERODROP" ] || { echo "sim_scale.sh: build zerodrop first ($ZERODROP)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "sim_scale.sh: needs GNU time (scripts/setup.sh bench)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run NAME ARGS...: one simulation pinned to one core; sets WALL, CPU, RSS_MB, EVENTS, EPS, SIM.
run() {
  local name=$1 file; shift
  file=$(echo "$name" | tr -c 'a-z0-9\n' '_')
  taskset -c 0 /usr/bin/time -v "$ZERODROP" sim --duration 600s --seed 1 "$@" \
    >"$WORK/$file.out" 2>"$WORK/$file.time" || [ $? -eq 1 ]
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
                      for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$WORK/$file.time")
  CPU=$(awk -F': ' '/(User|System) time \(seconds\)/ {s += $2} END {printf "%.2f", s}' \
    "$WORK/$file.time")
  RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$WORK/$file.time")
  EVENTS=$(sed -nE 's/.*\(([0-9]+) events, ([0-9]+) events\/s\).*/\1/p' "$WORK/$file.out")
  EPS=$(sed -nE 's/.*\(([0-9]+) events, ([0-9]+) events\/s\).*/\2/p' "$WORK/$file.out")
  SIM=$(sed -nE 's/.* virtual time in ([0-9.]+) s .*/\1/p' "$WORK/$file.out")
  LAST_OUT="$WORK/$file.out"
  printf '%-32s wall %5.2f s (simulation %5.2f s)  cpu %5.2f s  max RSS %6.1f MiB  %8s events\n' \
    "$name" "$WALL" "$SIM" "$CPU" "$RSS_MB" "$EVENTS"
}

echo "zerodrop sim scale benchmark ($ZERODROP, one core)"
run "5000 nodes, 100k req/s (target)" --nodes 5000 --replicas 1000 --rate 100000
base_wall=$WALL base_cpu=$CPU base_rss=$RSS_MB
grep -E '^(propagation|  total)' "$LAST_OUT" || true
run "10000 nodes, 100k req/s" --nodes 10000 --replicas 1000 --rate 100000
nodes_wall=$WALL nodes_cpu=$CPU nodes_rss=$RSS_MB
run "5000 nodes, 200k req/s" --nodes 5000 --replicas 1000 --rate 200000
rate_wall=$WALL rate_cpu=$CPU
run "calibration 5000 nodes, 100 rep" --nodes 5000 --replicas 100 --rate 1000
grep -E '^propagation' "$LAST_OUT" || true

awk -v b="$base_wall" -v n="$nodes_wall" -v r="$rate_wall" -v m="$base_rss" -v nm="$nodes_rss" \
    -v bc="$base_cpu" -v nc="$nodes_cpu" -v rc="$rate_cpu" 'BEGIN {
  printf "cost when nodes double: wall x%.2f (cpu x%.2f); when the rate doubles: wall x%.2f " \
         "(cpu x%.2f)\n", n / b, nc / bc, r / b, rc / bc
  max_rss = m > nm ? m : nm
  printf "goals: 10000 nodes wall %.2f s < 1 s: %s (cpu %.2f s);  max RSS %.1f MiB <= 32 MiB: %s;" \
         "  nodes x2 -> wall x%.2f <= x1.6: %s (cpu x%.2f)\n",
         n, (n < 1 ? "met" : "NOT met"), nc, max_rss, (max_rss <= 32 ? "met" : "NOT met"),
         n / b, (n / b <= 1.6 ? "met" : "NOT met"), nc / bc
}'
