#!/usr/bin/env python3
"""Runs after every other end-to-end test of a build (FIXTURES_CLEANUP in tests/CMakeLists.txt):
no process they started may outlive them, nor any file in their temporary folder ($TMPDIR, the
build's own, which `leftovers.py --setup` empties before them). A leftover process is a live
process, other than this one and its ancestors, whose environment holds this build's BUILD_DIR
and ZERODROP as ctest gave every end-to-end test (and their children inherit). Each leftover is
listed, then killed or removed, and the test fails. A process still exiting gets 10 s. With
E2E_KEEP=1 (lib.sh keeps a failed test's folder, zd-e2e.XXXXXX) those folders stay, and pass."""
import os
import shutil
import signal
import sys
import time


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def leftovers(marks, skip):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = set(f.read().split(b"\0"))
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if state not in ("Z", "X") and marks <= env:
            found.append((pid, command))
    return found


def tmpdir():
    path = os.environ.get("TMPDIR", "")
    if not os.path.basename(path).startswith("zd-e2e-"):
        sys.exit(f"FAIL: TMPDIR is {path!r}, not a folder of the tests' own (tests/CMakeLists.txt)")
    return path


def kept(name):
    return os.environ.get("E2E_KEEP") == "1" and name.startswith("zd-e2e.")


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def setup():
    path = tmpdir()
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        if not kept(name):
            remove(os.path.join(path, name))
    print(f"the end-to-end tests' temporary folder: {path}")
    return 0


def files_left():
    path = tmpdir()
    try:
        names = sorted(os.listdir(path))
    except FileNotFoundError:
        return 0
    left = [n for n in names if not kept(n)]
    for name in left:
        print(f"FAIL: left behind by an end-to-end test: {os.path.join(path, name)}", file=sys.stderr)
        remove(os.path.join(path, name))
    if len(left) == len(names):
        os.rmdir(path)
    return 1 if left else 0


def main():
    if sys.argv[1:] == ["--setup"]:
        return setup()
    marks = {f"{k}={os.environ[k]}".encode() for k in ("BUILD_DIR", "ZERODROP")}
    skip, pid = set(), os.getpid()
    while pid > 1:
        skip.add(pid)
        pid = parent_of(pid)
    deadline = time.monotonic() + 10
    found = leftovers(marks, skip)
    while found and time.monotonic() < deadline:
        time.sleep(0.2)
        found = leftovers(marks, skip)
    for pid, command in found:
        print(f"FAIL: left behind by an end-to-end test: pid {pid}: {command}", file=sys.stderr)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    status = files_left() | (1 if found else 0)
    if status == 0:
        print("no process or temporary file of this build's end-to-end tests is left")
    return status


if __name__ == "__main__":
    sys.exit(main())
