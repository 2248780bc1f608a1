#!/usr/bin/env bash
# labels: timing slow
# Validation, the whole sim-versus-lab matrix: the six example apps (naive, close-listener,
# linger, slow-drain, warmup-503, graceful) x keep-alive on and off x propagation 1s..3s and
# 200ms..600ms, three lab seeds per cell (about 4 minutes; `make test` leaves it out, run it with
# `cd build && ctest -L slow`). Table and band: tests/e2e/sim_vs_lab.py; measured: docs/sim.md.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed to read the run folders"
for app in naive close-listener linger slow-drain warmup-503 graceful; do
  need_built "$BUILD_DIR/examples/$app"
done

python3 "$SOURCE_DIR/tests/e2e/sim_vs_lab.py" "$ZERODROP" "$BUILD_DIR" "$WORK" --cells all \
  || fail "the sim left the lab's band in some cell (table above)"
echo "ok"
