#!/usr/bin/env bash
# Installs what zerodrop needs to build and test on Debian bookworm, and nothing when all is there.
# Usage: scripts/setup.sh [build|test|bench]   (default: build)
#   build  compilers (clang, the builds' compiler; g++ for its C++ library), the lld linker, CMake,
#          Ninja and the libraries zerodrop links (libpq for the schema-race example app)
#   test   build + clang's sanitizer runtime (the ASan+UBSan build) + what the tests drive
#          (Chromium for the HTML report, nginx pods, iproute2, nftables and iptables for
#          `lab --dataplane nftables|iptables`, python3-grpcio and grpc++ for the gRPC example
#          servers, PostgreSQL 15 for lab --db postgres, podman + runc for lab's containers and
#          make image, docker.io where no dockerd is installed, busybox-static for the container
#          tests' images), and Debian's kubectl 1.20 unpacked, not installed, into
#          /var/cache/zerodrop/kubectl-1.20 (scripts/fetch-kubectl-1.20.sh)
#   bench  test + the peers the benchmarks measure against (nginx, wrk, hey, haproxy, hyperfine)
set -euo pipefail

want=(g++ clang cmake ninja-build make pkg-config lld
      libboost1.81-dev libboost-url1.81-dev libcli11-dev libfmt-dev nlohmann-json3-dev
      libyaml-dev libpg-query-dev libssl-dev libnghttp2-dev libgtest-dev libgmock-dev
      libbenchmark-dev libpq-dev)
case "${1:-build}" in
  build) ;;
  test) want+=(libclang-rt-14-dev chromium iproute2 nftables iptables procps util-linux python3 curl python3-jsonschema openssl nginx-light haproxy python3-grpcio libgrpc++-dev postgresql-15 podman runc busybox-static) ;;
  bench) want+=(chromium iproute2 nftables iptables procps util-linux python3 curl python3-jsonschema openssl nginx-light wrk hey haproxy hyperfine time nghttp2-client postgresql-15 podman runc busybox-static) ;;
  *) echo "setup.sh: error: unknown profile '$1' (expected build, test or bench)" >&2; exit 2 ;;
esac
# docker.io for tests/e2e/lab_docker.sh, which runs a private dockerd of its own; only where no
# dockerd is installed (a host's own docker, docker-ce say, stays as it is).
case "${1:-build}" in test | bench) command -v dockerd >/dev/null || want+=(docker.io) ;; esac

# kubectl 1.20 for the lab's API test, beside (never instead of) the kubectl on PATH; a failed
# download only warns: that test then skips, saying why.
fetch_kubectl_120() {
  case "${1:-build}" in test | bench) ;; *) return 0 ;; esac
  [ -x /var/cache/zerodrop/kubectl-1.20/usr/bin/kubectl ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: warning: kubectl 1.20 not fetched; run as root or: $(dirname "$0")/fetch-kubectl-1.20.sh" >&2
    return 0
  fi
  "$(dirname "$0")/fetch-kubectl-1.20.sh" >/dev/null || echo "setup.sh: warning: kubectl 1.20 not fetched" >&2
}

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  fetch_kubectl_120 "${1:-build}"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: error: missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
  exit 2
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# No service starts while installing (policy-rc.d, honoured by invoke-rc.d and deb-systemd-invoke):
# docker.io's daemon would start with its defaults, a bridge and iptables rules, on a host with an
# init; the tests start the servers they need themselves.
held=
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && held=1
fi
status=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[ -z "$held" ] || rm -f /usr/sbin/policy-rc.d
[ "$status" -eq 0 ] || exit "$status"
fetch_kubectl_120 "${1:-build}"
