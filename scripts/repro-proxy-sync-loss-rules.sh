#!/usr/bin/env bash
# The rules of scripts/repro-proxy-sync-loss.sh, run inside its namespace:
#   repro-proxy-sync-loss-rules.sh setup   the first (full) sync of SHAPE
#   repro-proxy-sync-loss-rules.sh churn   endpoint changes of SHAPE, CHANGES per second (0: as
#                                          fast as the tool runs) until the file STOP exists;
#                                          then writes how many it made to COUNT
# Service i (1..SERVICES) is default/web-i, ClusterIP 10.96.0.(9+i):80; only web-1 (10.96.0.10)
# changes and gets traffic. Its endpoints are 10.244.0.1, .2 and a third that moves along
# 10.244.0.3..12 (a rolling update: each change replaces one pod by a new one). The others have
# one endpoint each (10.244.1.i, never connected to). Written after kube-proxy's proxiers
# (pkg/proxy/nftables/proxier.go, pkg/proxy/iptables/proxier.go; docs/dataplane-sync.md).
set -euo pipefail
SHAPE=${SHAPE:?}
SERVICES=${SERVICES:-20}
MASQ=0x4000

# Names, computed once (a fork each): kube-proxy's nftables chains are
# service-HASH-ns/name/tcp/port and endpoint-HASH-ns/name/tcp/port__ip/port, its iptables chains
# KUBE-SVC-HASH16 and KUBE-SEP-HASH16.
hash_of() { printf %s "$1" | sha256sum | cut -c1-"$2" | tr a-f A-F; }
declare -A NSVC NEP ISVC ISEP
svc_name() { echo "default/web-$1/tcp/http"; }
for s in $(seq "$SERVICES"); do
  n=$(svc_name "$s")
  NSVC[$s]="service-$(hash_of "$n" 8)-$n"
  ISVC[$s]="KUBE-SVC-$(hash_of "$n" 16)"
  if [ "$s" = 1 ]; then eps=$(seq -f "10.244.0.%g" 1 12); else eps="10.244.1.$s"; fi
  for ep in $eps; do
    NEP[$s,$ep]="endpoint-$(hash_of "${n}__$ep/8080" 8)-${n}__$ep/8080"
    ISEP[$s,$ep]="KUBE-SEP-$(hash_of "$n$ep" 16)"
  done
done
svc_ip() { SVC_IP="10.96.0.$((9 + $1))"; }
endpoints_of() {  # endpoints_of SERVICE STEP: sets EPS, the Service's endpoints at change STEP
  if [ "$1" = 1 ]; then EPS=(10.244.0.1 10.244.0.2 "10.244.0.$((3 + $2 % 10))"); else EPS=("10.244.1.$1"); fi
}
now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

T="ip kube-proxy"
# --- nftables: what pkg/proxy/nftables/proxier.go's syncProxyRules puts in one transaction ---

nft_setup_text() {  # setupNFTables: the base chains, jump chains, sets and maps, all flushed
  echo "add table $T { comment \"rules for kube-proxy\" ; }"
  local name type hook prio c
  while read -r name type hook prio; do
    echo "add chain $T $name { type $type hook $hook priority $prio ; }"
    echo "flush chain $T $name"
  done <<EOF
filter-prerouting filter prerouting -110
filter-input filter input -110
filter-forward filter forward -110
filter-output filter output -110
filter-output-post-dnat filter output -90
nat-prerouting nat prerouting -100
nat-output nat output -100
nat-postrouting nat postrouting 100
EOF
  for c in nodeport-endpoints-check service-endpoints-check firewall-check services \
    masquerading cluster-ips-check mark-for-masquerade; do
    echo "add chain $T $c"
    echo "flush chain $T $c"
  done
  cat <<EOF
add rule $T filter-input ct state new jump nodeport-endpoints-check
add rule $T filter-input ct state new jump service-endpoints-check
add rule $T filter-forward ct state new jump service-endpoints-check
add rule $T filter-output ct state new jump service-endpoints-check
add rule $T filter-prerouting ct state new jump firewall-check
add rule $T filter-output ct state new jump firewall-check
add rule $T nat-output jump services
add rule $T nat-prerouting jump services
add rule $T nat-postrouting jump masquerading
add rule $T filter-forward ct state new jump cluster-ips-check
add rule $T filter-output-post-dnat ct state new jump cluster-ips-check
add rule $T mark-for-masquerade mark set mark or $MASQ
add rule $T masquerading mark and $MASQ == 0 return
add rule $T masquerading mark set mark xor $MASQ
add rule $T masquerading masquerade fully-random
add set $T cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add rule $T cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule $T cluster-ips-check ip daddr { 10.96.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"
add set $T nodeport-ips { type ipv4_addr ; }
delete set $T nodeport-ips
add map $T no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; }
add map $T no-endpoint-nodeports { type inet_proto . inet_service : verdict ; }
add chain $T reject-chain
flush chain $T reject-chain
add rule $T reject-chain reject
add rule $T service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
add rule $T nodeport-endpoints-check ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports
add map $T firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }
add rule $T firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add map $T service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }
add map $T service-nodeports { type inet_proto . inet_service : verdict ; }
add rule $T services ip daddr . meta l4proto . th dport vmap @service-ips
add rule $T services fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports
flush set $T cluster-ips
flush map $T service-ips
flush map $T firewall-ips
flush map $T no-endpoint-services
flush map $T no-endpoint-nodeports
flush map $T service-nodeports
EOF
}

