# Helpers for tests/e2e/diagnose_*.sh (sourced after lib.sh): run `zerodrop lab` on an example
# server with fast settings and check the holes its report.json names.

command -v python3 >/dev/null || skip "python3 is not installed (scripts/setup.sh test)"

# example NAME: the path of a built example server; fails when it is missing.
example() {
  local bin="$BUILD_DIR/examples/$1"
  need_built "$bin"
  echo "$bin"
}

# run_lab NAME LAB_FLAGS... -- COMMAND...: runs the lab into $WORK/NAME; output in $WORK/NAME.out,
# exit code in $lab_rc. Three nodes, 1 s propagation, short warm-up and tail keep it quick.
run_lab() {
  local name=$1
  shift
  lab_rc=0
  "$ZERODROP" lab --nodes 3 --propagation 1s --readiness-period 200ms --warmup 1s --tail 1s \
    --out "$WORK/$name" "$@" >"$WORK/$name.out" 2>&1 || lab_rc=$?
  [ -s "$WORK/$name/report.json" ] || { cat "$WORK/$name.out"; fail "$name: no report.json"; }
}

# check_holes NAME [--has ID,...] [--only ID,...] [--none]: fails, printing the lab's output,
# unless report.json names every --has hole, no hole outside --only, or (--none) no hole at all
# and verdict pass. Every failed request must carry a hole and its backend's state.
check_holes() {
  local name=$1
  shift
  python3 - "$WORK/$name/report.json" "$@" <<'PY' || { cat "$WORK/$name.out"; fail "$name: holes"; }
import json, sys
report = json.load(open(sys.argv[1]))
args = sys.argv[2:]
found = {h["id"]: h["requests"] for h in report["holes"]}
print("holes:", found, "verdict:", report["verdict"], file=sys.stderr)
for r in report["failed_requests"]:
    assert r["hole"] and r["backend_state"], r
assert sum(found.values()) == report["load"]["failed"] == len(report["failed_requests"])
i = 0
while i < len(args):
    flag = args[i]
    if flag == "--none":
        assert not found and report["verdict"] == "pass", "expected no hole"
        i += 1
        continue
    ids = args[i + 1].split(",")
    i += 2
    if flag == "--has":
        missing = [h for h in ids if h not in found]
        assert not missing, f"missing holes {missing}"
    elif flag == "--only":
        extra = [h for h in found if h not in ids]
        assert not extra, f"unexpected holes {extra}"
PY
}
