#!/usr/bin/env bash
# The reference service (deploy/k8s + examples/graceful) has no audit finding and drops nothing
# in the lab's rollout of its own manifest. Runs what is built; skips (77) naming what is not.
source "$(dirname "$0")/lib.sh"
GRACEFUL="$BUILD_DIR/examples/graceful"
[ -x "$GRACEFUL" ] || fail "$GRACEFUL was not built"
missing=()

if "$ZERODROP" audit "$SOURCE_DIR/deploy/k8s" >"$WORK/audit.out" 2>"$WORK/audit.err"; then
  echo "audit: no finding"
elif grep -q "not built yet" "$WORK/audit.err"; then
  missing+=("zerodrop audit")
else
  cat "$WORK/audit.out" "$WORK/audit.err"
  fail "zerodrop audit found holes in the reference service"
fi

if "$ZERODROP" lab --help 2>/dev/null | grep -q -- "--propagation"; then
  expect_exit 0 "$ZERODROP" lab -f "$SOURCE_DIR/deploy/k8s/deployment.yaml" --rate 200 \
    --out "$WORK/lab" -- "$GRACEFUL" --host {ip} --port {port} --delay 2s --drain-timeout 20s
  echo "lab: zero failures"
else
  missing+=("zerodrop lab")
fi
[ ${#missing[@]} -eq 0 ] || skip "not built yet: ${missing[*]} (the rest passed)"
echo "ok: reference service passes audit and the lab"
