# Sourced by the bench scripts that need an HTTP backend: nginx-light, one process, keep-alive,
# `return 200 "ok"`, on a free loopback port, with its own prefix under a temporary folder.
#
# start_nginx DIR [PREFIX...]: starts nginx (PREFIX runs it, e.g. `taskset -c 0`), waits until it
# answers, and sets NGINX_URL, NGINX_PORT and NGINX_PID. The caller kills NGINX_PID at exit.
start_nginx() {
  local dir=$1; shift
  local nginx
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  [ -x "$nginx" ] || { echo "bench: nginx is missing (scripts/setup.sh bench)" >&2; return 2; }
  NGINX_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { return 200 "ok"; }
  }
}
CONF
  "$@" "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
  NGINX_PID=$!
  NGINX_URL="http://127.0.0.1:$NGINX_PORT/"
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "$NGINX_URL" 2>/dev/null && return 0
    sleep 0.05
  done
  cat "$dir/error.log" >&2
  echo "bench: nginx did not start on port $NGINX_PORT" >&2
  return 1
}
