#!/usr/bin/env bash
# cost: 14
# HTTP/1.1 records stay byte-identical across changes to the engine: a closed-loop run on one
# connection against each misbehaving-server mode is deterministic but for times and ports, which
# are masked; the result must equal data/load_h1_records.golden (recorded with the engine before
# its connection became transport + session + stream). Regenerate only for an intended change:
#   UPDATE_GOLDEN=1 ZERODROP=... BUILD_DIR=... SOURCE_DIR=... bash tests/e2e/load_h1_records.sh
source "$(dirname "$0")/lib.sh"
server=${MISBEHAVING_SERVER:-$BUILD_DIR/tests/testing/misbehaving-server}
need_built "$server"
golden=$SOURCE_DIR/tests/e2e/data/load_h1_records.golden

run_mode() {  # run_mode MODE LOAD-FLAGS...: masked records of a run, prefixed by the mode
  local mode=$1; shift
  rm -f "$WORK/port"
  "$server" --mode "$mode" --status 503 --delay 20 --port-file "$WORK/port" >/dev/null &
  local pid=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
  "$ZERODROP" load "http://127.0.0.1:$(cat "$WORK/port")/p" --rate 0 -c 1 --timeout 2s \
    --records "$WORK/r.ndjson" "$@" >/dev/null 2>&1 || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "# $mode $*"
  sed -E -e 's/"(intended|sent|first_byte|done)_us":[0-9]+/"\1_us":T/g' \
         -e 's/"local_port":[1-9][0-9]*/"local_port":P/g' "$WORK/r.ndjson"
}

{
  for mode in ok status chunked close reset truncated reset-mid-body huge-headers \
              invalid-chunked garbage interim head-length; do
    run_mode "$mode" -n 4
  done
  run_mode stall -n 1
  run_mode refuse -n 2
  run_mode ok -n 4 --no-keepalive
  run_mode ok -n 5 --max-requests-per-connection 2 --method POST --body abc -H 'X-A: b'
} >"$WORK/got"

if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$WORK/got" "$golden"
  exit 0
fi
diff -u "$golden" "$WORK/got" || fail "HTTP/1.1 records differ from $golden"
