#!/usr/bin/env python3
"""Compares verify's per-node propagation estimates with the lab's exact router update times.

usage: verify_propagation.py LAB_RUN VERIFY_RUN NODES

For every node, every interval verify bounded (propagation.ndjson: lo and hi, wall-clock µs) must
contain the moment the lab's router on that node stopped sending new connections to the pod
(its first router_applied event marking the pod terminating), and each of the NODES nodes must
have at least one bounded interval. Prints each comparison; exits 1 on any miss.
"""
import json
import sys

SLACK_US = 1000  # two clocks read on one host, each converted from steady time: ±1 ms


def main():
    lab_run, verify_run, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start = int(json.load(open(f"{lab_run}/run.json"))["scenario"]["kube_api_start_wall_us"])
    truth = {}
    for line in open(f"{lab_run}/events.ndjson"):
        e = json.loads(line)
        if e["kind"] != "router_applied" or "conditions" not in e:
            continue
        if e["conditions"]["terminating"]:
            truth.setdefault((e["router"], e["pod"]), start + e["t_us"])
    bounded = set()
    problems = []
    for line in open(f"{verify_run}/propagation.ndjson"):
        u = json.loads(line)
        node = u["node"].removeprefix("node/")
        applied = truth.get((node, u["pod"]))
        if applied is None or u["hi_wall_us"] is None:
            continue
        lo, hi = u["lo_wall_us"], u["hi_wall_us"]
        ok = lo - SLACK_US <= applied <= hi + SLACK_US
        print(f"{node} {u['pod']}: verify [{(lo - start) / 1e6:.3f}, {(hi - start) / 1e6:.3f}] s, "
              f"lab {(applied - start) / 1e6:.3f} s {'ok' if ok else 'MISS'}")
        bounded.add(node)
        if not ok:
            problems.append(f"{node} {u['pod']}")
    if len(bounded) < nodes:
        problems.append(f"only {len(bounded)} of {nodes} nodes have a bounded estimate")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
