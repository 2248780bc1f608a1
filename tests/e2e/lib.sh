# Sourced by every tests/e2e/*.sh: strict mode, a temporary folder removed at exit, helpers.
set -euo pipefail
: "${ZERODROP:?set ZERODROP to the zerodrop binary (ctest does)}"
# Under ctest, TMPDIR is the build's own folder for the tests (/tmp/zd-e2e-HASH, checked empty by
# e2e.leftovers at the end). The names are short: Unix sockets live in run folders under $WORK.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zd-e2e.XXXXXX")
# What the tested programs put in the temporary folder (a lab's run folder without --out, a
# killed lab's files) goes in $WORK and is removed with it, not left in /tmp.
export TMPDIR=$WORK
# E2E_KEEP=1 keeps the folder of a failed test for a look (its path goes to stderr). A script's
# own exit trap that calls cleanup passes the status it exits with.
cleanup() {
  local status=${1:-$?} pids
  pids=$(jobs -p || true)
  [ -n "$pids" ] && kill $pids 2>/dev/null || true
  if [ "${E2E_KEEP:-0}" = 1 ] && [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    echo "kept $WORK" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
# Skip (77) only for what the host lacks (root, unshare, a browser, npm). What this project builds
# itself is a failure when missing: a broken example build must not turn tests into skips.
need_built() { [ -x "$1" ] || fail "$1 is not built (the project builds it: cmake --build $BUILD_DIR)"; }

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

# has GREP-ARGS...: grep on standard input read whole first. `curl URL | grep -q X` under
# pipefail fails when grep exits at its first match and the writer, with more to write, dies of
# SIGPIPE (curl exit 23), so a page larger than a pipe's buffer fails at random.
has() { local text; text=$(cat); grep -q "$@" <<<"$text"; }

# load_sent FILE / load_unsent FILE: the requests zerodrop load's summary in FILE says it sent, and
# left unsent at the end (an open-loop load on a loaded machine may leave its last ones unsent).
load_sent() { sed -n 's/^requests \([0-9]*\) .*/\1/p' "$1"; }
load_unsent() { sed -n 's/.* unsent \([0-9]*\).*/\1/p' "$1"; }

# expect_owed OWED FILE: sent + unsent = OWED (counted, never dropped: the sum is exact while the
# split is the machine's).
expect_owed() {
  local sent unsent
  sent=$(load_sent "$2")
  unsent=$(load_unsent "$2")
  [ $((sent + unsent)) -eq "$1" ] || fail "sent $sent + unsent $unsent is not the $1 owed"
}

# expect_all_ok OWED FILE: zerodrop load's summary in FILE: every request it sent succeeded, and
# sent + unsent = OWED.
expect_all_ok() {
  expect_grep '^requests ([0-9]+) +ok \1 +failed 0' "$2"
  expect_owed "$1" "$2"
}

# expect_all_failed CLASS OWED FILE: every request sent failed, all in CLASS; sent + unsent = OWED.
expect_all_failed() {
  local sent
  sent=$(load_sent "$3")
  [ "${sent:-0}" -gt 0 ] || { cat "$3"; fail "no request sent"; }
  expect_grep "^requests $sent +ok 0 +failed $sent( |\$)" "$3"
  expect_grep "^failures +$1 $sent\$" "$3"
  expect_owed "$2" "$3"
}

# For the https tests (they need the openssl command and python3).
make_cert() {  # make_cert NAME SAN: a self-signed certificate and key in $WORK/NAME.{pem,key}
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$WORK/$1.key" -out "$WORK/$1.pem" -subj "/CN=$1" -addext "subjectAltName=$2" \
    2>"$WORK/openssl.err" || { cat "$WORK/openssl.err"; fail "openssl could not make a certificate"; }
}
# wait_for_kube_api PID STDERR: until `lab --kube-api` (PID, its stderr in STDERR) says where it
# serves; fails with that stderr when the lab ends first.
wait_for_kube_api() {
  for _ in $(seq 300); do
    grep -q 'Kubernetes API at' "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || { cat "$2"; fail "the lab ended before serving"; }
    sleep 0.1
  done
}

start_tls_server() {  # start_tls_server PORT CERT KEY: tls_server.py ("-" "-": plain http)
  python3 "$SOURCE_DIR/tests/e2e/tls_server.py" "$@" >"$WORK/server-$1.log" 2>&1 &
  for _ in $(seq 100); do grep -q listening "$WORK/server-$1.log" && return 0; sleep 0.05; done
  cat "$WORK/server-$1.log"; fail "the test server on port $1 did not start"
}
