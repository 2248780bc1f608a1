#!/usr/bin/env bash
# Minimal reproducer, with nothing of zerodrop: does a node's Service proxy lose new connections
# while it rewrites its rules for an endpoint change? (docs/dataplane-sync.md)
#
# In a network namespace of its own: a ClusterIP Service 10.96.0.10:80 (and SERVICES-1 more, so
# kube-proxy's shared chains have their usual size), endpoints 10.244.0.1-12:8080 listening in
# the same namespace, a client connecting to the ClusterIP at RATE connects/s, and one endpoint change
# every 1/CHANGES s (CHANGES changes/s; 0 = as fast as the tool runs), each replacing the third
# endpoint by the next of 10.244.0.3-12 (a rolling update), written in one of these shapes:
#   nft-kube-proxy       kube-proxy's nftables mode, a partial sync (its code since partial syncs):
#                        one `nft -f -` transaction that adds and flushes the Service's chain and
#                        every endpoint chain of the Service, writes their rules again (the
#                        Service's `numgen random mod N vmap { ... }`) and flushes the gone
#                        endpoint's chain; that chain is deleted by a transaction of its own at the
#                        first sync more than 1 s later
#   nft-kube-proxy-full  kube-proxy's nftables full sync (each start and each node label change;
#                        every sync in its first releases): the same, plus every base chain,
#                        jump chain and map of the table flushed and filled again
#   iptables-nft         kube-proxy's iptables mode, a partial sync: one `iptables-restore
#   iptables-legacy        --noflush` whose input redeclares (so flushes) and refills filter's
#                        KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-FORWARD, KUBE-NODEPORTS,
#                        KUBE-PROXY-FIREWALL, nat's KUBE-SERVICES, KUBE-NODEPORTS, KUBE-POSTROUTING,
#                        KUBE-MARK-MASQ, the Service's KUBE-SVC and its KUBE-SEP chains, and
#                        flushes and deletes (-X) the gone endpoint's KUBE-SEP chain
#   nft-atomic           no chain with a set in its rules is flushed: new endpoint chains are
#                        added whole, the Service's dispatch is a new chain per change (its name
#                        carries a generation, its rule its own anonymous map), the Service's
#                        chain (the one service-ips points to) gets its one rule `goto` that
#                        chain replaced (flush and add: a plain rule), and the old chains are
#                        deleted a second later, when nothing can be in them
#   nft-element-swap     the same, but the service-ips map element itself is swapped to the new
#                        chain (delete + add element) instead of the Service chain's rule
#   iptables-nft-atomic  the same for iptables: the Service's dispatch alternates between two
#   iptables-legacy-atomic chains, each change fills the one no rule points to, adds the new
#                        KUBE-SEP whole and replaces (-R) the one KUBE-SERVICES rule; a KUBE-SEP
#                        gone is deleted one change later; nothing else is rewritten
#   nft-flush-named-map  a diagnostic shape: kube-proxy's partial sync, but the Service's chain
#                        dispatches through a named verdict map (`numgen random mod 3 vmap
#                        @eps-web-1`, its third element swapped) instead of an anonymous one in
#                        the rule: whether the flush alone loses, or the anonymous map
#   none                 the same rules, written once; no change (the control)
#
# Every connect that fails is counted by its error; conntrack's untranslated SYN_SENT entries (the
# reply's source still the ClusterIP: the kernel gave the SYN no DNAT) are the evidence that the
# kernel, not a listener, lost it (every endpoint ever named keeps listening, so a translated
# connect always succeeds).
#
# Usage: scripts/repro-proxy-sync-loss.sh [SHAPE] [SECONDS]   (default nft-kube-proxy 20)
#   env RATE=1000 CHANGES=20 SERVICES=20 TIMEOUT=1.5 NFT_SHELL=0 (1: the nftables shapes' changes
#   go through one `nft -i`, a line per transaction, instead of an `nft -f` each: the same
#   transactions, more of them per second)
# Prints one line of key=value. Root; needs nft, ip (iproute2), conntrack (conntrack-tools),
# python3, and iptables for the iptables shapes. Cleans up its namespace on every exit.
set -euo pipefail
SHAPE=${1:-nft-kube-proxy}
SECONDS_RUN=${2:-20}
RATE=${RATE:-1000}
CHANGES=${CHANGES:-20}
SERVICES=${SERVICES:-20}
TIMEOUT=${TIMEOUT:-1.5}
HERE=$(cd "$(dirname "$0")" && pwd)
RULES="$HERE/repro-proxy-sync-loss-rules.sh"

