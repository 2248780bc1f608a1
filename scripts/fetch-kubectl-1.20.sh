#!/usr/bin/env bash
# Unpacks Debian's kubectl 1.20 (package kubernetes-client) into DIR without installing it: an
# install would replace /usr/bin/kubectl, the kubectl everything else uses. The e2e test of the
# lab's API with kubectl 1.20 (tests/e2e/lab_kube_api_120.sh) runs DIR/usr/bin/kubectl.
# Usage: scripts/fetch-kubectl-1.20.sh [DIR]   (default: /var/cache/zerodrop/kubectl-1.20)
# Prints the kubectl's path; does nothing when it is already there. Exit 1 when apt cannot
# download the package (no apt source offers it, no network).
set -euo pipefail
dir=${1:-/var/cache/zerodrop/kubectl-1.20}
kubectl="$dir/usr/bin/kubectl"
if [ -x "$kubectl" ]; then
  echo "$kubectl"
  exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# apt's _apt user downloads into a folder it can write (else apt warns and downloads as root).
chmod 0777 "$tmp"
if ! (cd "$tmp" && apt-get download -qq kubernetes-client >"$tmp/apt.log" 2>&1); then
  echo "fetch-kubectl-1.20: apt-get download kubernetes-client failed: $(grep -m1 -E '^(E|W):' "$tmp/apt.log" || tail -1 "$tmp/apt.log")" >&2
  exit 1
fi
dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$tmp/root"
[ -x "$tmp/root/usr/bin/kubectl" ] || { echo "fetch-kubectl-1.20: no usr/bin/kubectl in the package" >&2; exit 1; }
mkdir -p "$dir/usr/bin"
mv "$tmp/root/usr/bin/kubectl" "$kubectl"
echo "$kubectl"
