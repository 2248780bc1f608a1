#!/usr/bin/env bash
# Real nginx as the app through each of the lab's parts: the table "Real nginx through each part"
# of docs/lab.md. Debian's nginx 1.22 (master and 2 workers, bench/lab_real_servers.sh's config)
# stopped by SIGTERM (fast) or SIGQUIT (graceful), each without and with a preStop sleep of 3 s,
# one run per case (seeds from 1), through each PART:
#   l4               the lab's l4 router (kube-proxy in user space)
#   nftables         kube-proxy's nftables rules in node namespaces (root)
#   iptables         kube-proxy's iptables chains in node namespaces (root)
#   ingress-nginx    Debian's nginx as the ingress (--dataplane l7 --ingress nginx), the app behind
#   ingress-haproxy  Debian's HAProxy as the ingress
#   container        l4, each pod a podman container (runc) of an image built here FROM scratch:
#                    the nginx binary and its libraries, busybox-static to render the config for
#                    the pod's address, /etc/passwd for nginx's workers (user nobody)
# Prints one line per case: failed of requests, the holes with their counts, the failures' classes,
# the pods SIGKILLed at grace. Each part's runs stay in OUT_DIR/PART-PRESTOP.
# Usage: bench/lab_real_nginx.sh [path/to/zerodrop] [OUT_DIR]   (PARTS="l4 nftables iptables
#        ingress-nginx ingress-haproxy container" RUNS=1)
set -uo pipefail
ZERODROP=$(realpath "${1:-build/zerodrop}")
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-real-nginx.XXXXXX")}
RUNS=${RUNS:-1}
PARTS=${PARTS:-"l4 nftables iptables ingress-nginx ingress-haproxy container"}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
echo "lab_real_nginx: $(nginx -v 2>&1 || /usr/sbin/nginx -v 2>&1); $(uptime | sed 's/.*load/load/')"

flags_of() {  # the lab flags of part $1
  case $1 in
    l4 | container) echo "--dataplane l4" ;;
    nftables | iptables) echo "--dataplane $1" ;;
    ingress-*) echo "--dataplane l7 --ingress ${1#ingress-}" ;;
  esac
}

# summary RUN_DIR: "failed/requests: hole count, … [what failed] (grace kills)" from report.json.
summary() {
  python3 - "$1" <<'PY'
import collections, json, sys
d = sys.argv[1]
try:
    report = json.load(open(d + "/report.json"))
except OSError:
    print("no report (see the .err file)"); sys.exit()
load = report["load"]
holes = ", ".join(f"{h['id']} {h['requests']}" for h in report["holes"]) or "no hole"
how = collections.Counter(f.get("class", "?") for f in report["failed_requests"])
how = " [" + ", ".join(f"{c} {n}" for c, n in how.most_common()) + "]" if how else ""
kills = len(report.get("grace_kills", []))
kills = f"; {kills} SIGKILL at grace" if kills else ""
# How long each stopped pod took from its stop signal (as the lab asked for it) to its exit.
signal, took = {}, []
for e in map(json.loads, open(d + "/events.ndjson")):
    if e["kind"] == "signal_sent" and e.get("detail", "").startswith("stop signal"):
        signal[e["pod"]] = e["t_us"]
    elif e["kind"] == "pod_exited" and e["pod"] in signal:
        took.append((e["t_us"] - signal[e["pod"]]) / 1e6)
took = f" (exit {min(took):.2f}-{max(took):.2f} s after the stop signal{kills})" if took else ""
print(f"{load['failed']}/{load['requests']}: {holes}{how}{took}")
PY
}