nft_endpoint_rules() {  # nft_endpoint_rules SERVICE EP: the two rules of an endpoint chain
  echo "add rule $T ${NEP[$1,$2]} ip saddr $2 jump mark-for-masquerade"
  echo "add rule $T ${NEP[$1,$2]} meta l4proto tcp dnat to $2:8080"
}

nft_dispatch_rules() {  # nft_dispatch_rules SERVICE CHAIN: the Service chain's rules (EPS set)
  local arms=() i
  svc_ip "$1"
  echo "add rule $T $2 ip daddr $SVC_IP tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade"
  for i in "${!EPS[@]}"; do arms+=("$i : goto ${NEP[$1,${EPS[$i]}]}"); done
  local IFS=,
  echo "add rule $T $2 numgen random mod ${#EPS[@]} vmap { ${arms[*]} }"
}

nft_service_chains() {  # nft_service_chains SERVICE STEP: ensureChain and rules of one Service
  local s=$1 ep
  endpoints_of "$s" "$2"
  for ep in "${EPS[@]}"; do echo "add chain $T ${NEP[$s,$ep]}"; echo "flush chain $T ${NEP[$s,$ep]}"; done
  echo "add chain $T ${NSVC[$s]}"
  echo "flush chain $T ${NSVC[$s]}"
  nft_dispatch_rules "$s" "${NSVC[$s]}"
  for ep in "${EPS[@]}"; do nft_endpoint_rules "$s" "$ep"; done
}

nft_named_map_text() {  # nft_named_map_text STEP: a diagnostic shape (below)
  local ep i
  endpoints_of 1 "$1"
  for ep in "${EPS[@]}"; do echo "add chain $T ${NEP[1,$ep]}"; echo "flush chain $T ${NEP[1,$ep]}"; done
  echo "add chain $T ${NSVC[1]}"
  echo "flush chain $T ${NSVC[1]}"
  svc_ip 1
  echo "add rule $T ${NSVC[1]} ip daddr $SVC_IP tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade"
  echo "add rule $T ${NSVC[1]} numgen random mod ${#EPS[@]} vmap @eps-web-1"
  for ep in "${EPS[@]}"; do nft_endpoint_rules 1 "$ep"; done
  echo "delete element $T eps-web-1 { 2 }"
  echo "add element $T eps-web-1 { 2 : goto ${NEP[1,${EPS[2]}]} }"
}

nft_full_sync_text() {  # nft_full_sync_text STEP
  nft_setup_text
  local s
  for s in $(seq "$SERVICES"); do
    nft_service_chains "$s" "$1"
    svc_ip "$s"
    echo "add element $T cluster-ips { $SVC_IP }"
    echo "add element $T service-ips { $SVC_IP . tcp . 80 : goto ${NSVC[$s]} }"
  done
}

# --- iptables: what pkg/proxy/iptables/proxier.go's syncProxyRules gives iptables-restore ---

