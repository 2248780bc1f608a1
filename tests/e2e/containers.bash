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

# manifest NAME IMAGE COMMAND PRESTOP [EXTRA]: a Deployment of 2 pods on $port, a grace period of
# $grace seconds (default 3).
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
      terminationGracePeriodSeconds: ${grace:-3}
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
  # An exec check's output file lives in the run folder, not the temporary folder.
  left=$(find "$TMPDIR" -maxdepth 1 -name 'zerodrop-exec-*')
  [ -z "$left" ] || fail "exec output files left in $TMPDIR after SIGKILL: $left"
  echo "sigkill: no container left"
}

# The busybox image (busybox-static at a path of the image only, STOPSIGNAL SIGUSR1, a page to
# serve), and a first container of it: skips when the runtime cannot run one on this host.
prepare_busybox() {
  mkdir -p "$WORK/bin" "$WORK/www"
  cp /bin/busybox "$WORK/bin/busybox"
  echo ok >"$WORK/www/index.html"
  build_image busybox 'STOPSIGNAL SIGUSR1\nENTRYPOINT ["'"$WORK"'/bin/busybox"]' \
    "$WORK/bin/busybox" "$WORK/www/index.html"
  if ! rt run --rm --pull never --network host "localhost/zerodrop-test-busybox:$tag" true \
    >"$WORK/probe.log" 2>&1; then
    cat "$WORK/probe.log"; skip "$runtime cannot run a container on this host"
  fi
}

# An exec preStop in an image without sleep: the hook fails inside the container, in the
# runtime's words, and naive's stop at SIGTERM then races the routers. Needs the examples image.
expect_exec_prestop_fails_and_races() {
  manifest no-sleep examples "[$BUILD_DIR/examples/naive]" '{exec: {command: [sleep, "2"]}}'
  propagation=4s lab no-sleep --no-keepalive
  expect_rc no-sleep 1
  expect_grep 'executable file not found.*"kind":"prestop_failed"' "$WORK/no-sleep/events.ndjson"
  expect_grep "pods run image localhost/zerodrop-test-examples:[0-9]+ in $runtime containers" \
    "$WORK/no-sleep/events.ndjson"
  expect_grep 'container zd-.*"kind":"pod_started"' "$WORK/no-sleep/events.ndjson"
  expect_hole no-sleep deregistration-race
  tr -s ' \n' ' ' <"$WORK/no-sleep.out" >"$WORK/no-sleep.flat"  # the terminal report wraps lines
  expect_grep "deregistration-race.*its preStop hook failed at [0-9.]+ s \(exit code 12[67]: .*executable file not found" \
    "$WORK/no-sleep.flat"
  echo "no-sleep: preStop failed in the container, deregistration-race, $(failed "$WORK/no-sleep") failed"
}

# busybox httpd as PID 1 has no handler for the image's STOPSIGNAL (SIGUSR1): the kernel drops
# it, and the pod is killed at grace. The manifest's readiness probe runs a program only the image
# has (for the SIGKILL case; the rollout probes tcp: a runtime exec takes up to ~1 s here).
expect_busybox_drops_its_stop_signal() {
  manifest busybox busybox \
    "[$WORK/bin/busybox, httpd, -f, -h, $WORK/www, -p, '\$(POD_IP):\$(PORT)']" 'null' \
    "        readinessProbe: {exec: {command: [$WORK/bin/busybox, 'true']}, timeoutSeconds: 10}"
  rm -f "$WORK/bin/busybox"  # only the image has it now
  lab busybox --no-keepalive --readiness tcp
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || expect_rc busybox 0
  expect_grep '"detail":"stop signal SIGUSR1"' "$WORK/busybox/events.ndjson"
  expect_grep 'has no handler for SIGUSR1.*"kind":"signal_ignored"' "$WORK/busybox/events.ndjson"
  expect_grep '"grace period over: SIGKILL' "$WORK/busybox/events.ndjson"
  echo "busybox: the image's STOPSIGNAL dropped by PID 1, SIGKILL at grace"
}

# expect_missing_image WORDS: an image not in the store is one line naming it and the runtime's
# WORDS (ERE), before any pod. Uses the busybox manifest.
expect_missing_image() {
  sed "s|zerodrop-test-busybox:$tag|zerodrop-test-missing:$tag|" "$WORK/busybox.yaml" \
    >"$WORK/missing.yaml"
  expect_exit 2 "$ZERODROP" lab -f "$WORK/missing.yaml" --runtime "$runtime"
  expect_grep "^zerodrop: error: image 'localhost/zerodrop-test-missing:$tag': $runtime image inspect: .*$1" \
    "$WORK/err"
  echo "missing image: one line"
}
