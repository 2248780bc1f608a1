#!/usr/bin/env bash
# labels: offline
# --ingress with its program missing: one line naming the program and the setup command, before
# any pod runs. The program is hidden by an empty /usr/sbin in a private mount namespace.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to hide /usr/sbin in a mount namespace"
command -v unshare >/dev/null || skip "unshare is missing"
unshare -m true 2>/dev/null || skip "this host allows no mount namespace"

hidden() {  # hidden ARGS...: zerodrop ARGS with an empty /usr/sbin
  unshare -m --propagation private sh -c 'mount -t tmpfs zerodrop-test /usr/sbin && exec "$@"' \
    sh "$ZERODROP" "$@"
}
expect_exit 2 hidden lab --ingress haproxy --out "$WORK/h" -- true
missing='^zerodrop: error: --ingress'
setup='scripts/setup.sh test\)$'
expect_grep "$missing haproxy: /usr/sbin/haproxy is not installed \(package haproxy: $setup" \
  "$WORK/err"
[ "$(grep -c . "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "more than one line"; }
expect_exit 2 hidden lab --ingress nginx -- true
expect_grep "$missing nginx: /usr/sbin/nginx is not installed \(package nginx-light: $setup" \
  "$WORK/err"
[ -e "$WORK/h" ] && fail "a run folder was created before the check"
echo "a missing ingress program is named with its setup command"