ipt_jumps() {  # the jump rules kube-proxy ensures (iptables -I) on a full sync
  cat <<EOF
*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
-I INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-I INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS
-I INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
-I FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-I OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-I OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
-I PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-I OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-I POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
COMMIT
EOF
}

ipt_service_rules() {  # ipt_service_rules SERVICE: KUBE-SVC and KUBE-SEP rules (EPS set)
  local s=$1 svc=${ISVC[$1]} n=${#EPS[@]} i ep pick
  local name; name=$(svc_name "$s")
  svc_ip "$s"
  echo "-A $svc -m comment --comment \"$name cluster IP\" -m tcp -p tcp -d $SVC_IP --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ"
  for i in "${!EPS[@]}"; do
    pick=""
    # kube-proxy's probability 1/(n-i), printed with 10 decimals.
    [ $((i + 1)) -lt "$n" ] && pick="-m statistic --mode random --probability $(awk "BEGIN { printf \"%.10f\", 1 / ($n - $i) }") "
    echo "-A $svc -m comment --comment \"$name -> ${EPS[$i]}:8080\" ${pick}-j ${ISEP[$s,${EPS[$i]}]}"
  done
  for ep in "${EPS[@]}"; do
    echo "-A ${ISEP[$s,$ep]} -m comment --comment $name -s $ep/32 -j KUBE-MARK-MASQ"
    echo "-A ${ISEP[$s,$ep]} -m comment --comment $name -m tcp -p tcp -j DNAT --to-destination $ep:8080"
  done
}

ipt_sync_text() {  # ipt_sync_text STEP FULL STALE_CHAIN...: one iptables-restore --noflush input
  local step=$1 full=$2 s c ep changed=1
  shift 2
  [ "$full" = 1 ] && changed=$(seq "$SERVICES")
  echo "*filter"
  for c in KUBE-SERVICES KUBE-EXTERNAL-SERVICES KUBE-FORWARD KUBE-NODEPORTS KUBE-PROXY-FIREWALL; do echo ":$c - [0:0]"; done
  cat <<EOF
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark $MASQ/$MASQ -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
EOF
  # Declaring a chain under --noflush flushes it: the changed Services' chains (all on a full
  # sync), then the stale ones, flushed so that -X can delete them.
  for s in $changed; do
    echo ":${ISVC[$s]} - [0:0]"
    endpoints_of "$s" "$step"
    for ep in "${EPS[@]}"; do echo ":${ISEP[$s,$ep]} - [0:0]"; done
  done
  for c in "$@"; do echo ":$c - [0:0]"; done
  cat <<EOF
-A KUBE-POSTROUTING -m mark ! --mark $MASQ/$MASQ -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark $MASQ
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark $MASQ
EOF
  for s in $(seq "$SERVICES"); do
    svc_ip "$s"
    echo "-A KUBE-SERVICES -m comment --comment \"$(svc_name "$s") cluster IP\" -m tcp -p tcp -d $SVC_IP --dport 80 -j ${ISVC[$s]}"
  done
  for s in $changed; do
    endpoints_of "$s" "$step"
    ipt_service_rules "$s"
  done
  for c in "$@"; do echo "-X $c"; done
  echo "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS"
  echo "COMMIT"
}

restore() { "${SHAPE%-atomic}-restore" -w 5 --noflush --counters; }

# The atomic iptables shape: no chain a packet may be traversing is flushed. The Service's
# dispatch alternates between two chains (KUBE-SVA-, KUBE-SVB-): each change flushes and fills
# the one no rule points to, adds the new endpoint's KUBE-SEP whole, then replaces (-R) the one
# KUBE-SERVICES rule to point to it; a KUBE-SEP gone is deleted one change later, when the
# chain that still named it is flushed. Nothing else is rewritten.
declare -A ipt_seps=()  # KUBE-SEP chains that exist
ipt_gone_before=""      # the KUBE-SEP of the endpoint gone at the previous change
ipt_atomic_text() {  # ipt_atomic_text STEP
  local step=$1 target ep came gone old
  target="KUBE-SVA-${ISVC[1]#KUBE-SVC-}"
  [ $((step % 2)) = 0 ] && target="KUBE-SVB-${ISVC[1]#KUBE-SVC-}"
  endpoints_of 1 $((step - 1)); gone=${EPS[2]}
  endpoints_of 1 "$step"; came=${EPS[2]}
  echo "*nat"
  echo ":$target - [0:0]"
  if [ -z "${ipt_seps[$came]+x}" ]; then echo ":${ISEP[1,$came]} - [0:0]"; fi
  # ipt_service_rules writes KUBE-SVC's rules: here into the target, endpoints' only when new.
  ipt_service_rules 1 | sed "s/^-A ${ISVC[1]} /-A $target /" | while read -r line; do
    case "$line" in
      "-A KUBE-SEP-"*) [[ "$line" == "-A ${ISEP[1,$came]} "* && -z "${ipt_seps[$came]+x}" ]] && echo "$line" ;;
      *) echo "$line" ;;
    esac
  done
  svc_ip 1
  echo "-R KUBE-SERVICES 1 -m comment --comment \"$(svc_name 1) cluster IP\" -m tcp -p tcp -d $SVC_IP --dport 80 -j $target"
  if [ "$step" = 2 ]; then echo ":${ISVC[1]} - [0:0]"; echo "-X ${ISVC[1]}"; fi
  if [ -n "$ipt_gone_before" ] && [ "$ipt_gone_before" != "$came" ]; then
    echo ":${ISEP[1,$ipt_gone_before]} - [0:0]"
    echo "-X ${ISEP[1,$ipt_gone_before]}"
    unset "ipt_seps[$ipt_gone_before]"
  fi
  echo "COMMIT"
  ipt_seps[$came]=1
  ipt_gone_before=$gone
}

