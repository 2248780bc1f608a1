#!/usr/bin/env bash
# zerodrop sim at scale: a rollout of 1,000 replicas on 5,000 nodes at 100,000 requests/s for
# 10 minutes of virtual time. Target: under 10 s on one core and under 1 GiB (GNU time -v).
# Prints events per second and how the cost grows when the node count and the rate double.
# Usage: bench/sim_scale.sh [path/to/zerodrop]   (default: build/zerodrop)
set -euo pipefail
ZERODROP=${1:-${ZERODROP:-build/zerodrop}}
[ -x "$ZERODROP" ] || { echo "sim_scale.sh: build zerodrop first ($ZERODROP)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "sim_scale.sh: needs GNU time (scripts/setup.sh bench)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run NAME ARGS...: one simulation pinned to one core; sets WALL, RSS_MB, EVENTS, EPS.
run() {
  local name=$1 file; shift
  file=$(echo "$name" | tr -c 'a-z0-9\n' '_')
  taskset -c 0 /usr/bin/time -v "$ZERODROP" sim --duration 600s --seed 1 "$@" \
    >"$WORK/$file.out" 2>"$WORK/$file.time" || [ $? -eq 1 ]
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
                      for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$WORK/$file.time")
  RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$WORK/$file.time")
  EVENTS=$(sed -nE 's/.*\(([0-9]+) events, ([0-9]+) events\/s\).*/\1/p' "$WORK/$file.out")
  EPS=$(sed -nE 's/.*\(([0-9]+) events, ([0-9]+) events\/s\).*/\2/p' "$WORK/$file.out")
  SIM=$(sed -nE 's/.* virtual time in ([0-9.]+) s .*/\1/p' "$WORK/$file.out")
  LAST_OUT="$WORK/$file.out"
  printf '%-32s wall %5.2f s (simulation %5.2f s)  max RSS %6.1f MiB  %8s events  %9s events/s\n' \
    "$name" "$WALL" "$SIM" "$RSS_MB" "$EVENTS" "$EPS"
}

echo "zerodrop sim scale benchmark ($ZERODROP, one core)"
run "5000 nodes, 100k req/s (target)" --nodes 5000 --replicas 1000 --rate 100000
base_wall=$WALL base_rss=$RSS_MB base_sim=$SIM
grep -E '^(propagation|  total)' "$LAST_OUT" || true
run "10000 nodes, 100k req/s" --nodes 10000 --replicas 1000 --rate 100000
nodes_wall=$WALL nodes_sim=$SIM
run "5000 nodes, 200k req/s" --nodes 5000 --replicas 1000 --rate 200000
rate_wall=$WALL rate_sim=$SIM

awk -v b="$base_wall" -v n="$nodes_wall" -v r="$rate_wall" -v m="$base_rss" \
    -v bs="$base_sim" -v ns="$nodes_sim" -v rs="$rate_sim" 'BEGIN {
  printf "cost when nodes double: x%.2f (simulation x%.2f); when the rate doubles: x%.2f " \
         "(simulation x%.2f)\n", n / b, ns / bs, r / b, rs / bs
  print "(the rest of the wall time is the diagnosis and report of the run record)"
  printf "target: wall %.2f s < 10 s: %s;  max RSS %.1f MiB < 1024 MiB: %s\n",
         b, (b < 10 ? "met" : "NOT met"), m, (m < 1024 ? "met" : "NOT met")
}'
