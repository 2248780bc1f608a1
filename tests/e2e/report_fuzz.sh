#!/usr/bin/env bash
# labels: offline
# cost: 80
# zerodrop report on corrupted run folders: a hand-made lab run and a sim run, each mutated at
# random (digits changed, numbers made huge or negative, fields dropped, lines cut, bytes
# flipped) many times. Every run must end with exit 0, 1 or 2 within seconds, with a one-line
# "zerodrop: error: FILE:LINE: ..." for input it rejects: never a crash, a hang or an abort.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/setup.sh test)"

python3 "$(dirname "$0")/report_fixture.py" "$WORK/lab"
expect_exit 1 "$ZERODROP" sim --profile lab --nodes 3 --replicas 3 --rate 200 --seed 3 \
  --out "$WORK/sim"

python3 - "$ZERODROP" "$WORK" <<'PY'
import json, os, random, shutil, subprocess, sys

zerodrop, work = sys.argv[1], sys.argv[2]
rng = random.Random(20261130)
HUGE = ["9" * 30, "-" + "9" * 19, "1e308", "-1", "0", "null", "true", '""', "[]", "{}"]


def mutate(text):
    lines = text.splitlines(keepends=True)
    if not lines:
        return "garbage\n"
    i = rng.randrange(len(lines))
    line = lines[i]
    kind = rng.randrange(6)
    if kind == 0:  # a number replaced by something hostile
        digits = [k for k, c in enumerate(line) if c.isdigit()]
        if digits:
            k = rng.choice(digits)
            end = k
            while end < len(line) and line[end].isdigit():
                end += 1
            line = line[:k] + rng.choice(HUGE) + line[end:]
    elif kind == 1:  # a field dropped
        try:
            obj = json.loads(line)
            if isinstance(obj, dict) and obj:
                obj.pop(rng.choice(list(obj)))
                line = json.dumps(obj) + "\n"
        except ValueError:
            pass
    elif kind == 2:  # cut short
        line = line[: rng.randrange(len(line) + 1)]
    elif kind == 3:  # a byte flipped
        k = rng.randrange(len(line))
        line = line[:k] + chr(rng.randrange(1, 256)) + line[k + 1 :]
    elif kind == 4:  # a value of the wrong type
        try:
            obj = json.loads(line)
            if isinstance(obj, dict) and obj:
                obj[rng.choice(list(obj))] = rng.choice([None, "x", [], {}, -1, 2**63, 1.5])
                line = json.dumps(obj) + "\n"
        except ValueError:
            pass
    else:  # a line duplicated far away
        lines.insert(rng.randrange(len(lines) + 1), line)
    lines[i] = line
    return "".join(lines)


runs = errors = 0
for base in ("lab", "sim"):
    src = os.path.join(work, base)
    files = [f for f in os.listdir(src) if f.endswith(".ndjson") or f == "run.json"]
    for n in range(60):
        case = os.path.join(work, f"case-{base}-{n}")
        shutil.rmtree(case, ignore_errors=True)
        shutil.copytree(src, case)
        for _ in range(rng.randrange(1, 4)):
            f = os.path.join(case, rng.choice(files))
            with open(f, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
            with open(f, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(mutate(text))
        try:
            p = subprocess.run([zerodrop, "report", case, "--color", "never"],
                               capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            sys.exit(f"FAIL: zerodrop report hung on {case}")
        runs += 1
        err = p.stderr.decode(errors="replace")
        if p.returncode not in (0, 1, 2):
            sys.exit(f"FAIL: zerodrop report exited {p.returncode} on {case}:\n{err[-2000:]}")
        if p.returncode == 2:
            errors += 1
            lines = err.strip().splitlines()
            if len(lines) != 1 or not lines[0].startswith("zerodrop: error: "):
                sys.exit(f"FAIL: not a one-line error on {case}:\n{err[-2000:]}")
            if "bad_alloc" in err or "std::" in err:
                sys.exit(f"FAIL: an internal exception leaked on {case}: {lines[0]}")
        shutil.rmtree(case)
print(f"ok: {runs} corrupted run folders, {errors} rejected with a one-line error, none crashed")
PY
