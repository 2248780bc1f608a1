# Sourced by the bench scripts that need an HTTP backend: nginx-light, one process, keep-alive,
# `return 200 "ok"`, on a free loopback port (NGINX_HOST: another local address), with its own
# prefix under a temporary folder.
#
# start_nginx DIR [PREFIX...]: starts nginx (PREFIX runs it, e.g. `taskset -c 0`), waits until it
# answers, and sets NGINX_URL, NGINX_PORT and NGINX_PID. The caller kills NGINX_PID at exit.
# With NGINX_TLS=1 it also serves https with a fresh self-signed certificate (for 127.0.0.1) and
# sets NGINX_TLS_URL and NGINX_TLS_CERT. With NGINX_HTTP2=1 both speak HTTP/2: h2c by prior
# knowledge only on the plain port (nginx 1.22's `listen ... http2`), ALPN h2 over TLS.
bench_free_port() {  # a TCP port free on 127.0.0.1 now (the kernel's pick)
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_nginx() {
  local dir=$1; shift
  local nginx
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  [ -x "$nginx" ] || { echo "bench: nginx is missing (scripts/setup.sh bench)" >&2; return 2; }
  NGINX_PORT=$(bench_free_port)
  mkdir -p "$dir"
  local tls_server="" http2="" curl_flags=()
  if [ -n "${NGINX_HTTP2:-}" ]; then
    http2=" http2"
    curl_flags=(--http2-prior-knowledge)
  fi
  if [ -n "${NGINX_TLS:-}" ]; then
    local tls_port
    tls_port=$(bench_free_port)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -keyout "$dir/tls.key" -out "$dir/tls.pem" -subj /CN=127.0.0.1 \
      -addext subjectAltName=IP:127.0.0.1 2>"$dir/openssl.log" \
      || { cat "$dir/openssl.log" >&2; return 1; }
    tls_server="server { listen 127.0.0.1:$tls_port ssl$http2; ssl_certificate $dir/tls.pem;
    ssl_certificate_key $dir/tls.key; location / { return 200 \"ok\"; } }"
    NGINX_TLS_URL="https://127.0.0.1:$tls_port/"
    NGINX_TLS_CERT="$dir/tls.pem"
  fi
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
    listen ${NGINX_HOST:-127.0.0.1}:$NGINX_PORT$http2;
    location / { return 200 "ok"; }
  }
  $tls_server
}
CONF
  "$@" "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
  NGINX_PID=$!
  NGINX_URL="http://${NGINX_HOST:-127.0.0.1}:$NGINX_PORT/"
  for _ in $(seq 100); do
    curl -fsS "${curl_flags[@]}" -o /dev/null "$NGINX_URL" 2>/dev/null && return 0
    sleep 0.05
  done
  cat "$dir/error.log" >&2
  echo "bench: nginx did not start on port $NGINX_PORT" >&2
  return 1
}
