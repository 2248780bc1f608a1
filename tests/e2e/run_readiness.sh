#!/usr/bin/env bash
# zerodrop run --ready-port: mirrors the app's readiness (--app-ready) while serving, fails the
# instant SIGTERM arrives while the app still serves, passes SIGTERM on after --delay; /healthz
# stays 200 throughout.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the test app (scripts/setup.sh test)"
command -v curl >/dev/null || skip "curl is needed (scripts/setup.sh test)"

status() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" || true; }
wait_status() {  # URL CODE: waits up to 10 s for URL to answer CODE
  for _ in $(seq 200); do [ "$(status "$1")" = "$2" ] && return 0; sleep 0.05; done
  fail "$1 did not answer $2 (last: $(status "$1"))"
}

mkdir -p "$WORK/www"
echo ok >"$WORK/www/ready"
app_port=$(free_port)
"$ZERODROP" run --ready-port 127.0.0.1:0 --delay 1s --drain-timeout 10s \
  --app-ready "http://127.0.0.1:$app_port/ready" -- \
  python3 -m http.server --bind 127.0.0.1 --directory "$WORK/www" "$app_port" \
  >"$WORK/run.out" 2>"$WORK/run.err" &
run_pid=$!
for _ in $(seq 200); do grep -qs "readiness on" "$WORK/run.err" && break; sleep 0.05; done
ready_port=$(sed -n 's/.*readiness on [0-9.]*:\([0-9]*\).*/\1/p' "$WORK/run.err")
[ -n "$ready_port" ] || fail "no readiness port in: $(cat "$WORK/run.err")"
ready="http://127.0.0.1:$ready_port/readyz"

# Mirrors the app: 200 when its /ready answers 200, 503 when it answers 404.
wait_status "$ready" 200
rm "$WORK/www/ready"
wait_status "$ready" 503
echo ok >"$WORK/www/ready"
wait_status "$ready" 200
[ "$(status "http://127.0.0.1:$ready_port/healthz")" = 200 ] || fail "/healthz is not 200"

# SIGTERM: readiness fails at once, the app keeps serving during the delay.
kill -TERM $run_pid
wait_status "$ready" 503
[ "$(status "http://127.0.0.1:$app_port/ready")" = 200 ] || fail "the app stopped serving during --delay"
[ "$(status "http://127.0.0.1:$ready_port/healthz")" = 200 ] || fail "/healthz failed while stopping"
got=0; wait $run_pid || got=$?
# python's http.server ends on SIGTERM by the signal: 128+15.
[ "$got" = 143 ] || { cat "$WORK/run.err"; fail "zerodrop run exited $got, expected 143"; }
expect_grep "SIGTERM: readiness fails now" "$WORK/run.err"
expect_grep "delay over: SIGTERM to the app" "$WORK/run.err"
echo "ok: readiness mirrors the app, fails at SIGTERM, app served through the delay"
