#!/usr/bin/env python3
"""Audits every set of the evaluation manifests and compares the findings with the judged ones.

  audit_eval.py check  JUDGED ZERODROP EVAL_DIR   exit 1 on any new, missing or unjudged finding
  audit_eval.py update JUDGED ZERODROP EVAL_DIR   rewrites JUDGED: verdicts kept, new findings
                                                  marked "unjudged", vanished ones reported

JUDGED holds one line per finding the audit made on a set (or made once, then judged wrong and
fixed): `set file kind/name container rule | verdict | reason`, verdict one of
  correct  the finding is true by Kubernetes' semantics (expected present)
  wrong    false, still made (expected present, counted against precision)
  fixed    was made and judged wrong, the rule is fixed (expected absent)
Precision = correct / (correct + wrong). Each set is audited on its own (its objects carry no
namespace, so sets audited together would share one), as a folder, as its users would.
"""
import collections
import json
import os
import subprocess
import sys

VERDICTS = ("correct", "wrong", "fixed", "unjudged")


def audit(zerodrop, eval_dir):
    """Findings as keys "set file kind/name container rule" (a list: a key may repeat)."""
    found = {}
    for name in sorted(os.listdir(eval_dir)):
        path = os.path.join(eval_dir, name)
        if not os.path.isdir(path):
            continue
        run = subprocess.run([zerodrop, "audit", "--format", "json", path],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"{name}: exit {run.returncode}: {run.stderr.strip()}")
        for f in json.loads(run.stdout)["findings"]:
            if f["line"] < 1 or f["column"] < 1 or not f["message"] or not f["fix"]:
                sys.exit(f"{name}: finding without position, message or fix: {f}")
            o = f["object"]
            obj = f"{o.get('kind') or '-'}/{o.get('name') or '-'}"
            key = " ".join([name, os.path.basename(f["file"]), obj, o.get("container") or "-",
                            f["rule"]])
            found.setdefault(key, []).append(f["message"])
    return found


def read_judged(path):
    """[(key, verdict, reason)] in file order; comments and blank lines are skipped."""
    out = []
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|", 2)]
        if len(parts) != 3 or parts[1] not in VERDICTS or len(parts[0].split()) != 5:
            sys.exit(f"{path}:{number}: expected 'set file kind/name container rule | verdict | "
                     f"reason', got: {line}")
        out.append(tuple(parts))
    return out


def present(judged):
    return collections.Counter(k for k, v, _ in judged if v != "fixed")


def check(judged_path, zerodrop, eval_dir):
    judged = read_judged(judged_path)
    got = collections.Counter({k: len(v) for k, v in audit(zerodrop, eval_dir).items()})
    want = present(judged)
    missing = sorted((want - got).elements())
    new = sorted((got - want).elements())
    for key in missing:
        print(f"- {key}    (judged, not found)")
    for key in new:
        print(f"+ {key}    (found, not judged)")
    unjudged = [k for k, v, _ in judged if v == "unjudged"]
    for key in unjudged:
        print(f"? {key}    (verdict missing)")
    verdicts = collections.Counter(v for _, v, _ in judged)
    correct, wrong = verdicts["correct"], verdicts["wrong"]
    print(f"audit_eval: {sum(got.values())} findings on {len(os.listdir(eval_dir))} sets; "
          f"judged {correct} correct, {wrong} wrong, {verdicts['fixed']} fixed; precision "
          f"{100.0 * correct / max(1, correct + wrong):.1f}% (before the fixes "
          f"{100.0 * correct / max(1, correct + wrong + verdicts['fixed']):.1f}%)")
    if missing or new or unjudged:
        print(f"findings differ from {judged_path}: to re-judge, run\n  python3 {sys.argv[0]} "
              f"update {judged_path} {zerodrop} {eval_dir}\nthen give every 'unjudged' line "
              f"its verdict and reason")
        return 1
    return 0


def update(judged_path, zerodrop, eval_dir):
    judged = read_judged(judged_path) if os.path.exists(judged_path) else []
    found = audit(zerodrop, eval_dir)
    header = [l for l in open(judged_path, encoding="utf-8") if l.startswith("#")] \
        if os.path.exists(judged_path) else []
    lines, seen = [], collections.Counter()
    for key, verdict, reason in judged:
        if verdict == "fixed":
            lines.append((key, verdict, reason))
            continue
        seen[key] += 1
        if seen[key] <= len(found.get(key, [])):
            lines.append((key, verdict, reason))
        else:
            print(f"gone: {key} | {verdict} | {reason}", file=sys.stderr)
            if verdict == "wrong":
                lines.append((key, "fixed", reason))
    for key, messages in found.items():
        for message in messages[seen[key]:]:
            lines.append((key, "unjudged", message))
    lines.sort(key=lambda l: l[0].split()[:3])
    with open(judged_path, "w", encoding="utf-8") as out:
        out.writelines(header)
        for key, verdict, reason in lines:
            out.write(f"{key} | {verdict} | {reason}\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("check", "update"):
        sys.exit(__doc__)
    sys.exit({"check": check, "update": update}[sys.argv[1]](*sys.argv[2:]))
