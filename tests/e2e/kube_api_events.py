#!/usr/bin/env python3
"""Compares what `zerodrop lab --kube-api` served over a whole run with the lab's own record.

usage: kube_api_events.py RUN_DIR PODS_WATCH SLICES_WATCH

The watch files hold the raw watch streams (kubectl get --raw '...?watch=1&resourceVersion=1'),
started before the rollout and ended by the lab's exit. The API's one resourceVersion counter
orders changes across resources, so the merged watch must show, in the lab's order: every pod
deletion (deletionTimestamp appears), every pod object removed, and every EndpointSlice endpoint
change, each slice change stamped with the lab's own time of the endpoint change (to the µs).
Prints one line per disagreement and exits 1 on any.
"""
import json
import sys
from datetime import datetime, timezone


def watch_events(path, resource):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            event = json.loads(line)
            if event["type"] not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            obj = event["object"]
            out.append((int(obj["metadata"]["resourceVersion"]), resource, event["type"], obj))
    return out


def wall_us(text):
    whole, frac = text.rstrip("Z").split(".")
    t = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(t.timestamp()) * 1000000 + int(frac.ljust(6, "0"))


def main():
    run, pods_file, slices_file = sys.argv[1:4]
    meta = json.load(open(f"{run}/run.json"))
    start = int(meta["scenario"]["kube_api_start_wall_us"])
    # The API stops when the run ends, before the lab kills its last pods: the teardown is not
    # served.
    lab = [json.loads(l) for l in open(f"{run}/events.ndjson") if l.strip()]
    lab = [e for e in lab if e["t_us"] <= meta["end_us"]]
    workload = {e["pod"] for e in lab if e["kind"] == "pod_created"}

    # The lab's side: deletions, endpoint changes, pods removed, in its order.
    want = []
    for e in lab:
        if e["kind"] == "deletion_started":
            want.append(("deleted", e["pod"], None))
        elif e["kind"] == "endpoint_changed":
            c = e.get("conditions")
            state = "removed" if e.get("detail") == "removed" else (
                c["ready"], c["serving"], c["terminating"])
            if state == "removed":
                want.append(("gone", e["pod"], None))  # the pod object goes, then its endpoint
            want.append(("endpoint", e["pod"], state, e["t_us"]))

    # The API's side, merged by resourceVersion.
    served = sorted(watch_events(pods_file, "pods") + watch_events(slices_file, "slices"),
                    key=lambda x: x[0])
    got = []
    marked = set()
    endpoints = {}  # pod -> state, over every slice
    slice_pods = {}  # slice name -> its pods
    for rv, resource, kind, obj in served:
        name = obj["metadata"]["name"]
        if resource == "pods":
            if name not in workload:
                continue  # a Job's pod: not in the workload's record
            if obj["metadata"].get("deletionTimestamp") and name not in marked:
                marked.add(name)
                got.append(("deleted", name, None))
            if kind == "DELETED":
                got.append(("gone", name, None))
            continue
        now = {}
        if kind != "DELETED":
            for ep in obj["endpoints"]:
                c = ep["conditions"]
                now[ep["targetRef"]["name"]] = (c["ready"], c["serving"], c["terminating"])
        trigger = obj["metadata"].get("annotations", {}).get(
            "endpoints.kubernetes.io/last-change-trigger-time")
        changes = []
        for pod in sorted(set(slice_pods.get(name, ())) | set(now)):
            state = now.get(pod, "removed")
            if endpoints.get(pod) != state:
                endpoints[pod] = state
                changes.append(pod)
        slice_pods[name] = set(now)
        for pod in changes:
            # A slice deleted (its last endpoint gone) carries its last state, not a new time.
            at = wall_us(trigger) - start if trigger and kind != "DELETED" else None
            got.append(("endpoint", pod, endpoints[pod], at))

    problems = []
    wi = [w[:3] for w in want]
    gi = [g[:3] for g in got]
    if wi != gi:
        for i, (a, b) in enumerate(zip(wi, gi)):
            if a != b:
                problems.append(f"change {i}: the lab recorded {a}, the API served {b}")
                break
        if len(wi) != len(gi):
            problems.append(f"the lab recorded {len(wi)} changes, the API served {len(gi)}")
    for w, g in zip(want, got):
        if w[0] == "endpoint" and w[:3] == g[:3] and g[3] is not None and g[3] != w[3]:
            problems.append(f"{w[1]} {w[2]}: the lab changed it at {w[3]} µs, the slice says {g[3]}")
    for p in problems:
        print(p)
    deletions = sum(1 for w in want if w[0] == "deleted")
    slices = sum(1 for w in want if w[0] == "endpoint")
    print(f"compared {len(want)} changes: {deletions} pod deletions, {slices} endpoint changes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
