#!/usr/bin/env bash
# labels: containers
# Pods of an image: `lab -f deploy.yaml` without a COMMAND runs the manifest's image in podman
# containers built here FROM scratch (nothing is pulled). An exec preStop `sleep` in an image
# without sleep fails as on a cluster (an event quoting the runtime) and the diagnosis names
# deregistration-race; kubelet's own sleep action works in the same image (0 failures); naive and
# close-listener fail with deregistration-race, graceful with a preStop longer than propagation
# passes; busybox httpd (PID 1, no handler for the image's STOPSIGNAL) drops it and is killed at
# grace; exec probes run inside the container; a lab killed with SIGKILL leaves no container.
# Skips (77) only when podman or runc is missing or cannot run a container on this host.
# cost: 160
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || skip "podman is not installed (scripts/setup.sh test)"
command -v runc >/dev/null || skip "runc is not installed (scripts/setup.sh test)"
for example in naive close-listener graceful; do need_built "$BUILD_DIR/examples/$example"; done
[ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/setup.sh test)"

# The flags and containers.conf zerodrop passes itself (see docs/lab.md, Containers).
printf '[containers]\ndefault_ulimits = []\n' >"$WORK/containers.conf"
export CONTAINERS_CONF="$WORK/containers.conf"
rt() { command podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs "$@"; }
runtime=podman
source "$(dirname "$0")/containers.bash"

prepare_busybox
build_image examples "" "$BUILD_DIR/examples/naive" "$BUILD_DIR/examples/close-listener" \
  "$BUILD_DIR/examples/graceful"

port=$(free_port)

expect_exec_prestop_fails_and_races

# kubelet's own sleep action needs nothing from the image.
manifest native-sleep examples "[$BUILD_DIR/examples/naive]" '{sleep: {seconds: 1}}'
lab native-sleep --no-keepalive
expect_rc native-sleep 0
[ "$(failed "$WORK/native-sleep")" = 0 ] || fail "native-sleep: requests failed"
echo "native-sleep: 0 failed"

manifest close-listener examples "[$BUILD_DIR/examples/close-listener]" 'null'
propagation=4s lab close-listener
expect_rc close-listener 1
expect_hole close-listener deregistration-race
echo "close-listener: deregistration-race"

# Version B from another image (--to-image): the same examples under a second tag.
rt tag "localhost/zerodrop-test-examples:$tag" "localhost/zerodrop-test-examples-b:$tag"
images+=("localhost/zerodrop-test-examples-b:$tag")
# The graceful server drains within the grace period; a stop through podman on a loaded machine
# (make test's ASan build beside it) once took 3.4 s from deletion to exit, past a 3 s grace:
# 6 s leaves the drain, not the runtime's latency, as what this scenario tests.
grace=6 manifest graceful examples "[$BUILD_DIR/examples/graceful]" '{sleep: {seconds: 1}}'
lab graceful --to-image "localhost/zerodrop-test-examples-b:$tag"
expect_rc graceful 0
expect_grep "of localhost/zerodrop-test-examples-b:$tag .*\"pod\":\"pod-3\"" "$WORK/graceful/events.ndjson"
echo "graceful: 0 failed of $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["load"]["requests"])' "$WORK/graceful/report.json")"

expect_busybox_drops_its_stop_signal
expect_sigkill_leaves_nothing busybox

expect_missing_image "image not known"