die() { echo "repro-proxy-sync-loss: error: $*" >&2; exit 2; }
case "$SHAPE" in
  nft-kube-proxy | nft-kube-proxy-full | nft-atomic | iptables-nft | iptables-legacy) ;;
  iptables-nft-atomic | iptables-legacy-atomic | nft-flush-named-map | nft-element-swap | none) ;;
  *) die "unknown shape '$SHAPE' (nft-kube-proxy, nft-kube-proxy-full, iptables-nft, iptables-legacy, nft-atomic, iptables-nft-atomic, iptables-legacy-atomic, none)" ;;
esac
[[ "$SECONDS_RUN" =~ ^[0-9]+$ && "$SECONDS_RUN" -gt 0 ]] || die "SECONDS '$SECONDS_RUN' is not a positive integer"
[[ "$RATE" =~ ^[0-9]+$ && "$RATE" -gt 0 ]] || die "RATE '$RATE' is not a positive integer"
[[ "$CHANGES" =~ ^[0-9]+$ ]] || die "CHANGES '$CHANGES' is not a number of changes per second"
[[ "$SERVICES" =~ ^[0-9]+$ && "$SERVICES" -ge 1 && "$SERVICES" -le 200 ]] || die "SERVICES '$SERVICES' is not 1-200"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
need=(ip nft conntrack python3)
case "$SHAPE" in iptables-*) need+=("${SHAPE%-atomic}-restore") ;; esac
for tool in "${need[@]}"; do
  command -v "$tool" >/dev/null || die "'$tool' is missing (apt install iproute2 nftables conntrack iptables python3)"
done

