#!/usr/bin/env python3
"""Every source file and every header compiles on its own: what make's two builds cannot tell.

Both builds of the Makefile compile unity batches (a file sees what its batch-mates included)
with clang's precompiled header (every file sees the standard library, fmt, JSON and Asio), so a
file that forgets an #include still builds there and breaks the first build without them (another
compiler, UNITY=OFF, a new batch). This configures DIR (default build-includes) without either,
then runs `clang++ -fsyntax-only` on each source with its own flags, and on each header of src/
and include/ alone. Prints one line per file that fails, with the compiler's first error lines,
and exits 1 if any did.

--headers-only compiles only the headers (about a third of the time): what CI runs, as a header
that forgets an #include breaks every file that includes it first (it found idempotent.h).

Usage: scripts/check_includes.py [DIR] [-j N] [--headers-only]      (make check-includes)
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def configure(build):
    cmd = ["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
           "-DCMAKE_CXX_COMPILER=clang++", "-DZERODROP_PCH=OFF", "-DCMAKE_UNITY_BUILD=OFF",
           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DZERODROP_WERROR=ON"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"check_includes: error: cmake failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")


def syntax_only(command):
    """A compile command with -fsyntax-only in place of producing an object."""
    args = shlex.split(command)
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT"):
            skip = True
        elif a not in ("-c", "-MD"):
            out.append(a)
    return out + ["-fsyntax-only"]


def header_flags(entries):
    """The include paths and macros of every target, for a header compiled alone."""
    flags, seen = [], set()
    for e in entries:
        args = shlex.split(e["command"])
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-I", "-isystem") and i + 1 < len(args):
                pair = (a, args[i + 1])
                if pair not in seen:
                    seen.add(pair)
                    flags += pair
                i += 2
                continue
            if a.startswith(("-I", "-D", "-std=")) and a not in seen:
                seen.add(a)
                flags.append(a)
            i += 1
    return flags


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", nargs="?", default=os.path.join(ROOT, "build-includes"))
    parser.add_argument("-j", type=int, default=os.cpu_count())
    parser.add_argument("--headers-only", action="store_true",
                        help="compile the headers alone, not the sources")
    options = parser.parse_args()

    configure(options.dir)
    with open(os.path.join(options.dir, "compile_commands.json")) as f:
        entries = json.load(f)
    jobs = [] if options.headers_only else \
        [(e["file"], syntax_only(e["command"]), e["directory"]) for e in entries]
    # Headers: only errors count (a header alone warns of what its includer uses, e.g. an
    # unused constant), and `#pragma once` in the main file is what compiling it alone means.
    flags = header_flags(entries)
    for top in ("src", "include"):
        for base, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                if name.endswith(".h"):
                    path = os.path.join(base, name)
                    jobs.append((path, ["clang++", "-x", "c++", "-fsyntax-only",
                                        "-Wno-pragma-once-outside-header"] + flags + [path],
                                 ROOT))

    def run(job):
        path, cmd, cwd = job
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        return path, r.returncode, r.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(options.j) as pool:
        for path, rc, err in pool.map(run, jobs):
            if rc != 0:
                failed += 1
                print(f"check_includes: {os.path.relpath(path, ROOT)} does not compile alone:")
                print("\n".join("  " + line for line in err.splitlines()[:8]))
    print(f"check_includes: {len(jobs)} files, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
