#!/usr/bin/env bash
# The l7 router relays HEAD to real nginx pods, which answer it with the Content-Length a GET would
# have and no body: a rollout with a preStop longer than the propagation drops nothing. (The
# router once waited for that body: every request failed and the diagnosis blamed the app.)
source "$(dirname "$0")/lib.sh"
command -v nginx >/dev/null || skip "nginx is needed (scripts/setup.sh test installs nginx-light)"

# One nginx pod: $1 = its IP, $2 = its port; POD_NAME (set by the lab) names it.
cat >"$WORK/pod.sh" <<SH
#!/bin/sh
dir="$WORK/pods/\$POD_NAME"; mkdir -p "\$dir"
echo "nginx \$POD_NAME" >"\$dir/index.html"
cat >"\$dir/nginx.conf" <<CONF
daemon off;
master_process off;
pid \$dir/nginx.pid;
error_log \$dir/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path \$dir/tmp;
  server {
    listen \$1:\$2;
    add_header X-Pod-Name \$POD_NAME always;
    location / { root \$dir; }
  }
}
CONF
exec nginx -p "\$dir" -e "\$dir/error.log" -c "\$dir/nginx.conf"
SH
chmod +x "$WORK/pod.sh"

rc=0
"$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms --rate 200 --connections 16 \
  --warmup 500ms --tail 500ms --readiness http:/ --readiness-period 100ms --readiness-failure 1 \
  --grace 10s --prestop sleep:1.5s --dataplane l7 --method HEAD --out "$WORK/head" \
  -- "$WORK/pod.sh" '{ip}' '{port}' >"$WORK/head.out" 2>"$WORK/head.err" || rc=$?
show() { tail -40 "$WORK/head.out"; tail -20 "$WORK/head.err"; cat "$WORK"/pods/*/error.log; }
[ "$rc" = 0 ] || { show; fail "lab over nginx with --method HEAD exited $rc, expected 0"; }
total=$(grep -c . "$WORK/head/requests.ndjson" || true)
failed=$(grep -c '"failed":true' "$WORK/head/requests.ndjson" || true)
[ "$failed" = 0 ] || { show; fail "$failed of $total HEAD requests failed"; }
[ "$total" -gt 100 ] || { show; fail "only $total requests recorded"; }
grep -q '"router_error"' "$WORK/head/requests.ndjson" && fail "the router answered a request itself"
grep -q '"backend":"[^"]' "$WORK/head/requests.ndjson" || fail "no request names its pod"
expect_grep '"verdict": *"pass"' "$WORK/head/report.json"
echo "ok: $total HEAD requests through the l7 router to nginx, none failed"
