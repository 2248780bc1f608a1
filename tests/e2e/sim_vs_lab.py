#!/usr/bin/env python3
"""sim versus lab, cell by cell: runs `zerodrop lab` on an example app with several seeds and
`zerodrop sim --profile lab` on the same scenario, and compares the failures per hole.

Usage: sim_vs_lab.py ZERODROP BUILD_DIR WORK [--cells APP/KA/RANGE,...] [--seeds 1,2,3]
                     [--sim-seeds N] [--lab-jobs N]
A cell is APP/KA/RANGE: APP one of the example apps, KA `ka` (keep-alive) or `noka`, RANGE
`long` (1s..3s propagation) or `short` (200ms..600ms); `all` is every cell. Prints one table row
per (cell, hole) and exits 1 when the sim's expectation lies outside the lab's band in any cell.

The band of a cell's hole: the spread of the lab seeds, widened to ±15 % of their mean, to at
least the Poisson floor (see FLOOR), and to two standard errors of the seeds' own variation (see
seed_error). The sim's figure is the mean of its expected failures (run.json
`expected.<hole>`) over --sim-seeds seeds: one seed's expectation still depends on that seed's
propagation draws.

--lab-jobs lab runs go side by side (3 by default: a lab run spends its time waiting for its
propagation timers and uses about a tenth of a core, and each lab's pods get addresses of their
own); the sims, which run in virtual time, go two at a time.
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time

APPS = ["naive", "close-listener", "linger", "slow-drain", "warmup-503", "graceful"]
RANGES = {"long": ("1s..3s", 3.0), "short": ("200ms..600ms", 0.6)}

# A cell whose expected count is small is dominated by counting noise: three seeds of a Poisson
# count with mean m spread over about ±2·sqrt(m), and all three can read 0 for m ≈ 1. So a sim
# figure also passes when it is within 2·sqrt(max(lab mean, sim)) + FLOOR of the lab mean; FLOOR
# (3 requests) covers a mean around 1 whose seeds all read 0 or 1.
FLOOR = 3.0
RELATIVE = 0.15

# Three lab seeds are a small sample of a quantity that varies from seed to seed far beyond
# counting noise: with keep-alive, a router fails every request only while every pod it knows
# refuses, a window that exists only when that router's propagation draw is late. naive/ka/long
# measured on 21 lab seeds: mean 370, sd 65; its seeds 1-3 read 314 / 275 / 326 (mean 305, one sd
# low), the sim's 40 seeds 357, sd 53 (370 once its lab profile had the lab's event-driven
# controller). The sim's seeds estimate that variation (three lab seeds do not): the two means
# differ by chance within two standard errors of it, the lab's mean of k seeds (each also a
# Poisson count) and the sim's of n.
def seed_error(sim_values, labs_k, expected):
    n = len(sim_values)
    mean = sum(sim_values) / n
    var = sum((v - mean) ** 2 for v in sim_values) / n
    return 2 * math.sqrt(var / labs_k + var / n + expected / labs_k)

# (app, keep-alive, hole) the sim does not model, with why: printed, never judged.
NOT_MODELLED = {
    ("warmup-503", "ka", "readiness-lies"):
        "the lab's client opens extra keep-alive connections when a request overlaps another, "
        "and those go to the warming new pods and stay there; the sim's pool does not grow "
        "(its kept-alive clients reach new pods through new connections and reconnects only)",
}


def client(rate, duration):
    """The sim's flags for the lab's client: it reuses an idle connection to a router and opens
    one only when none is idle, so a router's pool holds max(1, rate x duration) connections:
    rate / that requests per second on each. `duration` is what one request takes (s)."""
    per_router = rate / 3
    per_connection = per_router / max(1.0, per_router * duration)
    return ["--rate", str(rate), "--request-duration", f"{duration * 1000:g}ms",
            "--connection-rate", f"{per_connection:.3f}"]


def app_scenario(app, build_dir):
    """(lab flags, command, sim flags) describing the app as each engine takes it."""
    exe = os.path.join(build_dir, "examples", app)
    pod = [exe, "--port", "{port}", "--host", "{ip}"]
    instant = 0.001  # the examples answer "/" in well under a millisecond on loopback
    if app in ("naive", "close-listener"):
        lab = ["--replicas", "3", "--rate", "200", "--prestop", "none", "--grace", "5s",
               "--readiness", "http:/readyz"]
        sim = ["--replicas", "3", "--app", app, "--prestop", "none", "--grace", "5s"]
        return lab, pod, sim + client(200, instant)
    if app == "linger":
        lab = ["--replicas", "3", "--rate", "200", "--prestop", "none", "--grace", "10s",
               "--readiness", "http:/readyz"]
        sim = ["--replicas", "3", "--app", "linger", "--linger", "2.5s", "--prestop", "none",
               "--grace", "10s"]
        return lab, pod + ["--linger", "2.5s", "--delay", "50ms"], sim + client(200, 0.05)
    if app == "slow-drain":
        lab = ["--replicas", "2", "--rate", "20", "--connections", "128", "--timeout", "10s",
               "--prestop", "none", "--grace", "1s", "--readiness", "http:/readyz"]
        # Draining takes as long as the requests in flight: 3 s.
        sim = ["--replicas", "2", "--app", "close-listener", "--drain", "3s", "--prestop", "none",
               "--grace", "1s"]
        return lab, pod + ["--delay", "3s"], sim + client(20, 3.0)
    if app == "warmup-503":
        lab = ["--replicas", "2", "--rate", "200", "--prestop", "sleep:2s", "--grace", "10s",
               "--readiness", "tcp"]
        sim = ["--replicas", "2", "--app", "close-listener", "--prestop", "2s", "--grace", "10s",
               "--readiness", "lies", "--warmup", "2s"]
        return lab, pod + ["--warmup", "2s"], sim + client(200, instant)
    if app == "graceful":
        # The example's own --delay (5 s) is the sim's graceful delay.
        lab = ["--replicas", "3", "--rate", "200", "--prestop", "sleep:2s", "--grace", "10s",
               "--readiness", "http:/readyz"]
        sim = ["--replicas", "3", "--app", "graceful", "--prestop", "2s", "--grace", "10s"]
        return lab, pod, sim + client(200, instant)
    raise SystemExit(f"unknown app '{app}'")


def cells_of(text):
    if text == "all":
        return [(a, k, r) for a in APPS for k in ("noka", "ka") for r in ("long", "short")]
    cells = []
    for item in text.split(","):
        parts = item.split("/")
        if len(parts) != 3 or parts[0] not in APPS or parts[1] not in ("ka", "noka") \
                or parts[2] not in RANGES:
            raise SystemExit(f"--cells: expected APP/ka|noka/long|short, got '{item}'")
        cells.append(tuple(parts))
    return cells


def run_lab(args, cell, seed, lab_flags, command, tag=""):
    app, ka, rng = cell
    propagation, longest = RANGES[rng]
    out = os.path.join(args.work, f"lab-{app}-{ka}-{rng}-{seed}{tag}")
    # The tail outlasts the slowest router's update, so every failure of the window is counted.
    # warmup-503's first pods answer 503 for 2 s after they start: the load before the rollout
    # lasts until they serve.
    before = "2.5s" if app == "warmup-503" else "1s"
    flags = ["--nodes", "3", "--propagation", propagation, "--seed", str(seed),
             "--readiness-period", "200ms", "--warmup", before, "--tail", f"{longest + 0.5}s",
             "--dataplane", "l4", "--keepalive" if ka == "ka" else "--no-keepalive", "--out", out]
    with open(out + ".out", "w") as log:
        code = subprocess.call([args.zerodrop, "lab"] + flags + lab_flags + ["--"] + command,
                               stdout=log, stderr=subprocess.STDOUT)
    report = os.path.join(out, "report.json")
    if code > 1 or not os.path.exists(report):
        sys.stdout.write(open(out + ".out").read())
        raise SystemExit(f"{app}/{ka}/{rng}: zerodrop lab --seed {seed} exited {code}")
    return rollout_failures(out)


def rollout_failures(run_dir):
    """Failures per hole among the requests that failed from the rollout's start on: the sim's
    old pods are warm and Ready at its start, while the lab's first pods start with the load."""
    with open(os.path.join(run_dir, "events.ndjson")) as f:
        events = [json.loads(line) for line in f if line.strip()]
    start = min(e["t_us"] for e in events if e["kind"] == "rollout_started") / 1e6
    with open(os.path.join(run_dir, "report.json")) as f:
        failed = json.load(f)["failed_requests"]
    counts = {}
    for r in failed:
        if r["done_s"] >= start:
            counts[r["hole"]] = counts.get(r["hole"], 0) + 1
    return counts


