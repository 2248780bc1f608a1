#!/usr/bin/env bash
# labels: offline
# zerodrop run: bad input gets one line naming the culprit and exit 2; the app's exit status is
# propagated (128+N when a signal ended it).
source "$(dirname "$0")/lib.sh"

expect_exit 2 "$ZERODROP" run
expect_grep "^zerodrop: error: no app to run" "$WORK/err"
expect_exit 2 "$ZERODROP" run --delay soon -- true
expect_grep "^zerodrop: error: --delay" "$WORK/err"
expect_exit 2 "$ZERODROP" run --stop-signal FOO -- true
expect_grep "^zerodrop: error: --stop-signal: expected a signal" "$WORK/err"
expect_exit 2 "$ZERODROP" run --listen 8080 -- true
expect_grep "^zerodrop: error: --listen and --to go together" "$WORK/err"
expect_exit 2 "$ZERODROP" run --ready-port 99999 -- true
expect_grep "^zerodrop: error: --ready-port" "$WORK/err"
expect_exit 2 "$ZERODROP" run --app-ready ftp://x/ -- true
expect_grep "^zerodrop: error: --app-ready: expected an http:// URL" "$WORK/err"
expect_exit 2 "$ZERODROP" run -- "$WORK/no-such-app"
expect_grep "^zerodrop: error: cannot run '.*no-such-app': No such file or directory" "$WORK/err"
[ "$(wc -l <"$WORK/err")" = 1 ] || fail "expected one error line, got: $(cat "$WORK/err")"

expect_exit 0 "$ZERODROP" run -- true
expect_exit 42 "$ZERODROP" run -- sh -c 'exit 42'
expect_exit 137 "$ZERODROP" run -- sh -c 'kill -KILL $$'
# Arguments after -- belong to the app, even ones that look like zerodrop's flags.
expect_exit 0 "$ZERODROP" run --delay 0s -- sh -c 'test "$1" = --delay' sh --delay
"$ZERODROP" --help >"$WORK/out"
"$ZERODROP" run --help >"$WORK/out"
expect_grep "--drain-timeout" "$WORK/out"
expect_grep "Examples:" "$WORK/out"
echo "ok: errors and exit statuses"

# Nothing the app leaves in its process group outlives zerodrop.
expect_exit 0 "$ZERODROP" run -- sh -c "sleep 30 & echo \$! > $WORK/left; exit 0"
left=$(cat "$WORK/left")
alive() { [ -e "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }
for _ in $(seq 100); do alive "$left" || break; sleep 0.05; done
! alive "$left" || fail "the app's background process $left outlived zerodrop run"
echo "ok: no process left behind"
