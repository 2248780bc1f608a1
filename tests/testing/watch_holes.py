#!/usr/bin/env python3
"""Compares the holes zerodrop watch named for one rollout with the lab's own report of it.

watch's agents and the lab's load are two samples of the same rollout, at different rates, so a
hole of a few requests in one may be missed by the other; and watch sees a pod's deletion when
the API tells it, while the lab's kubelet acts at once (docs/watch.md, "What watch sees late").
What must hold, and is checked here:
  * every hole watch names, `unexplained` aside, is one the lab names;
  * the lab's largest hole is one watch names (none at all when the lab names none);
  * `unexplained` only for requests sent in the API's observation lag (at most LAG_S) before the
    first pod deletion watch saw, the known limit; anything else unexplained fails.
Exits 1 naming what differs.

Usage: watch_holes.py WATCH_FOLDER LAB_REPORT_JSON [LAG_S (0.3)]
"""
import json
import sys


def main():
    folder, lab_path = sys.argv[1], sys.argv[2]
    lag = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
    watch = json.load(open(f"{folder}/report.json"))
    lab = json.load(open(lab_path))
    w = {h["id"]: h for h in watch["holes"]}
    l = {h["id"]: h["requests"] for h in lab["holes"]}
    print(f"{folder.rsplit('/', 1)[-1]}: watch {({k: h['requests'] for k, h in w.items()})}, lab {l}")
    problems = [f"watch names {hole}, the lab does not" for hole in w
                if hole != "unexplained" and hole not in l]
    if l:
        largest = max(l, key=l.get)
        if largest not in w:
            problems.append(f"watch misses the lab's largest hole {largest}")
    elif w:
        problems.append("watch names holes, the lab none")
    if "unexplained" in w and "unexplained" not in l:
        deletions = []
        for line in open(f"{folder}/events.ndjson"):
            e = json.loads(line)
            if e.get("kind") == "deletion_started":
                deletions.append(e["t_us"] / 1e6)
        u = w["unexplained"]
        first = min(deletions) if deletions else None
        if first is None or not (first - lag <= u["first_s"] and u["last_s"] <= first):
            problems.append(f"unexplained {u['requests']} at {u['first_s']:.3f}..{u['last_s']:.3f} s, "
                            f"not within {lag} s before the first deletion seen ({first})")
    for p in problems:
        print("  " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