def run_sim(args, cell, seed, sim_flags):
    app, ka, rng = cell
    out = os.path.join(args.work, f"sim-{app}-{ka}-{rng}-{seed}")
    flags = ["--profile", "lab", "--nodes", "3", "--propagation", RANGES[rng][0],
             "--readiness-period", "200ms", "--seed", str(seed), "--out", out]
    if ka == "noka":
        flags.append("--no-keepalive")
    done = subprocess.run([args.zerodrop, "sim"] + flags + sim_flags, capture_output=True,
                          text=True)
    path = os.path.join(out, "run.json")
    if done.returncode > 1 or not os.path.exists(path):
        sys.stdout.write(done.stdout + done.stderr)
        raise SystemExit(f"{app}/{ka}/{rng}: zerodrop sim --seed {seed} exited {done.returncode}")
    with open(path) as f:
        scenario = json.load(f)["scenario"]
    return {k[len("expected."):]: float(v) for k, v in scenario.items()
            if k.startswith("expected.")}


def band(labs):
    mean = sum(labs) / len(labs)
    slack = max(RELATIVE * mean, 0)
    return min(min(labs), mean - slack), max(max(labs), mean + slack), mean


def judge(labs, sims):
    sim = sum(sims) / len(sims)
    lo, hi, mean = band(labs)
    if lo <= sim <= hi:
        return True
    if abs(sim - mean) <= seed_error(sims, len(labs), max(mean, sim)):
        return True
    return abs(sim - mean) <= 2 * math.sqrt(max(mean, sim)) + FLOOR