# The container part's image, built once; removed at exit.
printf '[containers]\ndefault_ulimits = []\n' >"$OUT/containers.conf"
export CONTAINERS_CONF="$OUT/containers.conf"
podman() { command podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs "$@"; }
IMAGE=localhost/zerodrop-bench-nginx:$$
built=""
trap '[ -z "$built" ] || podman rmi -f "$IMAGE" >/dev/null 2>&1' EXIT
build_image() {
  local ctx="$OUT/image"
  local nginx
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  mkdir -p "$ctx/etc/nginx" "$ctx/tmp" "$ctx/bin"
  for file in "$nginx" $(ldd "$nginx" | grep -o '/[^ :]*' | sort -u); do
    mkdir -p "$ctx$(dirname "$file")"
    cp -L "$file" "$ctx$file"
  done
  cp /bin/busybox "$ctx/bin/busybox"
  printf 'root:x:0:0::/:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n' >"$ctx/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\nnobody:x:65534:\n' >"$ctx/etc/group"
  # bench/lab_real_servers.sh's nginx config, with its files under /tmp.
  cat >"$ctx/etc/nginx/nginx.conf.in" <<'EOF'
daemon off; master_process on; worker_processes 2; pid /tmp/nginx.pid; error_log stderr warn;
events { worker_connections 1024; }
http { access_log off; keepalive_timeout 60s; client_body_temp_path /tmp/body;
  proxy_temp_path /tmp/proxy; fastcgi_temp_path /tmp/fastcgi; uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  server { listen IP:PORT; location / { return 200 "ok\n"; } } }
EOF
  printf 'FROM scratch\nCOPY . /\n' >"$ctx/Containerfile"
  podman build -q -t "$IMAGE" "$ctx" >"$OUT/image.log" 2>&1 || return 1
  built=1
}

# manifest PORT: a Deployment of the image; the pod's address comes from its env (POD_IP).
manifest() {
  cat >"$OUT/nginx.yaml" <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: app
        image: $IMAGE
        command:
        - /bin/busybox
        - sh
        - -c
        - >-
          /bin/busybox sed -e "s|IP|\$POD_IP|" -e "s|PORT|$1|" /etc/nginx/nginx.conf.in
          >/tmp/nginx.conf && exec /usr/sbin/nginx -e stderr -c /tmp/nginx.conf
        ports: [{containerPort: $1}]
EOF
}

for part in $PARTS; do
  if [ "$part" = container ]; then
    if ! command -v podman >/dev/null || ! command -v runc >/dev/null \
      || [ ! -x /bin/busybox ]; then
      echo "container: skipped: podman, runc or busybox-static is missing (scripts/setup.sh test)"
      continue
    fi
    if [ -z "$built" ] && ! build_image; then
      cat "$OUT/image.log"
      echo "container: skipped: podman cannot build the image here"
      continue
    fi
    manifest "$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  fi
  for prestop in none sleep:3s; do
    dir="$OUT/$part-${prestop/:/}"
    if [ "$part" = container ]; then
      mkdir -p "$dir"
      for signal in TERM QUIT; do
        "$ZERODROP" lab -f "$OUT/nginx.yaml" --replicas 2 --nodes 2 --propagation 500ms \
          --rate 400 --connections 16 --warmup 500ms --tail 500ms --readiness tcp \
          --readiness-period 100ms --grace 5s --stop-signal "$signal" --runs "$RUNS" \
          --prestop "$prestop" --out "$dir/nginx-$signal" >"$dir/nginx-$signal.out" \
          2>"$dir/nginx-$signal.err"
      done
    else
      # shellcheck disable=SC2046
      RUNS=$RUNS SERVERS=nginx LAB_FLAGS="$(flags_of "$part") --prestop $prestop" \
        "$HERE/lab_real_servers.sh" "$ZERODROP" "$dir" >"$dir.log" 2>&1
    fi
    for signal in TERM QUIT; do
      # One run is the folder itself; more are its run-N sub-folders.
      runs=("$dir/nginx-$signal")
      [ "$RUNS" = 1 ] || runs=("$dir/nginx-$signal"/run-*)
      for run in "${runs[@]}"; do
        printf '%-16s SIG%-4s preStop %-8s %s: %s\n' "$part" "$signal" "$prestop" \
          "${run#"$dir/"}" "$(summary "$run")"
      done
    done
  done
done
echo "lab_real_nginx: $(uptime | sed 's/.*load/load/') at the end; results in $OUT"
