#!/usr/bin/env bash
# zerodrop copy-self DIR: what an init container from the zerodrop image (no cp, no shell) runs to
# put zerodrop into a shared emptyDir. The copy is whole, executable and runs `sleep 0`; a second
# copy replaces the first and leaves no temporary file; a missing, non-folder or unwritable DIR
# is exit 2 naming it. Last, as in a FROM scratch init container: in a root holding only the
# binary, with no /proc, the binary copies itself and the copy runs there.
source "$(dirname "$0")/lib.sh"
chmod 755 "$WORK"  # the unprivileged run below must reach the binary

mkdir "$WORK/shared"
expect_exit 0 "$ZERODROP" copy-self "$WORK/shared"
[ "$(cat "$WORK/out")" = "$WORK/shared/zerodrop" ] || fail "copy-self printed '$(cat "$WORK/out")'"
cmp -s "$ZERODROP" "$WORK/shared/zerodrop" || fail "the copy differs from $ZERODROP"
[ "$(stat -c %a "$WORK/shared/zerodrop")" = 755 ] || fail "the copy's mode is not 0755"
expect_exit 0 "$WORK/shared/zerodrop" sleep 0
# Again over the first copy (an init container restarted): replaced whole, nothing else left.
expect_exit 0 "$WORK/shared/zerodrop" copy-self "$WORK/shared"
cmp -s "$ZERODROP" "$WORK/shared/zerodrop" || fail "the second copy differs from $ZERODROP"
[ "$(ls -A "$WORK/shared")" = zerodrop ] || fail "copy-self left: $(ls -A "$WORK/shared")"

expect_exit 2 "$ZERODROP" copy-self "$WORK/missing"
expect_grep "^zerodrop: error: cannot copy into $WORK/missing: No such file or directory$" "$WORK/err"
expect_exit 2 "$ZERODROP" copy-self "$WORK/shared/zerodrop"
expect_grep "cannot copy into $WORK/shared/zerodrop: not a folder" "$WORK/err"

# Unwritable: a folder the user cannot write (root writes anywhere: run as nobody then).
mkdir -m 555 "$WORK/readonly"
as_user=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to drop root"
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
expect_exit 2 "${as_user[@]}" "$WORK/shared/zerodrop" copy-self "$WORK/readonly"
expect_grep "^zerodrop: error: cannot write in $WORK/readonly: Permission denied$" "$WORK/err"
[ -z "$(ls -A "$WORK/readonly")" ] || fail "a failed copy left files behind"

# FROM scratch: no /proc, no cp, no shell; the copy is found from the path it was started by.
if readelf -l "$ZERODROP" 2>/dev/null | grep -c "Requesting program interpreter" >/dev/null; then
  echo "note: this zerodrop is dynamically linked (a sanitizer build); the empty root is checked"
  echo "      on the static optimised build"
  echo "ok: copy-self copies whole, replaces, runs sleep 0, names the folder it cannot use"
  exit 0
fi
root="$WORK/root"
mkdir -p "$root/target"
expect_exit 0 "$ZERODROP" copy-self "$root"
if [ "$(id -u)" = 0 ]; then
  in_root=(env -i "$(command -v chroot)" "$root")
else
  in_root=(env -i "$(command -v unshare)" --user --map-root-user --root="$root")
fi
if ! "${in_root[@]}" /zerodrop --version >/dev/null 2>"$WORK/root.err"; then
  skip "cannot enter an empty root here (need root or user namespaces): $(cat "$WORK/root.err")"
fi
[ ! -e "$root/proc/self" ] || fail "the root was meant to have no /proc"
expect_exit 0 "${in_root[@]}" /zerodrop copy-self /target
expect_grep "^/target/zerodrop$" "$WORK/out"
expect_exit 0 "${in_root[@]}" /target/zerodrop sleep 0
cmp -s "$ZERODROP" "$root/target/zerodrop" || fail "the copy made without /proc differs"
echo "ok: copy-self copies whole, replaces, runs sleep 0, names the folder it cannot use, and"
echo "    copies itself in an empty root without /proc"
