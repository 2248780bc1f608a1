# Sourced by the e2e tests of pods in containers (lab_container.sh: podman; lab_docker.sh: docker)
# after lib.sh. The sourcing script defines `rt`, the runtime's command line (with the flags this
# host needs), and `runtime`, its name for --runtime; images built here are removed at exit, then
# `runtime_stop` runs if the script defines it.
tag=$$
images=()
cleanup_images() {
  local status=$?
  for image in "${images[@]}"; do rt rmi -f "$image" >/dev/null 2>&1 || true; done
  if declare -F runtime_stop >/dev/null; then runtime_stop; fi
  cleanup "$status"
}
trap cleanup_images EXIT

# build_image NAME CONTAINERFILE-LINES FILE...: FROM scratch with FILEs and their shared libraries
# (the ASan build's examples are dynamic), under the same absolute paths.
build_image() {
  local name=$1 lines=$2; shift 2
  local ctx="$WORK/ctx-$name"
  mkdir -p "$ctx"
  for file in "$@" $(ldd "$@" 2>/dev/null | grep -o '/[^ :]*' | sort -u); do
    mkdir -p "$ctx$(dirname "$file")"
    cp -L "$file" "$ctx$file"
  done
  printf 'FROM scratch\nCOPY . /\n%b\n' "$lines" >"$ctx/Containerfile"
  images+=("localhost/zerodrop-test-$name:$tag")
  rt build -q -t "localhost/zerodrop-test-$name:$tag" -f "$ctx/Containerfile" "$ctx" \
    >"$WORK/build-$name.log" 2>&1 \
    || { cat "$WORK/build-$name.log"; skip "$runtime cannot build an image FROM scratch here"; }
}

# manifest NAME IMAGE COMMAND PRESTOP [EXTRA]: a Deployment of 2 pods on $port.
manifest() {
  cat >"$WORK/$1.yaml" <<EOM
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    spec:
      terminationGracePeriodSeconds: 3
      containers:
      - name: app
        image: localhost/zerodrop-test-$2:$tag
        command: $3
        ports: [{containerPort: $port}]
        lifecycle: {preStop: $4}
${5:-}
EOM
}

# lab NAME [flags...]: one short rollout of $WORK/NAME.yaml, routers $propagation late. A stop
# through the runtime takes longer than through kubelet (podman exec and kill take 0.3-1.5 s
# here, more under load): a race is shown with a propagation longer than that.
lab() {
  local name=$1; shift
  rc=0
  "$ZERODROP" lab -f "$WORK/$name.yaml" --runtime "$runtime" --nodes 2 \
    --propagation "${propagation:-300ms}" --rate 100 --connections 8 --warmup 1s --tail 300ms \
    --readiness-period "${period:-100ms}" --out "$WORK/$name" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}
holes() { python3 -c 'import json,sys; print(" ".join(sorted({h["id"] for h in json.load(open(sys.argv[1]))["holes"]})))' "$1/report.json"; }
failed() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["load"]["failed"])' "$1/report.json"; }
expect_rc() {  # expect_rc NAME CODE
  [ "$rc" = "$2" ] || { cat "$WORK/$1.out" "$WORK/$1.err"; fail "$1: exit $rc, expected $2"; }
}
expect_hole() {  # expect_hole NAME HOLE
  case " $(holes "$WORK/$1") " in *" $2 "*) ;;
    *) cat "$WORK/$1.out"; fail "$1: no $2" ;; esac
}

# A lab killed with SIGKILL leaves no container: its sweeper removes them. Runs $WORK/NAME.yaml.
expect_sigkill_leaves_nothing() {
  "$ZERODROP" lab -f "$WORK/$1.yaml" --runtime "$runtime" --nodes 1 --warmup 60s \
    --readiness-period 1s --out "$WORK/killed" >"$WORK/killed.out" 2>"$WORK/killed.err" &
  local lab_pid=$! left
  for _ in $(seq 300); do
    grep -q '"kind":"pod_ready"' "$WORK/killed/events.ndjson" 2>/dev/null && break
    kill -0 "$lab_pid" 2>/dev/null || { cat "$WORK/killed.err"; fail "the lab ended early"; }
    sleep 0.1
  done
  [ -n "$(rt ps -q --filter "name=zd-$lab_pid-")" ] || fail "no container of the lab runs"
  kill -9 "$lab_pid"
  wait "$lab_pid" 2>/dev/null || true
  for _ in $(seq 300); do
    [ -z "$(rt ps -aq --filter "name=zd-$lab_pid-")" ] && break
    sleep 0.1
  done
  left=$(rt ps -a --filter "name=zd-$lab_pid-" --format '{{.Names}}')
  [ -z "$left" ] || fail "containers left after SIGKILL: $left"
  echo "sigkill: no container left"
}
