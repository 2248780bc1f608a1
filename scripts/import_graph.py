#!/usr/bin/env python3
"""The import graph of src/: which folder includes which, from the sources' own #include lines.

A node is a folder of src/ (a component, or a room of one: src/lab/pods is "lab/pods"). Prints
every edge with its count and exits 1 when the graph has a circle (two folders that include one
another, directly or through others) or an arrow up (a component including one that the layer
order below puts above it). It also lists the circles between the files of one folder, a file and
its header being one unit (audit.cc including output.h while output.cc includes audit.h is one):
as notes, or as problems with --strict-files. `--dot` prints the folders' graph for Graphviz.

Usage: scripts/import_graph.py [--dot] [--strict-files] [SRC_DIR]
"""
import collections
import pathlib
import re
import sys

# The layers, lowest first (docs/ARCHITECTURE.md): a folder may include any folder of a lower
# layer, and one of its own layer only when no circle forms.
LAYERS = [
    {"base"},
    {"record", "http", "kube"},
    {"kubeapi", "load", "diagnose", "report", "lifecycle", "shim"},
    {"lab", "sim", "audit", "verify"},
    {"watch"},
    {"cli"},
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(src: pathlib.Path):
    return [p for p in sorted(src.rglob("*")) if p.suffix in (".h", ".cc")]


def edges(src: pathlib.Path):
    """(from folder, to folder) -> number of #include lines."""
    found = collections.Counter()
    folders = {str(p.relative_to(src)) for p in src.rglob("*") if p.is_dir()}
    for path in sources(src):
        here = str(path.parent.relative_to(src))
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            there = str(pathlib.PurePosixPath(target).parent)
            if there in folders and there != here:
                found[(here, there)] += 1
    return found


def unit_edges(src: pathlib.Path):
    """Within each folder: unit -> the units of that folder it includes (a unit: a file's path
    without .h/.cc, so a header and its source are one)."""
    graph = collections.defaultdict(set)
    for path in sources(src):
        unit = pathlib.PurePosixPath(path.relative_to(src)).with_suffix("")
        graph[str(unit)]
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            other = pathlib.PurePosixPath(target).with_suffix("")
            if other != unit and other.parent == unit.parent and (src / target).exists():
                graph[str(unit)].add(str(other))
    return graph


def layer(folder: str) -> int:
    top = folder.split("/")[0]
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return -1


def circles(graph):
    """Each strongly connected set of more than one node (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main(argv):
    dot = "--dot" in argv
    strict_files = "--strict-files" in argv
    rest = [a for a in argv if not a.startswith("--")]
    src = pathlib.Path(rest[0] if rest else pathlib.Path(__file__).resolve().parent.parent / "src")
    found = edges(src)
    graph = collections.defaultdict(set)
    for (a, b) in found:
        graph[a].add(b)
        graph[b]
    if dot:
        print("digraph src {")
        for (a, b), n in sorted(found.items()):
            print(f'  "{a}" -> "{b}" [label={n}];')
        print("}")
        return 0
    problems = []
    for (a, b), n in sorted(found.items()):
        up = layer(a) >= 0 and layer(b) > layer(a)
        print(f"{a} -> {b} ({n}){'  UP' if up else ''}")
        if up:
            problems.append(f"arrow up: {a} includes {b} ({n} lines)")
    for part in circles(graph):
        problems.append("circle: " + " <-> ".join(part))
    for part in circles(unit_edges(src)):
        text = "circle between files: " + " <-> ".join(part)
        if strict_files:
            problems.append(text)
        else:
            print(f"import_graph: note: {text}", file=sys.stderr)
    for f in sorted(f for f in graph if layer(f) < 0):
        problems.append(f"folder {f} is in no layer of scripts/import_graph.py")
    for p in problems:
        print(f"import_graph: {p}", file=sys.stderr)
    print(f"{len(graph)} folders, {len(found)} edges, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
