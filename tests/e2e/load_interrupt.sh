#!/usr/bin/env bash
# SIGINT ends the run: the summary of what was sent is printed and the exit code is 130.
source "$(dirname "$0")/lib.sh"
server=$BUILD_DIR/tests/testing/misbehaving-server
need_built "$server"

"$server" --mode ok --port-file "$WORK/port" >/dev/null &
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$WORK/port")/"

"$ZERODROP" load "$url" --rate 100 --duration 60s --records "$WORK/records.ndjson" \
  >"$WORK/out" 2>"$WORK/err" &
load=$!
# Wait until requests flow (records appear), then interrupt.
for _ in $(seq 200); do [ -s "$WORK/records.ndjson" ] && break; sleep 0.05; done
kill -INT "$load"
code=0
wait "$load" || code=$?
[ "$code" = 130 ] || { cat "$WORK/out" "$WORK/err"; fail "exit $code after SIGINT, expected 130"; }
expect_grep '^requests [1-9][0-9]* +ok [1-9].*\[interrupted\]' "$WORK/out"
lines=$(wc -l <"$WORK/records.ndjson")
expect_grep "^requests $lines " "$WORK/out"