# --- the changes ---

# NFT_SHELL=1: one `nft -i` for every nftables transaction (each one line, as the lab's
# NftShell writes it), answered before the next; else one `nft -f` per transaction, as
# kube-proxy's knftables runs it. The kernel sees the same transactions either way; the shell
# only spares a process per change, for more changes per second on a busy machine.
nft_commit() {  # nft_commit < TRANSACTION
  if [ "${NFT_SHELL:-0}" = 1 ]; then
    tr '\n' ';' >&"${NFT[1]}"
    printf '\ndescribe tcp dport\n' >&"${NFT[1]}"
    local line
    while read -r -u "${NFT[0]}" line; do
      [[ "$line" == *"16 bits"* ]] && return 0
      echo "nft: $line" >&2
    done
    return 1
  fi
  nft -f -
}

declare -A stale=()  # chain -> when it went stale (us); nftables deletes it > 1 s later

delete_stale() {  # a transaction of its own, before the sync's, as kube-proxy's nftables mode
  local now c old=()
  now=$(now_us)
  for c in "${!stale[@]}"; do
    if [ $((now - stale[$c])) -gt 1000000 ]; then old+=("$c"); unset "stale[$c]"; fi
  done
  [ ${#old[@]} -eq 0 ] && return 0
  {
    # nft-atomic's stale Service chains still name stale endpoint chains: emptied first, so that
    # their deletions in any order find no reference (kube-proxy's were flushed when they went
    # stale).
    [[ "$SHAPE" != nft-atomic && "$SHAPE" != nft-element-swap ]] || printf "flush chain $T %s\n" "${old[@]}"
    printf "delete chain $T %s\n" "${old[@]}"
  } >"$TX.stale"
  nft_commit <"$TX.stale"
}

sync_text() {  # sync_text STEP: the sync of SHAPE taking web-1 from STEP-1's endpoints to STEP's
  local step=$1 gone
  endpoints_of 1 $((step - 1)); gone=${EPS[2]}
  case "$SHAPE" in
    nft-kube-proxy) nft_service_chains 1 "$step"; echo "flush chain $T ${NEP[1,$gone]}" ;;
    nft-kube-proxy-full) nft_full_sync_text "$step"; echo "flush chain $T ${NEP[1,$gone]}" ;;
    nft-flush-named-map) nft_named_map_text "$step"; echo "flush chain $T ${NEP[1,$gone]}" ;;
    iptables-*) ipt_sync_text "$step" 0 "${ISEP[1,$gone]}" ;;
  esac
}

