#!/usr/bin/env bash
# labels: offline
# zerodrop sim --sweep: the table of failures against preStop and the recommended value.
source "$(dirname "$0")/lib.sh"

# Lab profile: propagation uniform 1..3 s, so the smallest safe preStop is 3 s.
expect_exit 0 "$ZERODROP" sim --profile lab --replicas 3 --rate 100 --app close-listener \
  --no-keepalive --sweep prestop=0..5 --runs 5 --budget '0 failures in 99%' --out "$WORK/s"
expect_grep '^ +prestop +mean fails' "$WORK/out"
expect_grep '^ +0s +[1-9]' "$WORK/out"
expect_grep '^recommended prestop: 3s' "$WORK/out"
expect_grep '"recommended": 3' "$WORK/s/sweep.json"
# The text plot below the table, and the SVG beside sweep.json.
expect_grep '^ +0s \|#+ *\| [1-9]' "$WORK/out"
expect_grep '^ +3s \|.*<- recommended$' "$WORK/out"
expect_grep '^<svg ' "$WORK/s/sweep.svg"
expect_grep '<title>deregistration-race: ' "$WORK/s/sweep.svg"
expect_grep '>recommended</text>' "$WORK/s/sweep.svg"

# Nothing in range meets the budget: exit 1 and say so.
expect_exit 1 "$ZERODROP" sim --profile lab --replicas 3 --rate 100 --sweep prestop=0..1 \
  --runs 2
expect_grep '^no prestop in the swept range meets the budget' "$WORK/out"

# maxUnavailable on one replica behind an ingress (no serving fallback).
expect_exit 0 "$ZERODROP" sim --replicas 1 --rate 100 --dataplane ingress-nginx --app graceful \
  --prestop 5 --max-surge 1 --sweep max-unavailable=0..1 --runs 2
expect_grep '^recommended max-unavailable: 0' "$WORK/out"
echo "ok"
