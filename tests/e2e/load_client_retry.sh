#!/usr/bin/env bash
# Which failures a client would have seen: a server that closes each kept-alive connection as the
# next request arrives (as nginx's old workers at a reload). Every such GET is retry-safe; with
# --client-retry it is resent once on a new connection and answered. The exit code and the raw
# count stay those of every failed attempt.
source "$(dirname "$0")/lib.sh"
server=$BUILD_DIR/tests/testing/misbehaving-server
need_built "$server"
"$server" --mode close-reused --port-file "$WORK/port" >/dev/null &
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$WORK/port")/"

# One connection, closed loop: requests 2, 4 and 6 go out on a reused connection and are cut.
expect_exit 1 "$ZERODROP" load "$url" --rate 0 -c 1 -n 6 --json "$WORK/plain.json" \
  --records "$WORK/plain.ndjson"
expect_grep "^requests 6  ok 3  failed 3" "$WORK/out"
expect_grep "^retries   3 of 3 failure\(s\) retry-safe .*would have seen 0 if each resend" "$WORK/out"
expect_grep '"failed_after_retries": 0' "$WORK/plain.json"
[ "$(grep -c '"retry_safe":true' "$WORK/plain.ndjson")" = 3 ] || fail "3 retry-safe records expected"

# The same GETs from a retrying client: each cut request is resent on a new connection and
# answered; the next one reuses that connection and is cut in turn (5 of 6 cut, 5 resent).
expect_exit 1 "$ZERODROP" load "$url" --rate 0 -c 1 -n 6 --client-retry --json "$WORK/retry.json" \
  --records "$WORK/retry.ndjson"
expect_grep "^requests 11  ok 6  failed 5" "$WORK/out"
expect_grep "^retries   5 retry-safe failure\(s\) resent on a new connection \(5 ok, 0 failed\): 0 failed after client retries, 5 raw" "$WORK/out"
expect_grep '"resent": 5' "$WORK/retry.json"
[ "$(grep -c '"attempt":2' "$WORK/retry.ndjson")" = 5 ] || fail "5 second attempts expected"

# A POST is never resent: the server may have acted on it.
expect_exit 1 "$ZERODROP" load "$url" --rate 0 -c 1 -n 6 --client-retry --method POST
expect_grep "^requests 6  ok 3  failed 3" "$WORK/out"
expect_grep "0 retry-safe failure\(s\) resent" "$WORK/out"

expect_exit 2 "$ZERODROP" load "$url" --fresh-share 50
expect_grep "^zerodrop: error: --fresh-share: expected a percentage from 0% to 100%, got '50'" \
  "$WORK/err"