def compare(cell, labs, sims):
    holes = sorted({h for lab in labs for h in lab} | {h for s in sims for h in s})
    bad = []
    name = "/".join(cell)
    for hole in holes:
        counts = [lab.get(hole, 0) for lab in labs]
        per_seed = [s.get(hole, 0.0) for s in sims]
        expected = sum(per_seed) / len(per_seed)
        if max(counts) == 0 and expected < 0.05:
            continue
        lab_text = " / ".join(str(c) for c in counts)
        why = NOT_MODELLED.get((cell[0], cell[1], hole))
        ok = why is not None or judge(counts, per_seed)
        verdict = "not modelled" if why else "ok" if ok else "OUT"
        print(f"{name:<26} {hole:<20} {lab_text:>18} {expected:>9.1f}  {verdict}", flush=True)
        if not ok:
            bad.append(f"{name} {hole}")
    if not holes or all(max(lab.get(h, 0) for lab in labs) == 0 and
                        sum(s.get(h, 0.0) for s in sims) / len(sims) < 0.05 for h in holes):
        print(f"{name:<26} {'(none)':<20} {'0 / 0 / 0':>18} {0.0:>9.1f}  ok", flush=True)
    return bad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("zerodrop")
    p.add_argument("build_dir")
    p.add_argument("work")
    p.add_argument("--cells", default="all")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--sim-seeds", type=int, default=20)
    p.add_argument("--lab-jobs", type=int, default=3)
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{'cell':<26} {'hole':<20} {'lab (seeds ' + args.seeds + ')':>18} "
          f"{'sim mean':>9}  verdict", flush=True)
    cells = cells_of(args.cells)
    started = time.monotonic()
    labs, sims = {}, {}
    with concurrent.futures.ThreadPoolExecutor(args.lab_jobs) as pool:
        for cell in cells:
            lab_flags, command, _ = app_scenario(cell[0], args.build_dir)
            labs[cell] = [pool.submit(run_lab, args, cell, s, lab_flags, command) for s in seeds]
    print(f"  (lab runs: {time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for cell in cells:
            sim_flags = app_scenario(cell[0], args.build_dir)[2]
            sims[cell] = [pool.submit(run_sim, args, cell, s, sim_flags)
                          for s in range(1, args.sim_seeds + 1)]
    print(f"  (all: {time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    bad = []
    for cell in cells:
        cell_bad = compare(cell, [f.result() for f in labs[cell]], [f.result() for f in sims[cell]])
        if cell_bad:
            # Once more, its seeds one at a time: three labs at once on two busy cores can starve
            # each other (a CI machine's noisy neighbour cut two seeds' counts by a third once).
            # A sim that is off is off again; both verdicts stay printed.
            print(f"  ({'/'.join(cell)} out of band: its lab seeds again, one at a time)",
                  flush=True)
            lab_flags, command, _ = app_scenario(cell[0], args.build_dir)
            again = [run_lab(args, cell, s, lab_flags, command, "-again") for s in seeds]
            cell_bad = compare(cell, again, [f.result() for f in sims[cell]])
        bad += cell_bad
    for (app, ka, hole), why in NOT_MODELLED.items():
        print(f"not modelled: {app}/{ka} {hole}: {why}")
    if bad:
        print("out of band: " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
