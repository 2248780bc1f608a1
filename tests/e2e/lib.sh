# Sourced by every tests/e2e/*.sh: strict mode, a temporary folder removed at exit, helpers.
set -euo pipefail
: "${ZERODROP:?set ZERODROP to the zerodrop binary (ctest does)}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-e2e.XXXXXX")
cleanup() {
  local pids
  pids=$(jobs -p || true)
  [ -n "$pids" ] && kill $pids 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# expect_exit CODE CMD...: runs CMD, fails unless it exits with CODE; output in $WORK/out, $WORK/err.
expect_exit() {
  local want=$1; shift
  local got=0
  "$@" >"$WORK/out" 2>"$WORK/err" || got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stdout"; cat "$WORK/out"; echo "--- stderr"; cat "$WORK/err"
    fail "'$*' exited $got, expected $want"
  fi
}

# free_port: a TCP port nothing listens on now (the kernel's pick; not a guess that may collide
# with an ephemeral port in use).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# expect_grep PATTERN FILE: fails with the file's content unless PATTERN (ERE) matches.
expect_grep() {
  grep -Eq -- "$1" "$2" || { echo "--- $2"; cat "$2"; fail "no match for '$1' in $2"; }
}
