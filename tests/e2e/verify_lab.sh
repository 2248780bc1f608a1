#!/usr/bin/env bash
# zerodrop verify end to end against `zerodrop lab --kube-api`: the real kubectl proxy, the lab's
# HTTPS API with its token, verify's restart patch driving the lab's rollout, and verify's agents:
# an Indexed Job the lab runs as `zerodrop verify-agent` processes, one per node, each loading the
# Service through its node's router; verify follows their logs, merges their records and deletes
# the Job. The lab reads the same agents' requests back from their logs, joins each to the backend
# its router chose and diagnoses them with its exact events (RUN/agents): verify's count of each
# example's hole must be within 10 % of the lab's. naive (dies at SIGTERM, no preStop) and
# close-listener (closes its listener at SIGTERM) are deregistration-race, linger (serves on
# after SIGTERM, never says Connection: close) under keep-alive agents is keepalive-stale; verify's
# per-node estimate of when each router stopped sending to each deleted pod contains the lab's
# exact time; graceful with a preStop sleep longer than the propagation passes both.
# labels: timing
# cost: 50
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example naive
need_example graceful
need_example close-listener
need_example linger
command -v kubectl >/dev/null || skip "no kubectl on this host"
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# verify_lab NAME EXAMPLE [lab flags...] -- [example flags...]: a lab that waits for a client,
# and verify (with the flags in $verify_flags) as that client. Exit codes in $lab_rc and
# $verify_rc.
verify_flags=()
verify_lab() {
  local name=$1 example=$2; shift 2
  local lab_flags=() app_flags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do lab_flags+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  app_flags=("$@")
  local run="$WORK/$name-lab"
  timeout 180 "$ZERODROP" lab --kube-api --action none --replicas 2 --nodes 3 \
    --propagation 500ms --rate 50 --connections 16 --warmup 500ms --tail 5s \
    --readiness http:/readyz --readiness-period 100ms --readiness-failure 1 --grace 10s \
    --out "$run" "${lab_flags[@]}" -- "$EXAMPLES/$example" --host '{ip}' --port '{port}' \
    "${app_flags[@]}" >"$WORK/$name-lab.out" 2>"$WORK/$name-lab.err" &
  local lab=$!
  wait_for_kube_api "$lab" "$WORK/$name-lab.err"
  local kc="$run/kubeconfig"
  [ -f "$kc" ] || { cat "$WORK/$name-lab.err"; fail "no kubeconfig in the lab's run folder"; }
  verify_rc=0
  timeout 120 "$ZERODROP" verify deploy/web --kubeconfig "$kc" --agent-image zerodrop:lab \
    --rate 150 --warmup 1s --tail 2s --rollout-timeout 60s --out "$WORK/$name-verify" \
    "${verify_flags[@]}" \
    >"$WORK/$name-verify.out" 2>"$WORK/$name-verify.err" || verify_rc=$?
  lab_rc=0
  wait "$lab" || lab_rc=$?
}
# compare NAME HOLE [--failures-only]: verify named HOLE as often as the lab did over the same
# requests (±10 %).
compare() {
  python3 "$(dirname "$0")/verify_compare.py" "$WORK/$1-lab" "$WORK/$1-verify" "$2" ${3:-} \
    >"$WORK/$1-compare" || { cat "$WORK/$1-compare"; show_both "$1"; fail "$1: verify and the lab differ"; }
  sed "s/^/$1: /" "$WORK/$1-compare"
}
show_both() {
  for f in "$1-verify.out" "$1-verify.err" "$1-lab.out" "$1-lab.err"; do
    echo "--- $f"; tail -40 "$WORK/$f"
  done
}

verify_lab naive naive
[ "$verify_rc" = 1 ] || { show_both naive; fail "verify of naive exited $verify_rc, expected 1"; }
[ "$lab_rc" = 1 ] || { show_both naive; fail "the lab of naive exited $lab_rc, expected 1"; }
expect_grep '"id": *"deregistration-race"' "$WORK/naive-verify/report.json"
expect_grep '"id": *"deregistration-race"' "$WORK/naive-lab/report.json"
expect_grep '"engine": *"verify"' "$WORK/naive-verify/run.json"
for kind in rollout_started rollout_finished deletion_started pod_exited endpoint_changed; do
  expect_grep "\"kind\":\"$kind\"" "$WORK/naive-verify/events.ndjson"
