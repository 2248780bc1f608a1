#!/usr/bin/env python3
"""Runs after every other end-to-end test of a build (FIXTURES_CLEANUP in tests/CMakeLists.txt):
no process they started may outlive them. A leftover is a live process, other than this one and
its ancestors, whose environment holds this build's BUILD_DIR and ZERODROP as ctest gave every
end-to-end test (and their children inherit). Each is listed, then killed, and the test fails.
A process still exiting gets 10 s."""
import os
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


def main():
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
    if not found:
        print("no process of this build's end-to-end tests is left")
        return 0
    for pid, command in found:
        print(f"FAIL: left behind by an end-to-end test: pid {pid}: {command}", file=sys.stderr)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return 1


if __name__ == "__main__":
    sys.exit(main())
