#!/usr/bin/env bash
# labels: timing
# cost: 60
# Validation, the cells that matter most of the sim-versus-lab matrix (the whole matrix:
# sim_vs_lab_matrix.sh, label slow): the same scenario on `zerodrop lab` (three seeds, real
# processes) and `zerodrop sim --profile lab`; the sim's expected failures per hole must lie within
# the lab seeds' spread, widened to ±15 % of their mean and to a Poisson floor for small counts
# (tests/e2e/sim_vs_lab.py says how); a cell out of band runs its lab seeds again, one at a time,
# and fails if it is out again (both verdicts printed). naive without keep-alive is the
# deregistration race itself; with keep-alive, clients reconnecting through routers whose whole
# view refuses; close-listener on a short propagation; linger's stale keep-alive connections;
# warmup-503's lying probe; slow-drain's requests cut by SIGKILL.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed to read the run folders"
for app in naive close-listener linger warmup-503 slow-drain; do
  need_built "$BUILD_DIR/examples/$app"
done

cells=naive/noka/long,naive/ka/long,close-listener/noka/short,linger/ka/long
cells+=,warmup-503/noka/long,slow-drain/noka/short
python3 "$SOURCE_DIR/tests/e2e/sim_vs_lab.py" "$ZERODROP" "$BUILD_DIR" "$WORK" --cells "$cells" \
  || fail "the sim left the lab's band in some cell (table above)"
echo "ok"