done
expect_exit 1 "$ZERODROP" report "$WORK/naive-verify"
# naive runs the default agent stream: buckets per backend per 100 ms and every failed request in
# full; the lab reads back only those failures, so only they are compared. Every agent's own count
# equals what verify merged from its stream, and the report counts the successes from the buckets.
compare naive deregistration-race --failures-only
[ "$(grep -c '"detail":"agent zerodrop-verify-[^"]*: [0-9]* requests, [0-9]* failed; its stream delivered each' \
  "$WORK/naive-verify/events.ndjson")" = 3 ] || fail "an agent's count differs from verify's"
! grep -q 'of its stream are missing' "$WORK/naive-verify/events.ndjson" || fail "a gap in an agent's stream"
[ -s "$WORK/naive-verify/buckets.ndjson" ] || fail "no buckets.ndjson in verify's run folder"
python3 - "$WORK/naive-verify" <<'PY' || fail "verify's report does not count the bucketed successes"
import json, sys
run = sys.argv[1]
ok = sum(json.loads(l)["requests"] for l in open(f"{run}/buckets.ndjson"))
failed = sum(1 for l in open(f"{run}/requests.ndjson") if json.loads(l).get("failed"))
load = json.load(open(f"{run}/report.json"))["load"]
agents = [json.loads(l)["detail"] for l in open(f"{run}/events.ndjson") if "its stream delivered each" in l]
said = sum(int(d.split(": ")[1].split(" ")[0]) for d in agents)
print(f"naive default stream: {ok} ok in buckets, {failed} failed in full; report {load['requests']}; agents {said}")
sys.exit(0 if load["requests"] == ok + failed == said and load["failed"] == failed else 1)
PY
# The agents: one per node, every request through a node's router, the Job deleted at the end
# (the lab sent each agent SIGTERM; each said bye and exited 0).
[ "$(grep -c '"detail":"agent zerodrop-verify-.* is loading' "$WORK/naive-verify/events.ndjson")" = 3 ] \
  || fail "verify did not hear from 3 agents"
[ -z "$(grep -v '"router":"node/node-[123]"' "$WORK/naive-verify/requests.ndjson" | head -1)" ] \
  || fail "a request did not go through a node's router"
expect_grep 'a client deleted job zerodrop-verify-[a-z0-9]+ \(Background\)' "$WORK/naive-lab/events.ndjson"
[ "$(grep -Ec 'job pod zerodrop-verify-[a-z0-9]+-[0-2]-[a-z0-9]+ on node-[123]: exit code 0' \
  "$WORK/naive-lab/events.ndjson")" = 3 ] || fail "the agents did not all exit 0 after the Job's deletion"
python3 "$(dirname "$0")/verify_propagation.py" "$WORK/naive-lab" "$WORK/naive-verify" 3 \
  >"$WORK/propagation" || { cat "$WORK/propagation"; fail "verify's per-node estimate missed the lab's truth"; }
cat "$WORK/propagation"

# close-listener: refuses new connections from its SIGTERM on and drains the rest. Its agents
# stream every request (--agent-records all), so the lab compares every one.
verify_flags=(--agent-records all)
verify_lab close-listener close-listener
verify_flags=()
[ "$verify_rc" = 1 ] || { show_both close-listener; fail "verify of close-listener exited $verify_rc, expected 1"; }
[ "$lab_rc" = 1 ] || { show_both close-listener; fail "the lab of close-listener exited $lab_rc, expected 1"; }
compare close-listener deregistration-race

# linger: keep-alive agents hold connections pinned to a pod that serves on after its routers
# dropped it, until it exits 2.5 s after SIGTERM without ever saying Connection: close; 30 % of
# their requests close their connection, so that new ones bound each node's update.
verify_flags=(--keepalive --fresh 40% --agent-records all)
verify_lab linger linger -- --linger 3s --delay 200ms
verify_flags=()
[ "$verify_rc" = 1 ] || { show_both linger; fail "verify of linger exited $verify_rc, expected 1"; }
compare linger keepalive-stale

verify_lab graceful graceful --prestop sleep:1.5s -- --delay 1s
[ "$verify_rc" = 0 ] || { show_both graceful; fail "verify of graceful exited $verify_rc, expected 0"; }
[ "$lab_rc" = 0 ] || { show_both graceful; fail "the lab of graceful exited $lab_rc, expected 0"; }
expect_grep '"failed": *0,' "$WORK/graceful-verify/report.json"
expect_grep '"verdict": *"pass"' "$WORK/graceful-lab/agents/report.json"
# The live Deployment carries the preStop: verify infers each stop signal 1.5 s after the deletion.
expect_grep 'inferred: deletion seen \+ preStop 1.5s' "$WORK/graceful-verify/events.ndjson"
[ -z "$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'zerodrop-verify.*')" ] \
  || fail "a private kubectl folder was left behind"
grep -h "^FAIL\|^PASS\|^ok\|deregistration-race ·" "$WORK"/*-verify.out "$WORK"/*-lab.out || true
echo PASS
