#!/usr/bin/env bash
# labels: timing
# cost: 20
# Debian's nginx as each node's L7 router (--ingress nginx): naive and close-listener fail with
# deregistration-race, which nginx reports as its own 502; graceful with a preStop longer than
# propagation drops nothing. Three rollouts (the three examples), hence the cost.
# An old worker still finishing a kept-alive client connection after a reload routes its next
# request by the old upstream list: keepalive-stale may come with the race. And each reload
# closes the old workers' idle client connections, which now and then cuts a request a client
# sends on one at that instant (closed_before_response, retry-safe; 1-5 of ~1,560 in 2 of 5
# runs): nginx's own failure, not the app's, named ingress-reload-reset from nginx's logs when
# the lab has the whole chain of lines, else unexplained (reload_cuts_only checks each is that
# shape; lab_ingress_reload.sh makes it happen and requires the name); so graceful runs with a
# new connection per request (docs/lab.md).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
source "$(dirname "$0")/lab_common.inc"
source "$(dirname "$0")/lab_ingress.inc"
[ -x /usr/sbin/nginx ] || skip "nginx is not installed (scripts/setup.sh test)"

ingress_must_show nginx 502 ",keepalive-stale,ingress-reload-reset,unexplained" --no-keepalive
