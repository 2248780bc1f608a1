#!/usr/bin/env python3
"""Compares verify's diagnosis with the lab's diagnosis of the same requests.

usage: verify_compare.py LAB_RUN VERIFY_RUN HOLE [--failures-only]

The lab writes LAB_RUN/agents/report.json: the requests verify's agents sent, each joined to the
backend its node's router chose, diagnosed against the lab's exact events. Both must have seen the
same requests and failures (every request joined); verify's count for HOLE must be within 10 % of
the lab's, and HOLE must be there. With --failures-only (agents streaming buckets and only their
failed requests in full, which is all the lab reads back) the successes are not compared. Prints
the counts; exits 1 on any miss.
"""
import json
import sys


def holes(report):
    return {h["id"]: h["requests"] for h in report["holes"]}


def main():
    lab_run, verify_run, hole = sys.argv[1:4]
    failures_only = sys.argv[4:] == ["--failures-only"]
    lab = json.load(open(f"{lab_run}/agents/report.json"))
    verify = json.load(open(f"{verify_run}/report.json"))
    problems = []
    notes = [json.loads(line) for line in open(f"{lab_run}/agents/events.ndjson")]
    if any("not joined" in e.get("detail", "") for e in notes):
        problems.append("the lab could not join every agent request to its router's choice")
    lh, vh = holes(lab), holes(verify)
    lf, vf = lab["load"]["failed"], verify["load"]["failed"]
    print(f"requests: lab {lab['load']['requests']}, verify {verify['load']['requests']}; "
          f"failed: lab {lf}, verify {vf}")
    print(f"holes: lab {lh}, verify {vh}")
    if (not failures_only and lab["load"]["requests"] != verify["load"]["requests"]) or lf != vf:
        problems.append("the lab and verify did not count the same requests and failures")
    lab_n, verify_n = lh.get(hole, 0), vh.get(hole, 0)
    if lab_n == 0:
        problems.append(f"the lab did not name {hole}")
    elif abs(verify_n - lab_n) > 0.1 * lab_n:
        problems.append(f"{hole}: verify {verify_n}, lab {lab_n}: more than 10 % apart")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
