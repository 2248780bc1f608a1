#!/usr/bin/env bash
# labels: timing
# cost: 20
# Debian's haproxy as each node's L7 router (--ingress haproxy): naive and close-listener fail with
# deregistration-race, which haproxy reports as its own 503; graceful with a preStop longer than
# propagation drops nothing. Three rollouts (the three examples), hence the cost.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
source "$(dirname "$0")/lab_common.inc"
source "$(dirname "$0")/lab_ingress.inc"
[ -x /usr/sbin/haproxy ] || skip "haproxy is not installed (scripts/setup.sh test)"

# unexplained: HAProxy closes a kept-alive client connection without an answer or a log line when
# the server connection it reused for the request breaks first (docs/lab.md "A real ingress");
# reload_cuts_only still requires each such failure to be that shape.
ingress_must_show haproxy 503 ",unexplained"
