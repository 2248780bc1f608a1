#!/usr/bin/env bash
# Pods of an image through docker (`lab --runtime docker`), against a private dockerd this test
# starts and stops (its own data root and socket, no bridge, no iptables or nftables rules: nothing
# of the host's docker, if it has one, is touched). The cases where docker differs from podman:
# its exec failure words for a preStop `exec: [sleep]` in an image without sleep (a failed hook,
# then deregistration-race), its kill of PID 1 (an image STOPSIGNAL dropped, SIGKILL at grace),
# its error for an image not in its store, and no container left by a lab killed with SIGKILL.
# graceful with the kubelet's sleep action passes. Skips (77) only when dockerd is not installed
# or cannot run a container on this host; lab_container.sh runs the same pods through podman.
# cost: 100
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "dockerd needs root"
command -v dockerd >/dev/null || skip "dockerd is not installed (scripts/setup.sh test installs docker.io)"
command -v docker >/dev/null || skip "the docker client is not installed"
for example in naive graceful; do need_built "$BUILD_DIR/examples/$example"; done
[ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/setup.sh test)"

# The daemon's sockets live under a short path (a unix socket's path has 108 bytes at most).
exec_root=$(mktemp -d /tmp/zd-docker.XXXXXX)
export DOCKER_HOST="unix://$exec_root/docker.sock" DOCKER_BUILDKIT=0
dockerd --data-root "$WORK/docker" --exec-root "$exec_root/exec" --host "$DOCKER_HOST" \
  --pidfile "$exec_root/dockerd.pid" --iptables=false --ip6tables=false --bridge=none \
  --ip-forward=false --ip-masq=false --storage-driver vfs \
  --exec-opt native.cgroupdriver=cgroupfs >"$WORK/dockerd.log" 2>&1 &
dockerd_pid=$!
runtime_stop() {  # the daemon stops its containerd and its containers with it
  kill "$dockerd_pid" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$dockerd_pid" 2>/dev/null || true
  wait "$dockerd_pid" 2>/dev/null || true
  # What the daemon mounted and left (its default network namespace's nsfs, a container's shm).
  awk -v a="$exec_root" -v b="$WORK/docker" 'index($2, a) == 1 || index($2, b) == 1 { print $2 }' \
    /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  rm -rf "$exec_root"
}
rt() { command docker "$@"; }
runtime=docker
source "$(dirname "$0")/containers.bash"
for _ in $(seq 300); do
  rt version >/dev/null 2>&1 && break
  kill -0 "$dockerd_pid" 2>/dev/null || break
  sleep 0.1
done
rt version >/dev/null 2>&1 || { tail -5 "$WORK/dockerd.log"; skip "dockerd cannot start on this host"; }

mkdir -p "$WORK/bin" "$WORK/www"
cp /bin/busybox "$WORK/bin/busybox"  # at a path of the image only, for the exec probe below
echo ok >"$WORK/www/index.html"
build_image busybox 'STOPSIGNAL SIGUSR1\nENTRYPOINT ["'"$WORK"'/bin/busybox"]' "$WORK/bin/busybox" \
  "$WORK/www/index.html"
if ! rt run --rm --pull never --network host "localhost/zerodrop-test-busybox:$tag" true \
  >"$WORK/probe.log" 2>&1; then
  cat "$WORK/probe.log"; skip "docker cannot run a container on this host"
fi
build_image examples "" "$BUILD_DIR/examples/naive" "$BUILD_DIR/examples/graceful"
port=$(free_port)

# An exec preStop in an image without sleep fails inside the container, in docker's words.
manifest no-sleep examples "[$BUILD_DIR/examples/naive]" '{exec: {command: [sleep, "2"]}}'
propagation=4s lab no-sleep --no-keepalive
expect_rc no-sleep 1
expect_grep 'executable file not found.*"kind":"prestop_failed"' "$WORK/no-sleep/events.ndjson"
expect_grep 'pods run image localhost/zerodrop-test-examples:[0-9]+ in docker containers' \
  "$WORK/no-sleep/events.ndjson"
expect_hole no-sleep deregistration-race
tr -s ' \n' ' ' <"$WORK/no-sleep.out" >"$WORK/no-sleep.flat"  # the terminal report wraps lines
expect_grep "deregistration-race.*its preStop hook failed at [0-9.]+ s \(.*executable file not found" "$WORK/no-sleep.flat"
echo "no-sleep: preStop failed in the container, deregistration-race, $(failed "$WORK/no-sleep") failed"

manifest graceful examples "[$BUILD_DIR/examples/graceful]" '{sleep: {seconds: 1}}'
lab graceful
expect_rc graceful 0
[ "$(failed "$WORK/graceful")" = 0 ] || fail "graceful: requests failed"
echo "graceful: 0 failed"

# busybox httpd as PID 1 drops the image's STOPSIGNAL (SIGUSR1); the pod is killed at grace.
manifest busybox busybox "[$WORK/bin/busybox, httpd, -f, -h, $WORK/www, -p, '\$(POD_IP):\$(PORT)']" 'null'
rm -f "$WORK/bin/busybox"  # only the image has it now
lab busybox --no-keepalive --readiness tcp
[ "$rc" = 0 ] || [ "$rc" = 1 ] || expect_rc busybox 0
expect_grep '"detail":"stop signal SIGUSR1"' "$WORK/busybox/events.ndjson"
expect_grep 'has no handler for SIGUSR1.*"kind":"signal_ignored"' "$WORK/busybox/events.ndjson"
expect_grep '"grace period over: SIGKILL' "$WORK/busybox/events.ndjson"
echo "busybox: the image's STOPSIGNAL dropped by PID 1, SIGKILL at grace"

expect_sigkill_leaves_nothing busybox

# A missing image: one line naming it and docker's words, before any pod.
sed "s|zerodrop-test-busybox:$tag|zerodrop-test-missing:$tag|" "$WORK/busybox.yaml" >"$WORK/missing.yaml"
expect_exit 2 "$ZERODROP" lab -f "$WORK/missing.yaml" --runtime docker
expect_grep "^zerodrop: error: image 'localhost/zerodrop-test-missing:$tag': docker image inspect: .*[Nn]o such image" "$WORK/err"
echo "missing image: one line"
