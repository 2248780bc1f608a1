#!/usr/bin/env bash
# labels: offline
# The load flags that load, lab and verify share are declared and checked in one place: a bad
# value gets the same one line from each command, and the same help line in each --help.
source "$(dirname "$0")/lib.sh"

# same_error PATTERN ARGS...: load and lab (and, for the flags it has, verify-agent) refuse ARGS
# with exit 2 and one identical error line matching PATTERN. Nothing starts: the flags are
# checked before any connection or pod.
same_error() {
  local pattern=$1; shift
  expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ "$@"
  expect_grep "^zerodrop: error: $pattern" "$WORK/err"
  [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "load $*: more than one line on stderr"
  cp "$WORK/err" "$WORK/load.err"
  expect_exit 2 "$ZERODROP" lab "$@" -- true
  cmp -s "$WORK/load.err" "$WORK/err" \
    || fail "load and lab disagree on $*: '$(cat "$WORK/load.err")' vs '$(cat "$WORK/err")'"
}

same_error "--rate: expected a number, got 'x'$" --rate x
same_error "--connections: " --connections 0
same_error "--connections: " -c 0
same_error "--timeout: " --timeout soon
same_error "--fresh-share: expected a percentage from 0% to 100%, got '150%'$" --fresh-share 150%
same_error "--streams: " --http2 --streams 0
same_error "--method: a gRPC call is always a POST; leave --method out with --grpc$" \
  --grpc zd.Echo/Call --method PUT
same_error "--grpc: expected SERVICE/METHOD" --grpc nomethod
same_error "--body-file: cannot read .*missing.bin" --body-file "$WORK/missing.bin"

# verify-agent (verify's load pods) has --rate and --timeout from the same place.
for args in "--rate x" "--timeout soon"; do
  # shellcheck disable=SC2086
  expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ $args
  cp "$WORK/err" "$WORK/load.err"
  # shellcheck disable=SC2086
  expect_exit 2 "$ZERODROP" verify-agent --url http://127.0.0.1:1/ $args
  cmp -s "$WORK/load.err" "$WORK/err" || fail "load and verify-agent disagree on $args"
done

# One help line per shared flag, the same in every command that has it (only --rate, --keepalive
# and the fresh share say what they mean there).
help_line() {  # help_line COMMAND FLAG: the --help line that declares FLAG
  "$ZERODROP" "$1" --help | grep -E -- "^  (-[a-zA-Z],)?$2( |$)" || fail "$1 --help has no $2"
}
for flag in --connections --client-retry --method --timeout --http2 --grpc --body-file --streams; do
  [ "$(help_line load "$flag")" = "$(help_line lab "$flag")" ] \
    || fail "load and lab differ on $flag"
done
for flag in --header --timeout --backend-header --ok-status; do
  [ "$(help_line load "$flag")" = "$(help_line verify "$flag" | sed 's/TEXT=5s /TEXT=10s/')" ] \
    || fail "load and verify differ on $flag"
done
echo "ok"
