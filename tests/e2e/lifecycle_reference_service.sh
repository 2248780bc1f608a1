#!/usr/bin/env bash
# cost: 25
# The reference service (deploy/k8s + examples/graceful) has no audit finding and drops nothing
# in the lab's rollout of its own manifest.
source "$(dirname "$0")/lib.sh"
GRACEFUL="$BUILD_DIR/examples/graceful"
need_built "$GRACEFUL"

if "$ZERODROP" audit "$SOURCE_DIR/deploy/k8s" >"$WORK/audit.out" 2>"$WORK/audit.err"; then
  echo "audit: no finding"
else
  cat "$WORK/audit.out" "$WORK/audit.err"
  fail "zerodrop audit found holes in the reference service"
fi

expect_exit 0 "$ZERODROP" lab -f "$SOURCE_DIR/deploy/k8s/deployment.yaml" --rate 200 \
  --out "$WORK/lab" -- "$GRACEFUL" --host {ip} --port {port} --delay 2s --drain-timeout 20s
echo "lab: zero failures"
echo "ok: reference service passes audit and the lab"
