#!/usr/bin/env bash
# labels: offline
# cost: 11
# Bad input: one line naming the culprit, exit 2, nothing sent.
source "$(dirname "$0")/lib.sh"

expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ --rate x
expect_grep "^zerodrop: error: --rate: expected a number, got 'x'$" "$WORK/err"
# Rates whose schedule is meaningless are refused, not run (1e308 used to spin forever).
for rate in 1e308 1e-300 20000000; do
  expect_exit 2 timeout 10 "$ZERODROP" load http://127.0.0.1:1/ --rate "$rate" -d 1s
  expect_grep "^zerodrop: error: --rate: expected 0 \(as fast as possible\) or 0.001 to 10000000" "$WORK/err"
done
expect_exit 2 "$ZERODROP" load ftp://127.0.0.1:1/
expect_grep "unsupported scheme 'ftp'" "$WORK/err"
expect_exit 2 "$ZERODROP" load https://127.0.0.1:1/ --cacert "$WORK/missing.pem"
expect_grep "^zerodrop: error: --cacert: cannot load certificates from '.*missing.pem': " "$WORK/err"
expect_exit 2 "$ZERODROP" load 'http://[bad'
expect_grep "malformed URL" "$WORK/err"
expect_exit 2 "$ZERODROP" load http://no-such-host.invalid/ --out "$WORK/run" --records "$WORK/r.ndjson"
expect_grep "cannot resolve host 'no-such-host.invalid'" "$WORK/err"
# Refused before anything is created: no empty run folder or records file is left behind.
[[ ! -e "$WORK/run" && ! -e "$WORK/r.ndjson" ]] || fail "a refused load left --out or --records behind"
expect_exit 2 "$ZERODROP" load --targets "$WORK/missing.txt"
expect_grep "^zerodrop: error: --targets: cannot read .*missing.txt$" "$WORK/err"
expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ -H 'no colon'
expect_grep "^zerodrop: error: -H: expected 'Name: value', got 'no colon'$" "$WORK/err"
expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ --duration 10parsecs
expect_grep "^zerodrop: error: --duration" "$WORK/err"
expect_exit 2 "$ZERODROP" load
expect_grep "no URL to load" "$WORK/err"
expect_exit 0 "$ZERODROP" load --help
expect_grep "--max-requests-per-connection" "$WORK/out"
expect_grep "Examples:" "$WORK/out"

# Unknown options name themselves and the command, and suggest the flag meant.
expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ --durations 1s
expect_grep "^zerodrop: error: unknown option '--durations' for 'zerodrop load'; did you mean '--duration'\?$" "$WORK/err"
expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ -x
expect_grep "^zerodrop: error: unknown option '-x' for 'zerodrop load'; see 'zerodrop load --help'$" "$WORK/err"
expect_exit 2 "$ZERODROP" load http://127.0.0.1:1/ surplus
expect_grep "^zerodrop: error: unexpected argument 'surplus' for 'zerodrop load'" "$WORK/err"
expect_exit 2 "$ZERODROP" --bogus
expect_grep "^zerodrop: error: unknown option '--bogus'; see 'zerodrop --help'$" "$WORK/err"
expect_exit 2 "$ZERODROP"
expect_grep "^zerodrop: error: a command is needed \(lab, load, report, audit, sim, run, verify, watch, sleep, copy-self\)" "$WORK/err"
# wrk's and hey's short flags: -c connections, -d duration, -n requests.
expect_exit 1 "$ZERODROP" load http://127.0.0.1:1/ -c 1 -d 2s -n 1
expect_grep "connect_refused" "$WORK/out"
echo "ok"
