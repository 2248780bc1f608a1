#!/usr/bin/env bash
# zerodrop sleep: sleeps, stops early on SIGTERM (143), rejects bad input (2); and the static
# zerodrop-sleep (and zerodrop itself when built with ZERODROP_STATIC=ON) runs with an empty
# environment in a root that holds nothing but the binary: no /bin, no libc, no /proc.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "$ZERODROP" sleep 0.05
expect_exit 2 "$ZERODROP" sleep soon
expect_grep "DURATION" "$WORK/err"

# SIGTERM ends it early with 128+15, long before the 30 s.
"$ZERODROP" sleep 30 & pid=$!
sleep 0.2
kill -TERM $pid
got=0; wait $pid || got=$?
[ "$got" = 143 ] || fail "zerodrop sleep ended by SIGTERM exited $got, expected 143"

# The tiny static executable: same contract.
SLEEP_BIN="$BUILD_DIR/zerodrop-sleep"
[ -x "$SLEEP_BIN" ] || fail "$SLEEP_BIN was not built"
expect_exit 0 "$SLEEP_BIN" 0.05
expect_exit 2 "$SLEEP_BIN" -1
expect_grep "zerodrop-sleep: error: expected one duration" "$WORK/err"

is_static() { ! readelf -l "$1" 2>/dev/null | grep -q "Requesting program interpreter"; }
is_static "$SLEEP_BIN" || fail "zerodrop-sleep is dynamically linked"

# An empty root: chroot needs root; otherwise a user namespace may allow it.
make_root() {
  local root="$WORK/root-$1"
  mkdir -p "$root"
  cp "$2" "$root/$1"
  echo "$root"
}
run_in_root() {  # ROOT CMD... (env -i: no PATH, no HOME, nothing)
  local root=$1; shift
  if [ "$(id -u)" = 0 ]; then
    env -i "$(command -v chroot)" "$root" "$@"
  else
    env -i "$(command -v unshare)" --user --map-root-user --root="$root" "$@"
  fi
}
root=$(make_root zerodrop-sleep "$SLEEP_BIN")
if ! run_in_root "$root" /zerodrop-sleep 0 2>"$WORK/chroot.err"; then
  grep -qiE "operation not permitted|permission denied|cannot" "$WORK/chroot.err" &&
    skip "cannot enter an empty root here (need root or user namespaces): $(cat "$WORK/chroot.err")"
  fail "zerodrop-sleep failed in an empty root: $(cat "$WORK/chroot.err")"
fi
[ ! -e "$root/bin" ] || fail "the root was meant to be empty"
start=$(date +%s%N)
expect_exit 0 run_in_root "$root" /zerodrop-sleep 0.3
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$elapsed_ms" -ge 300 ] || fail "zerodrop-sleep 0.3 returned after ${elapsed_ms}ms"

if is_static "$ZERODROP"; then
  root=$(make_root zerodrop "$ZERODROP")
  expect_exit 0 run_in_root "$root" /zerodrop sleep 0.1
  echo "zerodrop itself is static and runs in an empty root"
else
  echo "note: this zerodrop is dynamically linked (ZERODROP_STATIC=OFF); the release build"
  echo "      (cmake -DZERODROP_STATIC=ON, deploy/Dockerfile) is static; zerodrop-sleep checked"
fi
echo "ok: sleep contract; static zerodrop-sleep runs with env -i in a root holding only itself"
