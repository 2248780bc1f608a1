#!/usr/bin/env bash
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

mkdir -p "$WORK/bin" "$WORK/www"
cp /bin/busybox "$WORK/bin/busybox"  # at a path of the image only, for the exec probe below
echo ok >"$WORK/www/index.html"
build_image busybox 'STOPSIGNAL SIGUSR1\nENTRYPOINT ["'"$WORK"'/bin/busybox"]' "$WORK/bin/busybox" \
  "$WORK/www/index.html"
if ! rt run --rm --pull never --network host "localhost/zerodrop-test-busybox:$tag" true \
  >"$WORK/probe.log" 2>&1; then
  cat "$WORK/probe.log"; skip "podman cannot run a container on this host"
fi
build_image examples "" "$BUILD_DIR/examples/naive" "$BUILD_DIR/examples/close-listener" \
  "$BUILD_DIR/examples/graceful"

port=$(free_port)

# An exec preStop in an image without sleep: the hook fails inside the container, in the
# runtime's words, and naive's stop at SIGTERM then races the routers.
manifest no-sleep examples "[$BUILD_DIR/examples/naive]" '{exec: {command: [sleep, "2"]}}'
propagation=4s lab no-sleep --no-keepalive
expect_rc no-sleep 1
expect_grep 'executable file not found.*"kind":"prestop_failed"' "$WORK/no-sleep/events.ndjson"
expect_grep 'container zd-.*"kind":"pod_started"' "$WORK/no-sleep/events.ndjson"
expect_hole no-sleep deregistration-race
tr -s ' \n' ' ' <"$WORK/no-sleep.out" >"$WORK/no-sleep.flat"  # the terminal report wraps lines
expect_grep "deregistration-race.*its preStop hook failed at [0-9.]+ s \(exit code 127: .*executable file not found" "$WORK/no-sleep.flat"
echo "no-sleep: preStop failed in the container, deregistration-race, $(failed "$WORK/no-sleep") failed"

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
manifest graceful examples "[$BUILD_DIR/examples/graceful]" '{sleep: {seconds: 1}}'
lab graceful --to-image "localhost/zerodrop-test-examples-b:$tag"
expect_rc graceful 0
expect_grep "of localhost/zerodrop-test-examples-b:$tag .*\"pod\":\"pod-3\"" "$WORK/graceful/events.ndjson"
echo "graceful: 0 failed of $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["load"]["requests"])' "$WORK/graceful/report.json")"

# busybox httpd as PID 1 has no handler for the image's STOPSIGNAL (SIGUSR1): the kernel drops
# it, and the pod is killed at grace. Its manifest's readiness probe runs a program only the
# image has (used by the SIGKILL case below; the rollout probes tcp: each podman exec takes ~1 s).
manifest busybox busybox "[$WORK/bin/busybox, httpd, -f, -h, $WORK/www, -p, '\$(POD_IP):\$(PORT)']" 'null' \
  "        readinessProbe: {exec: {command: [$WORK/bin/busybox, 'true']}, timeoutSeconds: 10}"
rm -f "$WORK/bin/busybox"  # only the image has it now
lab busybox --no-keepalive --readiness tcp
[ "$rc" = 0 ] || [ "$rc" = 1 ] || expect_rc busybox 0
expect_grep '"detail":"stop signal SIGUSR1"' "$WORK/busybox/events.ndjson"
expect_grep 'has no handler for SIGUSR1.*"kind":"signal_ignored"' "$WORK/busybox/events.ndjson"
expect_grep '"grace period over: SIGKILL' "$WORK/busybox/events.ndjson"
echo "busybox: the image's STOPSIGNAL dropped by PID 1, SIGKILL at grace"

expect_sigkill_leaves_nothing busybox

# A missing image: one line naming it and the runtime's words, before any pod.
sed "s|zerodrop-test-busybox:$tag|zerodrop-test-missing:$tag|" "$WORK/busybox.yaml" >"$WORK/missing.yaml"
expect_exit 2 "$ZERODROP" lab -f "$WORK/missing.yaml" --runtime podman
expect_grep "^zerodrop: error: image 'localhost/zerodrop-test-missing:$tag': podman image inspect: .*image not known" "$WORK/err"
echo "missing image: one line"
