#!/usr/bin/env bash
# The CPU time (user + sys) of a clean build, per target and in total, ccache off: on a machine
# whose cores are shared, wall time says nothing, CPU time does.
# Usage: scripts/build_cpu.sh DIR [cmake args...]   e.g. the Makefile's optimised build:
#   scripts/build_cpu.sh /tmp/cpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZERODROP_STATIC=ON \
#     -DZERODROP_WERROR=ON -DCMAKE_UNITY_BUILD=ON
# TARGETS="zerodrop naive" builds only those (make demo's: zerodrop naive close-listener graceful).
# DIR is emptied first. Prints "seconds target" lines, the total and the wall time it means on
# two idle cores (total / 2: a lower bound that ignores the link at the end).
set -euo pipefail

# Launcher mode (CMake runs every compile and link through this script): time one command.
if [ "${1:-}" = --launch ]; then
  shift
  out=unknown
  prev=
  for a in "$@"; do
    [ "$prev" = -o ] && out=$a
    prev=$a
  done
  t=$(mktemp)
  status=0
  /usr/bin/time -o "$t" -f "%U %S" "$@" || status=$?
  echo "$(tail -1 "$t") $out" >>"$ZERODROP_CPU_LOG"
  rm -f "$t"
  exit $status
fi

if [ $# -lt 1 ]; then
  echo "build_cpu.sh: error: usage: scripts/build_cpu.sh DIR [cmake args...]" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "build_cpu.sh: error: /usr/bin/time is missing (apt-get install time)" >&2
  exit 2
fi
dir=$1
shift
self=$(realpath "$0")
rm -rf "$dir"
export CCACHE_DISABLE=1 ZERODROP_CPU_LOG=$dir/cpu.log
cmake -S "$(dirname "$self")/.." -B "$dir" -G Ninja "$@" \
  "-DCMAKE_CXX_COMPILER_LAUNCHER=$self;--launch" "-DCMAKE_CXX_LINKER_LAUNCHER=$self;--launch" \
  >"$dir.configure.log"
: >"$ZERODROP_CPU_LOG"
# shellcheck disable=SC2086 # TARGETS is a list of target names
cmake --build "$dir" -j 2 ${TARGETS:+--target $TARGETS} >"$dir.build.log"
# An object's target is the folder before CMakeFiles/<target>.dir; a binary is its own target.
awk '{ cpu = $1 + $2; n = split($3, p, "/"); t = $3
       for (i = 1; i <= n; i++) if (p[i] ~ /\.dir$/) { t = p[i]; sub(/\.dir$/, "", t) }
       sum[t] += cpu; total += cpu }
     END { for (t in sum) printf "%8.1f %s\n", sum[t], t
           printf "%8.1f total CPU s, about %.1f min on two idle cores\n", total, total / 120 }' \
  "$ZERODROP_CPU_LOG" | sort -n
