#!/usr/bin/env bash
# Lost connects per endpoint change, per shape of a node's rule update: connects/s x endpoint
# changes/s, each cell one run of scripts/repro-proxy-sync-loss.sh (a namespace of its own,
# nothing of zerodrop). Prints a table: changes made, connects, failed, how many failed connects
# the kernel left untranslated (the evidence set; conntrack SYN_SENT entries where the SYN left
# the node), lost per change and the effective window: lost / (changes x connects/s), the time
# per sync during which a new connect is lost (docs/dataplane-sync.md: the sim's probability is
# this window x the node's connect rate, per sync).
# Usage: bench/dataplane_sync.sh   (SHAPES="nft-kube-proxy nft-kube-proxy-full iptables-nft
#   iptables-legacy nft-atomic iptables-nft-atomic iptables-legacy-atomic none" RATES="1000 3000" CHANGE_RATES="20 0" SECONDS_EACH=30
#   SERVICES=20 NFT_SHELL=0; a change rate 0 = as fast as the tool runs; NFT_SHELL=1: the nftables
#   shapes through one `nft -i`, see the script). Root; skips (exit 0) without it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPRO="$HERE/../scripts/repro-proxy-sync-loss.sh"
SHAPES=${SHAPES:-nft-kube-proxy nft-kube-proxy-full iptables-nft iptables-legacy nft-atomic iptables-nft-atomic iptables-legacy-atomic none}
RATES=${RATES:-1000 3000}
CHANGE_RATES=${CHANGE_RATES:-20 0}
SECONDS_EACH=${SECONDS_EACH:-30}
export SERVICES=${SERVICES:-20}
[ "$(id -u)" = 0 ] || { echo "dataplane_sync: skipped: needs root"; exit 0; }
for tool in nft ip conntrack python3 iptables-nft-restore iptables-legacy-restore; do
  command -v "$tool" >/dev/null || { echo "dataplane_sync: skipped: '$tool' is missing (scripts/setup.sh bench)"; exit 0; }
done

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
echo "NFT_SHELL=${NFT_SHELL:-0}; kernel $(uname -r); $(nft --version); $(iptables-nft-restore --version 2>&1 | head -1);" \
  "$(iptables-legacy-restore --version 2>&1 | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-20s %6s %6s %8s %8s %6s %6s %8s %8s %10s %12s\n' shape conn/s chg/s changes connects \
  failed lost untr-set syn-sent lost/chg window_us
for shape in $SHAPES; do
  for rate in $RATES; do
    for changes in $CHANGE_RATES; do
      if ! line=$(RATE=$rate CHANGES=$changes "$REPRO" "$shape" "$SECONDS_EACH"); then
        printf '%-20s %6d %6s  the reproducer failed (its error above)\n' "$shape" "$rate" "$changes"
        continue
      fi
      made=$(field changes "$line")
      conn=$(field connects "$line")
      failed=$(($(field timeout "$line") + $(field refused "$line") + $(field other "$line")))
      lost=$(field failed_seen_untranslated "$line")
      awk -v s="$shape" -v r="$rate" -v c="$changes" -v m="$made" -v n="$conn" -v f="$failed" \
        -v l="$lost" -v u="$(field untranslated_seen "$line")" \
        -v ss="$(field failed_with_syn_sent_entry "$line")" 'BEGIN {
          per = m > 0 ? sprintf("%.5f", l / m) : "-"
          win = m > 0 ? sprintf("%.4f", l / (m * r) * 1e6) : "-"
          printf "%-20s %6d %6s %8d %8d %6d %6d %8d %8d %10s %12s\n", s, r, (c == 0 ? "max" : c), m, n, f, l, u, ss, per, win
        }'
    done
  done
done