one_change() {  # one_change STEP: the Service web-1's endpoints from STEP-1's to STEP's
  local step=$1 gone came chain now
  endpoints_of 1 $((step - 1)); gone=${EPS[2]}
  endpoints_of 1 "$step"; came=${EPS[2]}
  case "$SHAPE" in
    nft-kube-proxy | nft-kube-proxy-full | nft-flush-named-map)
      delete_stale
      unset "stale[${NEP[1,$came]}]"
      nft_commit <"$TX.$((step % 10))"
      stale[${NEP[1,$gone]}]=$(now_us) ;;
    nft-atomic | nft-element-swap)
      delete_stale
      chain="${NSVC[1]}.g$step"
      {
        if [ -z "${stale[${NEP[1,$came]}]+x}" ]; then
          echo "add chain $T ${NEP[1,$came]}"
          nft_endpoint_rules 1 "$came"
        fi
        echo "add chain $T $chain"
        nft_dispatch_rules 1 "$chain"
        if [ "$SHAPE" = nft-element-swap ]; then
          echo "delete element $T service-ips { 10.96.0.10 . tcp . 80 }"
          echo "add element $T service-ips { 10.96.0.10 . tcp . 80 : goto $chain }"
        else
          # The element keeps pointing to the Service's chain, whose one rule jumps to the
          # generation in use: that rule is replaced (a plain rule, no set).
          echo "flush chain $T ${NSVC[1]}"
          echo "add rule $T ${NSVC[1]} goto $chain"
        fi
      } >"$TX.atomic"
      nft_commit <"$TX.atomic"
      unset "stale[${NEP[1,$came]}]"
      # One time for both: the Service chain that names the gone endpoint's must not outlive it.
      now=$(now_us)
      stale[${NEP[1,$gone]}]=$now
      if [ "$step" = 1 ]; then
        [ "$SHAPE" = nft-atomic ] || stale[${NSVC[1]}]=$now
      else
        stale["${NSVC[1]}.g$((step - 1))"]=$now
      fi ;;
    iptables-*-atomic)
      ipt_atomic_text "$step" >"$TX.atomic"
      restore <"$TX.atomic" ;;
    iptables-*) restore <"$TX.$((step % 10))" ;;
  esac
}

case "${1:-}" in
  setup)
    case "$SHAPE" in
      iptables-*) { ipt_jumps | restore; } && ipt_sync_text 0 1 | restore ;;
      nft-flush-named-map)
        {
          nft_full_sync_text 0
          echo "add map $T eps-web-1 { typeof numgen random mod 3 : verdict ; }"
          endpoints_of 1 0
          for i in 0 1 2; do echo "add element $T eps-web-1 { $i : goto ${NEP[1,${EPS[$i]}]} }"; done
          nft_named_map_text 0
        } | nft -f - ;;
      *) nft_full_sync_text 0 | nft -f - ;;
    esac ;;
  churn)
    # The endpoints repeat every 10 changes, and so do the syncs' texts: written once, beforehand,
    # so that the loop only runs the tool (nft -f FILE, iptables-restore <FILE) as kube-proxy does.
    TX="$(dirname "$STOP")/tx"
    if [[ "$SHAPE" != *-atomic ]]; then
      for k in $(seq 0 9); do sync_text $((k + 10)) >"$TX.$k"; done
    fi
    endpoints_of 1 0
    for ep in "${EPS[@]}"; do ipt_seps[$ep]=1; done
    if [ "${NFT_SHELL:-0}" = 1 ] && [[ "$SHAPE" == nft-* ]]; then coproc NFT { nft -i 2>&1; }; fi
    step=0
    start=$(now_us)
    while [ ! -e "$STOP" ]; do
      step=$((step + 1))
      one_change "$step"
      if [ "$CHANGES" -gt 0 ]; then
        wait_us=$((start + step * 1000000 / CHANGES - $(now_us)))
        [ "$wait_us" -le 0 ] || sleep "$(printf '%d.%06d' $((wait_us / 1000000)) $((wait_us % 1000000)))"
      fi
    done
    echo "$step" >"$COUNT" ;;
  *) echo "repro-proxy-sync-loss-rules: error: unknown step '${1:-}' (setup, churn)" >&2; exit 2 ;;
esac
