#!/usr/bin/env python3
"""Writes a hand-made lab run folder (events.ndjson, requests.ndjson, run.json) for the report
e2e tests: three pods behind three routers, 100 requests/s for 10 s; pod web-0 is deleted at 4 s
with no preStop, exits 10 ms after SIGTERM, and the routers drop it at 4.6, 5.2 and 5.9 s, so
every new connection a router sends it in between is refused (deregistration-race).

usage: report_fixture.py DIR
"""
import json
import os
import sys

US = 1_000_000


def event(t, kind, pod="", router="", **extra):
    e = {"t_us": int(t * US), "kind": kind}
    if pod:
        e["pod"] = pod
    if router:
        e["router"] = router
    e.update(extra)
    return e


def events():
    out = []
    routers = ["node-1", "node-2", "node-3"]
    for pod in ["web-0", "web-1", "web-2"]:
        out += [event(0.0, "pod_created", pod), event(0.0, "pod_started", pod, detail="pid 1"),
                event(0.3, "pod_ready", pod)]
        out += [event(0.4, "router_applied", pod, r,
                      conditions={"ready": True, "serving": True, "terminating": False})
                for r in routers]
    out += [event(3.0, "rollout_started"), event(3.0, "pod_created", "web-3"),
            event(3.5, "pod_ready", "web-3"), event(4.0, "deletion_started", "web-0"),
            event(4.0, "signal_sent", "web-0", signal=15),
            event(4.01, "pod_exited", "web-0", signal=15)]
    for r, t in zip(routers, [4.6, 5.2, 5.9]):
        out.append(event(3.6, "router_applied", "web-3", r,
                         conditions={"ready": True, "serving": True, "terminating": False}))
        out.append(event(t, "router_applied", "web-0", r,
                         conditions={"ready": False, "serving": False, "terminating": True}))
    out.append(event(8.0, "rollout_finished"))
    return sorted(out, key=lambda e: e["t_us"])


def dropped(router_index, t):
    return 4.0 <= t < [4.6, 5.2, 5.9][router_index]


def requests():
    out = []
    for seq in range(1000):
        t = seq / 100.0
        router = seq % 3
        backend = ["web-0", "web-1", "web-2"][(seq // 3) % 3]
        if t >= 4.0 and backend == "web-0" and not dropped(router, t):
            backend = "web-3"
        r = {"seq": seq, "intended_us": int(t * US), "sent_us": int(t * US),
             "first_byte_us": int((t + 0.002) * US), "done_us": int((t + 0.003) * US),
             "class": "ok", "failed": False, "status": 200, "reused": seq > 30,
             "router": f"node-{router + 1}", "backend": backend}
        if backend == "web-0" and dropped(router, t):
            r.update({"class": "connect_refused", "failed": True, "status": 0, "reused": False,
                      "first_byte_us": None, "done_us": int(t * US),
                      "error": "connection refused"})
        out.append(r)
    return out


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "events.ndjson"), "w") as f:
        f.writelines(json.dumps(e) + "\n" for e in events())
    with open(os.path.join(folder, "requests.ndjson"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in requests())
    scenario = {"replicas": "3", "prestop": "none", "grace": "30s", "readiness": "http:/readyz",
                "nodes": "3", "propagation": "0.6s..1.9s", "dataplane": "l4"}
    with open(os.path.join(folder, "run.json"), "w") as f:
        json.dump({"engine": "lab", "scenario": scenario, "end_us": 10 * US}, f)


if __name__ == "__main__":
    main()
