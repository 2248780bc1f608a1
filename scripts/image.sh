#!/usr/bin/env bash
# make image: the release images of deploy/Dockerfile (zerodrop, and graceful with /zerodrop
# beside it) FROM scratch, built offline from the static binaries already in BUILD_DIR with
# Debian's podman (deploy/Dockerfile's build stage needs the network), each saved as an OCI
# archive that `podman load`, `docker load` and `kind load image-archive` take.
# Usage: scripts/image.sh BUILD_DIR     -> BUILD_DIR/zerodrop-image.tar, BUILD_DIR/graceful-image.tar
set -euo pipefail
build=${1:?usage: scripts/image.sh BUILD_DIR}
for binary in "$build/zerodrop" "$build/examples/graceful"; do
  [ -x "$binary" ] || { echo "image.sh: error: $binary is not built (make build)" >&2; exit 2; }
  if ldd "$binary" >/dev/null 2>&1; then  # ldd fails on a static binary
    echo "image.sh: error: $binary is not static (make build: -DZERODROP_STATIC=ON)" >&2; exit 2
  fi
done
command -v podman >/dev/null || {
  echo "image.sh: error: podman is not installed (scripts/setup.sh test)" >&2; exit 2; }
version=$("$build/zerodrop" --version | awk '{print $2}')
work=$(mktemp -d "${TMPDIR:-/tmp}/zerodrop-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The flags this kind of host needs (docs/lab.md, Containers): runc, cgroupfs, vfs, no ulimits.
printf '[containers]\ndefault_ulimits = []\n' >"$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"
flags=(--cgroup-manager cgroupfs --storage-driver vfs)
command -v runc >/dev/null && flags+=(--runtime runc)

strip -o "$work/zerodrop" "$build/zerodrop"
strip -o "$work/graceful" "$build/examples/graceful"
cat >"$work/Containerfile" <<'EOF'
# zerodrop itself, e.g. as PID 1 in front of an app: ENTRYPOINT ["/zerodrop", "run", "--", ...].
FROM scratch AS zerodrop
COPY zerodrop /zerodrop
USER 65532:65532
ENTRYPOINT ["/zerodrop"]

# The reference service: graceful, plus /zerodrop for the exec-form preStop on old clusters.
FROM scratch AS graceful
COPY zerodrop /zerodrop
COPY graceful /graceful
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/graceful"]
EOF
# save_image TARGET NAME ARCHIVE: builds one stage offline and saves it as an OCI archive.
save_image() {
  podman "${flags[@]}" build -q --pull=never --target "$1" -t "$2" -f "$work/Containerfile" \
    "$work" >/dev/null
  rm -f "$3"
  podman "${flags[@]}" save -q --format oci-archive -o "$3" "$2"
  podman "${flags[@]}" rmi "$2" >/dev/null  # the archive is the product; the store stays clean
  echo "$3 ($2, $(du -h "$3" | cut -f1))"
}
save_image zerodrop "docker.io/library/zerodrop:$version" "$build/zerodrop-image.tar"
save_image graceful "ghcr.io/zerodrop/graceful:$version" "$build/graceful-image.tar"
