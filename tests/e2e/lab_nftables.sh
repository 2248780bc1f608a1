#!/usr/bin/env bash
# labels: timing
# cost: 40
# --dataplane nftables: each node a network namespace with kube-proxy's nftables rules, the load
# inside the nodes, each connection's pod read back from conntrack. naive and close-listener fail
# with deregistration-race and nothing unexplained; graceful with a preStop longer than
# propagation passes, while kept-alive connections to a pod every node had removed go on being
# served (conntrack keeps an established flow's DNAT). node's idle closes racing requests are the
# pod's own closes by the kernel's socket trace (keepalive-stale, not no-drain). A SIGKILLed lab
# leaves no veth, route, namespace, rule or conntrack entry: the kernel removes them with its last
# descriptor. Four rollouts and one killed lab, hence the cost. lab_iptables.sh runs the same cases
# (DATAPLANE=iptables) but the idle-close one, whose router code is shared.
DATAPLANE=${DATAPLANE:-nftables}
dp=${DATAPLANE:0:3}  # run folders nft-* or ipt-*
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_common.bash"
source "$(dirname "$0")/lab_common.inc"
[ "$(id -u)" = 0 ] || skip "--dataplane $DATAPLANE needs root"
unshare -n true 2>/dev/null || skip "this host allows no network namespace"
tool=$([ "$DATAPLANE" = nftables ] && echo nft || echo iptables-restore)
command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] \
  || skip "$tool is not installed (scripts/setup.sh test)"
need_example naive

# Without the rules' tool: one line naming the dataplane asked for, the tool and its package.
rc=0
PATH=/nonexistent "$ZERODROP" lab --dataplane "$DATAPLANE" -- true >"$WORK/no-tool.out" 2>&1 \
  || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/no-tool.out"; fail "no $tool: exit $rc, expected 2"; }
expect_grep "^zerodrop: error: --dataplane $DATAPLANE needs $tool \\(.*\\); apt install" \
  "$WORK/no-tool.out"

# run_nft NAME EXAMPLE [lab flags...]: run_lab through the kernel's datapath.
run_nft() {
  local name=$1 example=$2
  shift 2
  run_lab "$name" "$example" --dataplane "$DATAPLANE" "$@"
  # Every pod of every request comes from conntrack, on the kernel's ClusterIP.
  expect_grep "\"dataplane\": *\"$DATAPLANE\"" "$WORK/$name/report.json"
  [ "$(grep -c '"router_applied"' "$WORK/$name/events.ndjson")" -ge 12 ] \
    || { show "$name"; fail "$name: fewer router_applied than 2 nodes x 6 changes"; }
  python3 - "$WORK/$name" <<'PY' || { show "$name"; fail "$name: unjoined requests"; }
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/requests.ndjson")]
unjoined = [r for r in rows if not r.get("backend", "").startswith("pod-")]
# A connect that timed out with no conntrack event naming its pod: seen in about 1 of 25 suite
# runs (docs/lab.md, "A connect the kernel left untranslated": proxy-sync-loss near a commit of its
# node); at most one, nothing else unjoined.
dropped = [r for r in unjoined if r["class"] == "connect_timeout" and not r.get("backend")]
assert len(dropped) <= 1 and len(unjoined) == len(dropped), unjoined[:3]
# A node notes a connection the kernel sent to no pod only for such a request.
notes = [e["detail"] for e in map(json.loads, open(sys.argv[1] + "/events.ndjson"))
         if e["kind"] == "note" and "no pod's address" in e.get("detail", "")]
for n in notes:
    print(n)
port = lambda n: int(re.search(r"client port (\d+)", n).group(1))
assert {port(n) for n in notes} <= {r["local_port"] for r in dropped}, notes
# ... and such a request carries the kernel's failure, which the diagnosis never blames on the app.
untranslated = {port(n) for n in notes if "did not translate" in n}
assert all(r.get("router_error") == "untranslated" for r in dropped
           if r["local_port"] in untranslated), dropped
# The kernel's account of the pods' closes (the socket trace, as root) gives every request the
# pod's end of its connection broke a backend fate, as the l4 router does.
broken = [r for r in rows if r["class"] in ("reset_before_response", "closed_before_response")]
assert all("backend_fate" in r for r in broken), [r for r in broken if "backend_fate" not in r][:3]
PY
}

for example in naive close-listener; do
  run_nft "$dp-$example" "$example" --prestop none
  expect_failures "$dp-$example"
  check_holes "$dp-$example" --has deregistration-race \
    --only deregistration-race,no-drain,keepalive-stale,proxy-sync-loss,unexplained
  # unexplained only for that lost connect, the diagnosis saying so (it names no pod).
  python3 - "$WORK/$dp-$example" <<'PY' || { show "$dp-$example"; fail "$dp-$example: unexplained"; }
import json, sys
d = sys.argv[1]
requests = {r["seq"]: r for r in map(json.loads, open(d + "/requests.ndjson"))}
odd = [f for f in json.load(open(d + "/report.json"))["failed_requests"]
       if f["hole"] == "unexplained" and (requests[f["seq"]]["class"] != "connect_timeout"
                                          or requests[f["seq"]].get("backend"))]