NS=zd-sync-$$
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zd-sync.XXXXXX")
pids=()
cleanup() {
  # `ip netns exec` forks: its children are ended by the namespace's own list of processes.
  [ -e "/run/netns/$NS" ] && for p in $(ip netns pids "$NS"); do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_ns() { ip netns exec "$NS" "$@"; }
ip netns add "$NS"
in_ns ip link set lo up
# A veth pair inside the namespace: veth0 holds the addresses; what leaves it reaches veth1,
# which takes nothing (no address, another MAC, no forwarding).
in_ns ip link add veth0 type veth peer name veth1
# The client's own address first (the source for the ClusterIP route), then the endpoints'.
in_ns ip addr add 10.244.9.9/32 dev veth0
for i in $(seq 12); do in_ns ip addr add "10.244.0.$i/32" dev veth0; done
in_ns ip link set veth0 up
in_ns ip link set veth1 up
# An untranslated SYN follows this route out of veth0 and is dropped on the other side: a
# timeout, as a SYN sent to a ClusterIP that nothing answers (a fixed neighbour entry: no ARP,
# so no 'no route to host' after 3 s).
in_ns ip route add 10.96.0.0/16 dev veth0 src 10.244.9.9
in_ns ip neigh add 10.96.0.10 lladdr 02:00:00:00:00:01 dev veth0 nud permanent
in_ns sysctl -qw net.ipv4.ip_local_port_range="1024 65000"

# Listeners: accept and close, every endpoint ever named.
in_ns python3 - "$WORK/listening" <<'EOF' &
import selectors, socket, sys
sel = selectors.DefaultSelector()
for i in range(1, 13):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((f"10.244.0.{i}", 8080)); s.listen(4096); s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
open(sys.argv[1], "w").close()
while True:
    for key, _ in sel.select():
        try:
            while True:
                c, _ = key.fileobj.accept(); c.close()
        except BlockingIOError:
            pass
EOF
pids+=($!)
for _ in $(seq 100); do [ -e "$WORK/listening" ] && break; sleep 0.05; done
[ -e "$WORK/listening" ] || die "the listeners did not start"

# The evidence, in a table of its own that no shape touches: between the nat hook (priority
# -100) and kube-proxy's filter-output-post-dnat (-90), a new connection still addressed to a
# ClusterIP got no DNAT; its source port goes into a set. (An untranslated SYN that kube-proxy's
# nftables table then rejects is never confirmed, so it leaves no conntrack entry; one that
# leaves the node, as under iptables, does.)
in_ns nft -f - <<'EOF'
table ip zd-evidence {
  set untranslated { type inet_service ; flags dynamic,timeout ; timeout 30m ; size 65535 ; }
  chain after-nat {
    type filter hook output priority -95 ; policy accept ;
    ip daddr 10.96.0.0/16 ct state new add @untranslated { tcp sport }
  }
}
EOF

# The rules as kube-proxy first writes them (a full sync), then the changes.
SHAPE=$SHAPE SERVICES=$SERVICES in_ns bash "$RULES" setup || die "the kernel refused the '$SHAPE' rules"
if [ "$SHAPE" != none ]; then
  SHAPE=$SHAPE SERVICES=$SERVICES CHANGES=$CHANGES NFT_SHELL=${NFT_SHELL:-0} STOP="$WORK/stop" COUNT="$WORK/changes" \
    in_ns bash "$RULES" churn &
  pids+=($!)
fi

# The client: RATE connects/s for SECONDS_RUN s, each closed at once (RST: no TIME_WAIT).
in_ns python3 - "$RATE" "$SECONDS_RUN" "$TIMEOUT" "$WORK/failed" <<'EOF' >"$WORK/client"
import errno, resource, selectors, socket, struct, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
rate, secs, timeout, failed_path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
sel = selectors.DefaultSelector()
linger = struct.pack("ii", 1, 0)
counts = {"ok": 0, "timeout": 0, "refused": 0, "other": 0}
failed, started, inflight_sum, samples = [], 0, 0, 0
t0 = time.monotonic(); end = t0 + secs
def finish(sock, outcome):
    sel.unregister(sock); counts[outcome] += 1
    if outcome != "ok":
        failed.append(f"{outcome} {sock.getsockname()[1]}")
    sock.close()
while True:
    now = time.monotonic()
    # On a busy machine the loop may fall behind: at most 500 connects in flight (the rate is
    # then lower than asked; `connects` counts those made).
    while now < end and started < (now - t0) * rate and len(sel.get_map()) < 500:
        s = socket.socket(); s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        e = s.connect_ex(("10.96.0.10", 80))
        started += 1
        if e not in (0, errno.EINPROGRESS):
            counts["refused" if e == errno.ECONNREFUSED else "other"] += 1; s.close(); continue
        sel.register(s, selectors.EVENT_WRITE, now)
    if now >= end and not sel.get_map():
        break
    for key, _ in sel.select(0.002):
        e = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        finish(key.fileobj, "ok" if e == 0 else "refused" if e == errno.ECONNREFUSED else "other")
    inflight_sum += len(sel.get_map()); samples += 1
    for key in list(sel.get_map().values()):
        if now - key.data > timeout:
            finish(key.fileobj, "timeout")
open(failed_path, "w").write("\n".join(failed) + ("\n" if failed else ""))
print(f"connects={started} ok={counts['ok']} timeout={counts['timeout']} refused={counts['refused']} "
      f"other={counts['other']} mean_in_flight={inflight_sum / max(samples, 1):.2f}")
EOF
touch "$WORK/stop"
[ "$SHAPE" = none ] || wait "${pids[1]}" 2>/dev/null || true
changes=$(cat "$WORK/changes" 2>/dev/null || echo 0)

# Evidence: SYN_SENT entries whose reply still comes from the ClusterIP got no DNAT.
untranslated=$(in_ns conntrack -L -p tcp --state SYN_SENT --reply-src 10.96.0.10 2>/dev/null | grep -c . || true)
ports=$(in_ns nft -j list set ip zd-evidence untranslated \
  | python3 -c 'import json,sys; print(" ".join(str(e if isinstance(e, int) else e["elem"]["val"]) for o in json.load(sys.stdin)["nftables"] if "set" in o for e in o["set"].get("elem", [])))')
untranslated_seen=$(wc -w <<<"$ports")
matched=0 syn_sent_matched=0
while read -r _ port; do
  [ -n "$port" ] || continue
  [[ " $ports " == *" $port "* ]] && matched=$((matched + 1))
  in_ns conntrack -L -p tcp --state SYN_SENT --reply-src 10.96.0.10 --sport "$port" 2>/dev/null \
    | grep -q . && syn_sent_matched=$((syn_sent_matched + 1))
done <"$WORK/failed"
echo "shape=$SHAPE nft_shell=${NFT_SHELL:-0} kernel=$(uname -r) seconds=$SECONDS_RUN rate=$RATE changes_per_s=$CHANGES" \
  "services=$SERVICES changes=$changes $(cat "$WORK/client") untranslated_syn_sent=$untranslated" \
  "untranslated_seen=$untranslated_seen failed_seen_untranslated=$matched failed_with_syn_sent_entry=$syn_sent_matched"
