#!/usr/bin/env bash
# labels: offline
# Bad input gets one clear line and exit 2.
source "$(dirname "$0")/lib.sh"

expect_exit 2 "$ZERODROP" lab --out "$WORK/a" -- zerodrop-no-such-server --port '{port}'
expect_grep "^zerodrop: error: cannot run 'zerodrop-no-such-server': not found in PATH$" "$WORK/err"
# Without --out, the error still says where the partial record is.
expect_exit 2 env TMPDIR="$WORK" "$ZERODROP" lab -- /nonexistent/server --port '{port}'
expect_grep "^zerodrop lab: run folder $WORK/zerodrop-lab-" "$WORK/err"
expect_grep "^zerodrop: error: cannot run '/nonexistent/server'" "$WORK/err"
folder=$(sed -n 's/^zerodrop lab: run folder //p' "$WORK/err")
[ -f "$folder/events.ndjson" ] || fail "the run folder $folder named on stderr has no events.ndjson"

expect_exit 2 "$ZERODROP" lab --propagation soon -- true
expect_grep "^zerodrop: error: --propagation: expected 2s, 1s..4s or p50=1s,p99=6s, got 'soon'$" \
  "$WORK/err"

expect_exit 2 "$ZERODROP" lab --prestop wait:3 -- true
expect_grep "^zerodrop: error: --prestop: expected none" "$WORK/err"

expect_exit 2 "$ZERODROP" lab --max-surge 0 --max-unavailable 0 -- true
expect_grep "may not both be 0" "$WORK/err"

expect_exit 2 "$ZERODROP" lab --action scale-up 2 -- true
expect_grep "^zerodrop: error: --action: expected restart, scale-down N, delete-pod or none" "$WORK/err"

expect_exit 2 "$ZERODROP" lab
expect_grep "no command" "$WORK/err"

# With --keepalive, an explicit --fresh-share still counts (only --keepalive alone means 0%).
expect_exit 2 "$ZERODROP" lab --keepalive --fresh-share 150% -- true
expect_grep "^zerodrop: error: --fresh-share: expected a percentage from 0% to 100%, got '150%'$" \
  "$WORK/err"

# The version change, the database and the migration: flags checked before anything runs.
expect_exit 2 "$ZERODROP" lab --db mysql -- true
expect_grep "^zerodrop: error: --db: expected none or postgres, got 'mysql'$" "$WORK/err"
expect_exit 2 "$ZERODROP" lab --migrate true --migrate-at soon -- true
expect_grep "^zerodrop: error: --migrate-at: expected before, between or after, got 'soon'$" \
  "$WORK/err"
expect_exit 2 "$ZERODROP" lab --migrate-at after -- true
expect_grep "^zerodrop: error: --migrate-at: there is no --migrate to run$" "$WORK/err"
expect_exit 2 "$ZERODROP" lab --to 'true 2' --action delete-pod -- true
expect_grep "^zerodrop: error: --to, --to-file: a version change is a rollout" "$WORK/err"
expect_exit 2 "$ZERODROP" lab --to "'unterminated" -- true
expect_grep "^zerodrop: error: --to: " "$WORK/err"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:2\n' >"$WORK/image-only.yaml"
expect_exit 2 "$ZERODROP" lab --to-file "$WORK/image-only.yaml" -- true
expect_grep "image-only.yaml: container app has no command or args" "$WORK/err"

# A real ingress is an L7 router.
expect_exit 2 "$ZERODROP" lab --ingress nginx --dataplane l4 -- true
expect_grep "^zerodrop: error: --ingress nginx: an ingress routes HTTP; not with --dataplane l4$" \
  "$WORK/err"
expect_exit 2 "$ZERODROP" lab --ingress traefik -- true
expect_grep "^zerodrop: error: --ingress: expected nginx or haproxy, got 'traefik'$" "$WORK/err"
# HTTP/2 passes through the l4 router (a TCP proxy) and the l7 router (which speaks it); the
# real ingresses are configured for HTTP/1.1 only.
expect_exit 2 "$ZERODROP" lab --ingress haproxy --grpc zd.Echo/Call -- true
expect_grep "^zerodrop: error: --ingress haproxy --grpc: the lab configures the ingress for HTTP/1.1 only; HTTP/2 routing is planned$" "$WORK/err"
expect_exit 2 "$ZERODROP" lab --grpc nomethod -- true
expect_grep "^zerodrop: error: --grpc: expected SERVICE/METHOD" "$WORK/err"
