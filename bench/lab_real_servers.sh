#!/usr/bin/env bash
# The lab against real servers, each with its fast and its graceful stop signal: the measurements
# behind the "Real servers" table of docs/lab.md. Servers not installed are listed as such.
# Usage: bench/lab_real_servers.sh [path/to/zerodrop] [OUT_DIR]   (RUNS=3 SERVERS="nginx caddy"
#        LAB_FLAGS="--dataplane nftables --prestop sleep:3s": more lab flags for every run)
# Debian: apt-get install lighttpd apache2 haproxy caddy python3-gunicorn nginx-light; node.
set -uo pipefail
ZERODROP=${1:-build/zerodrop}
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-real-servers.XXXXXX")}
RUNS=${RUNS:-3}
read -r -a lab_flags <<<"${LAB_FLAGS:-}"
SERVERS=${SERVERS:-"node nginx apache2 haproxy lighttpd caddy gunicorn"}
HERE=$(cd "$(dirname "$0")" && pwd)
CONF="$OUT/conf"
mkdir -p "$CONF"

# Each server's command in the lab: its config is written per pod from the pod's address ($POD_IP,
# $PORT, $POD_NAME) and the server is exec'ed, so that it is the pod's PID 1 as in its image.
cat >"$CONF/nginx.conf.in" <<'EOF'
daemon off; master_process on; worker_processes 2; pid DIR/POD.pid; error_log stderr warn;
events { worker_connections 1024; }
http { access_log off; keepalive_timeout 60s;
  server { listen IP:PORT; location / { return 200 "ok\n"; } } }
EOF
cat >"$CONF/apache2.conf.in" <<'EOF'
ServerRoot /usr/lib/apache2
LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule dir_module modules/mod_dir.so
DirectoryIndex index.html
ServerName POD
Listen IP:PORT
PidFile DIR/POD.pid
ErrorLog /dev/stderr
DocumentRoot DIR/www
KeepAlive On
KeepAliveTimeout 60
MaxKeepAliveRequests 0
<Directory DIR/www>
  Require all granted
</Directory>
EOF
cat >"$CONF/haproxy.cfg.in" <<'EOF'
global
  pidfile DIR/POD.pid
defaults
  mode http
  timeout client 60s
  timeout http-keep-alive 60s
frontend web
  bind IP:PORT
  http-request return status 200 content-type text/plain string ok
EOF
cat >"$CONF/lighttpd.conf.in" <<'EOF'
server.bind = "IP"
server.port = PORT
server.document-root = "DIR/www"
index-file.names = ("index.html")
server.pid-file = "DIR/POD.pid"
server.errorlog = "/dev/stderr"
server.max-keep-alive-idle = 60
EOF
cat >"$CONF/Caddyfile.in" <<'EOF'
{
  admin off
  auto_https off
}
http://IP:PORT {
  respond "ok"
}
EOF
cat >"$CONF/app.py" <<'EOF'
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\n"]
EOF
mkdir -p "$CONF/www"
echo ok >"$CONF/www/index.html"

# render TEMPLATE: the template with this pod's address, as a file of its own.
render='sed -e "s|IP|$POD_IP|g" -e "s|PORT|$PORT|g" -e "s|POD|$POD_NAME|g" -e "s|DIR|'"$CONF"'|g"'

command_of() {  # the lab command that runs server $1
  case $1 in
    node) echo "node $HERE/../tests/e2e/servers/node_close.js {ip} {port}" ;;
    nginx) echo "sh -c '$render $CONF/nginx.conf.in >$CONF/\$POD_NAME.conf && exec nginx -e stderr -c $CONF/\$POD_NAME.conf'" ;;
    apache2) echo "sh -c '$render $CONF/apache2.conf.in >$CONF/\$POD_NAME.conf && exec apache2 -DFOREGROUND -f $CONF/\$POD_NAME.conf'" ;;
    haproxy) echo "sh -c '$render $CONF/haproxy.cfg.in >$CONF/\$POD_NAME.cfg && exec haproxy -db -f $CONF/\$POD_NAME.cfg'" ;;
    lighttpd) echo "sh -c '$render $CONF/lighttpd.conf.in >$CONF/\$POD_NAME.conf && exec lighttpd -D -f $CONF/\$POD_NAME.conf'" ;;
    caddy) echo "sh -c '$render $CONF/Caddyfile.in >$CONF/\$POD_NAME.caddy && exec caddy run --adapter caddyfile --config $CONF/\$POD_NAME.caddy'" ;;
    gunicorn) echo "/usr/bin/python3 -m gunicorn --chdir $CONF -w 2 --keep-alive 60 -b {ip}:{port} app:app" ;;
  esac
}

binary_of() {
  case $1 in gunicorn) echo /usr/bin/python3 ;; *) echo "$1" ;; esac
}

signals_of() {  # fast and graceful stop signals (docs of each server)
  case $1 in
    node) echo "TERM:graceful" ;;
    nginx) echo "TERM:fast QUIT:graceful" ;;
    apache2) echo "TERM:fast WINCH:graceful" ;;
    haproxy) echo "TERM:fast USR1:graceful" ;;
    lighttpd) echo "TERM:fast INT:graceful" ;;
    caddy) echo "QUIT:fast TERM:graceful" ;;
    gunicorn) echo "INT:fast TERM:graceful" ;;
  esac
}

for server in $SERVERS; do
  if ! command -v "$(binary_of "$server")" >/dev/null && [ ! -x "/usr/sbin/$server" ]; then
    echo "$server: not installed"
    continue
  fi
  [ "$server" = gunicorn ] && ! /usr/bin/python3 -c 'import gunicorn' 2>/dev/null \
    && { echo "gunicorn: not installed"; continue; }
  for pair in $(signals_of "$server"); do
    signal=${pair%%:*}
    kind=${pair##*:}
    dir="$OUT/$server-$signal"
    eval "set -- $(command_of "$server")"
    PATH="$PATH:/usr/sbin" "$ZERODROP" lab --replicas 2 --nodes 2 --propagation 500ms \
      --rate 400 --connections 16 --warmup 500ms --tail 500ms --readiness tcp \
      --readiness-period 100ms --grace 5s --stop-signal "$signal" --runs "$RUNS" --out "$dir" \
      "${lab_flags[@]}" -- "$@" >"$dir.out" 2>"$dir.err"
    echo "== $server SIG$signal ($kind): exit $?"
    grep -E "^run |runs passed|^  [a-z-]+ in " "$dir.out"
  done
done
echo "results in $OUT"
