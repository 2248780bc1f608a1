#!/usr/bin/env bash
# labels: timing
# cost: 35
# --dataplane iptables: lab_nftables.sh's cases under kube-proxy's iptables chains (one
# iptables-restore per change): naive and close-listener fail with deregistration-race only,
# graceful passes and keeps serving kept-alive connections through a removed pod's conntrack
# entry, a SIGKILLed lab leaves nothing. Three rollouts and one killed lab, hence the cost.
DATAPLANE=iptables
source "$(dirname "$0")/lab_nftables.sh"
