#!/usr/bin/env bash
# labels: containers
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

prepare_busybox
build_image examples "" "$BUILD_DIR/examples/naive" "$BUILD_DIR/examples/graceful"
port=$(free_port)

expect_exec_prestop_fails_and_races  # in docker's words, printed on its standard output

grace=6 manifest graceful examples "[$BUILD_DIR/examples/graceful]" '{sleep: {seconds: 1}}'  # see lab_container.sh
lab graceful
expect_rc graceful 0
[ "$(failed "$WORK/graceful")" = 0 ] || fail "graceful: requests failed"
echo "graceful: 0 failed"

expect_busybox_drops_its_stop_signal
expect_sigkill_leaves_nothing busybox

expect_missing_image "[Nn]o such image"