assert not odd, odd[:3]
PY
  # The refused connects kept their source port, so conntrack named their pod.
  [ "$(grep '"class":"connect_refused"' "$WORK/$dp-$example/requests.ndjson" \
    | grep -c '"backend":"pod-')" -gt 0 ] || { show "$dp-$example"; fail "no refused connect named"; }
done

run_nft $dp-graceful graceful --prestop sleep:1500ms
expect_no_failures $dp-graceful
# Kept-alive connections to a pod outlive its removal from every node's rules: requests sent on
# them after the last node applied the pod's termination were still served by it.
python3 - "$WORK/$dp-graceful" <<'PY' || fail "no request served through a removed pod's conntrack entry"
import json, sys
d = sys.argv[1]
applied = {}
for e in map(json.loads, open(d + "/events.ndjson")):
    if e["kind"] == "router_applied" and (e.get("detail") == "removed" or
                                          e.get("conditions", {}).get("terminating")):
        applied.setdefault(e["pod"], {}).setdefault(e["router"], e["t_us"])
gone = {p: max(r.values()) for p, r in applied.items() if len(r) == 2}
stale = [r for r in map(json.loads, open(d + "/requests.ndjson"))
         if r.get("backend") in gone and r["reused"] and not r["failed"]
         and (r["sent_us"] or r["intended_us"]) > gone[r["backend"]]]
print(f"{len(stale)} requests served on kept-alive connections after every node removed their pod")
assert stale
PY

# node's server.close() at SIGTERM closes idle keep-alive connections as requests cross them:
# each such failure is the pod's own close by the kernel's account (idle_closed), so a reused
# connection is keepalive-stale and a new one deregistration-race, never no-drain (node finishes
# what it read). Without the socket trace's fates these read as no-drain.
if [ "$DATAPLANE" != nftables ]; then
  echo "the idle-close case runs under nftables only (the same router code)"
elif command -v node >/dev/null; then
  rc=0
  "$ZERODROP" lab --dataplane nftables --replicas 2 --nodes 2 --propagation 500ms --rate 1000 \
    --connections 32 --warmup 500ms --tail 500ms --readiness tcp --readiness-period 100ms \
    --grace 5s --out "$WORK/nft-node-close" -- node "$(dirname "$0")/servers/node_close.js" \
    '{ip}' '{port}' >"$WORK/nft-node-close.out" 2>"$WORK/nft-node-close.err" || rc=$?
  [ "$rc" = 1 ] || { show nft-node-close; fail "nft-node-close: exit $rc, expected 1"; }
  python3 - "$WORK/nft-node-close" <<'PY' || { show nft-node-close; fail "nft-node-close: fates"; }
import json, sys, collections
d = sys.argv[1]
requests = {r["seq"]: r for r in map(json.loads, open(d + "/requests.ndjson"))}
seen = collections.Counter()
for f in json.load(open(d + "/report.json"))["failed_requests"]:
    r = requests[f["seq"]]
    if r["class"] not in ("reset_before_response", "closed_before_response"):
        continue
    fate = r.get("backend_fate")
    seen[(r["class"], fate, r["reused"], f["hole"])] += 1
    assert fate is not None, f"seq {f['seq']}: no backend fate: {f['reason']}"
    want = "keepalive-stale" if r["reused"] else "deregistration-race"
    assert f["hole"] == want, f"seq {f['seq']}: {f['hole']}, expected {want}: {f['reason']}"
print(dict(seen))
PY
else
  echo "node is not installed: the idle-close case is left out"
fi

# SIGKILL: nothing of the run's network stays behind.
"$ZERODROP" lab --dataplane "$DATAPLANE" --replicas 1 --nodes 2 --warmup 60s \
  --readiness-period 100ms --out "$WORK/killed" -- "$EXAMPLES/naive" --host '{ip}' \
  --port '{port}' >"$WORK/killed.out" 2>&1 &
lab=$!
for _ in $(seq 100); do
  applied=$(grep -c '"router_applied"' "$WORK/killed/events.ndjson" 2>/dev/null || true)
  [ "${applied:-0}" -ge 2 ] && break
  sleep 0.1
done
veths=$(ip -o link show | grep -o "zd${lab}\.[0-9]*\.[0-9]*" | sort -u | tr '\n' ' ')
[ "$(echo "$veths" | wc -w)" = 2 ] || { cat "$WORK/killed.out"; fail "expected 2 veths, got: $veths"; }
prefix=$(grep -o 'pods listen on 10\.[0-9]*\.' "$WORK/killed/events.ndjson" | head -1 | cut -d' ' -f4)
# Seen once in CI: the route missing from the local table while the lab's two veths were there.
# The cause is not known (not seen in 30 runs of this case alone nor in 10 of this script), so ask
# for 2 s, and if it stays missing say whether the lab still runs, what it printed and what the
# table holds.
for _ in $(seq 20); do
  routed=$(ip route show table local 2>/dev/null | grep "^local ${prefix}0.0/17 " || true)
  [ -n "$routed" ] && break
  sleep 0.1
done
if [ -z "$routed" ]; then
  kill -0 "$lab" 2>/dev/null && echo "the lab is running" || echo "the lab has exited"
  cat "$WORK/killed.out"; ip route show table local | grep -v '^local 127\.'
  fail "no local route ${prefix}0.0/17"
fi
sleep 1  # the load runs: conntrack entries in the nodes' namespaces
kill -KILL "$lab"
wait "$lab" 2>/dev/null || true
for _ in $(seq 50); do
  left=$(ip -o link show | grep -o "zd${lab}\.[0-9]*\.[0-9]*" || true)
  left+=$(ip route show table local | grep "^local ${prefix}0.0/17 " || true)
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "the SIGKILLed lab left: $left"
echo "nothing left of the SIGKILLed lab's nodes ($veths, ${prefix}0.0/17)"
