#!/usr/bin/env python3
"""Applies every document `zerodrop audit --fix` printed with `kubectl patch --local`, as its
`# apply:` line says, to the object it names; fails on any document kubectl refuses.

Usage: audit_fix_kubectl.py KUBECTL PATCHES OUT_DIR ROOT
  PATCHES  the --fix output (multi-document YAML)
  OUT_DIR  scratch space; OUT_DIR/after.json is every object of ROOT with the patches applied
           and the new objects added (a List, for a second audit), OUT_DIR/closes.json what each
           workload's patch says it closes
  ROOT     the file or folder the audit read (workload documents name their file as given)
An advice document ("## zerodrop --fix advice", Kubernetes < 1.30: the init container that copies
zerodrop in) is made a patch as it says (`sed 's/^# //'`, ZERODROP_IMAGE set) and applied to the
object its workload's patch produced; OUT_DIR/advised.json lists the objects it gave.
Prints "checked N patches (kinds: …)" on success."""
import concurrent.futures
import copy
import json
import os
import re
import subprocess
import sys

KUBECTL, PATCHES, OUT, ROOT = sys.argv[1:5]
HEAD = re.compile(r"^# zerodrop --fix: (\S+) (\S+) \((.+):(\d+)\)$")
APPLY = re.compile(r"^# apply: kubectl patch ([^/ ]+)/(\S+)(?: -n (\S+))? --type=(\w+) "
                   r"--patch-file=FILE$")
NEW = re.compile(r"^# apply: kubectl apply -f FILE$")
ADVICE_APPLY = re.compile(r"^## apply: kubectl patch ([^/ ]+)/(\S+)(?: -n (\S+))? --type=(\w+) "
                          r"--patch-file=FILE$")


def kubectl(*args):
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, timeout=120)


def objects_of(path):
    """Every object kubectl reads from `path` (a file or a folder, recursively)."""
    r = kubectl("patch", "--local", "-R", "-f", path, "--type=merge", "-p", "{}", "-o", "json")
    if r.returncode != 0:
        sys.exit(f"FAIL: kubectl cannot read {path}: {r.stderr.strip()}")
    out, text, at = [], r.stdout, 0  # one JSON value per object, or a List
    decoder = json.JSONDecoder()
    while text[at:].strip():
        doc, end = decoder.raw_decode(text[at:].lstrip())
        at = len(text) - len(text[at:].lstrip()) + end
        out.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    return out


def yaml_files(root):
    """The files `kubectl -R -f root` reads, in its order (a lexical walk, like Go's filepath.Walk)."""
    if not os.path.isdir(root):
        return [root]
    out = []
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if os.path.isdir(path):
            out.extend(yaml_files(path))
        elif os.path.splitext(entry)[1] in (".json", ".yaml", ".yml"):
            out.append(path)
    return out


def split_by_file(root, objects):
    """`objects` (kubectl's reading of `root`) per file of `root`, keyed by normalised path: each
    file's share is as many objects as PyYAML finds documents in it. None unless both readings
    agree on every object's kind and name, in order (then each file is read with kubectl)."""
    try:
        import yaml
        shares = []
        for path in yaml_files(root):
            kinds = []
            with open(path) as fh:
                for doc in yaml.safe_load_all(fh):
                    if not doc:
                        continue
                    items = (doc.get("items") or []) if doc.get("kind") == "List" else [doc]
                    kinds.extend((o.get("kind"), (o.get("metadata") or {}).get("name"))
                                 for o in items)
            shares.append((os.path.normpath(path), kinds))
    except Exception:  # PyYAML missing, or a file it reads differently from kubectl
        return None
    if [k for _, kinds in shares for k in kinds] != \
            [(o.get("kind"), o.get("metadata", {}).get("name")) for o in objects]:
        return None
    by_file, at = {}, 0
    for path, kinds in shares:
        by_file[path] = copy.deepcopy(objects[at:at + len(kinds)])
        at += len(kinds)
    return by_file


def resource(obj):
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    return obj["kind"].lower() + ("." + group if group else "")


def matches(obj, res, name, ns):
    meta = obj.get("metadata", {})
    return resource(obj) == res and meta.get("name") == name and meta.get("namespace") == ns


def documents(text):
    doc = []
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == "---":
            if doc:
                yield "".join(doc)
            doc = []
        else:
            doc.append(line)
    if doc:
        yield "".join(doc)


def main():
    everything = objects_of(ROOT)
    # One kubectl start per file costs more than the rest of the test: split the whole reading.
    split = split_by_file(ROOT, everything)
    by_file = {}
    jobs = []
    new_docs = []  # the objects to add, read by one kubectl after the loop
    closes = []
    advice = []
    for n, doc in enumerate(documents(open(PATCHES).read())):
        lines = doc.splitlines()
        if lines and lines[0].startswith("## zerodrop --fix advice: "):
            apply = [m for m in map(ADVICE_APPLY.match, lines) if m]
            if len(apply) != 1:
                sys.exit(f"FAIL: advice {n} has no single '## apply: kubectl patch' line:\n{doc}")
            body = "".join(line[2:] + "\n" for line in lines if line.startswith("# "))
            advice.append((n, apply[0].groups(),
                           body.replace("ZERODROP_IMAGE", "registry.example/zerodrop:0.1.0")))
            continue
        if all(not line.strip() or line.startswith("#") for line in lines):
            continue  # "nothing to patch" notes
        if any(NEW.match(line) for line in lines):
            new_docs.append(doc)
            continue
        apply = [m for m in map(APPLY.match, lines) if m]
        if len(apply) != 1:
            sys.exit(f"FAIL: document {n} has no single '# apply: kubectl patch' line:\n{doc}")
        res, name, ns, kind = apply[0].groups()
        head = [m for m in map(HEAD.match, lines) if m]
        if head:  # a workload's patch: its own file names the object
            path = head[0].group(3)
            said = [line[len("# closes: "):] for line in lines if line.startswith("# closes: ")]
            closes.append({"kind": head[0].group(1), "name": head[0].group(2), "namespace": ns,
                           "closes": said[0].split(", ") if said else []})
            if path not in by_file:
                known = split.get(os.path.normpath(path)) if split is not None else None
                by_file[path] = known if known is not None else objects_of(path)
            pool = by_file[path]
        else:  # an HPA or PDB patch: every object of that name
            pool = everything
        targets = [o for o in pool if matches(o, res, name, ns)]
        if not targets:
            sys.exit(f"FAIL: document {n}: no {res}/{name} (namespace {ns}) in the input")
        patch = os.path.join(OUT, f"patch-{n}.yaml")
        with open(patch, "w") as fh:
            fh.write(doc)
        for k, target in enumerate(targets):
            jobs.append((n, k, kind, res, target, patch))

    added = []
    if new_docs:
        new = os.path.join(OUT, "new.yaml")
        with open(new, "w") as fh:
            fh.write("\n---\n".join(d if d.endswith("\n") else d + "\n" for d in new_docs))
        added = objects_of(new)

    def run(job):
        n, k, kind, res, target, patch = job
        obj = os.path.join(OUT, f"object-{n}-{k}.json")
        with open(obj, "w") as fh:
            json.dump(target, fh)
        r = kubectl("patch", "--local", "-f", obj, f"--type={kind}", "--patch-file", patch,
                    "-o", "json")
        if r.returncode != 0:
            return f"kubectl refused document {n} ({res}, --type={kind}): {r.stderr.strip()}\n" \
                   + open(patch).read()
        patched[id(target)] = json.loads(r.stdout)
        return None

    patched = {}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        failures = [f for f in pool.map(run, jobs) if f]
    if failures:
        sys.exit("FAIL: " + "\nFAIL: ".join(failures))
    after = [patched.get(id(o), o) for o in everything] + added
    for files in by_file.values():  # workloads read again from their file: match by identity
        for o in files:
            if id(o) in patched:
                key = (resource(o), o["metadata"].get("name"), o["metadata"].get("namespace"))
                after = [patched[id(o)] if (resource(a), a["metadata"].get("name"),
                                            a["metadata"].get("namespace")) == key else a
                         for a in after]
    advised = []
    for n, (res, name, ns, kind), body in advice:  # after the workload's own patch
        targets = [k for k, o in enumerate(after) if matches(o, res, name, ns)]
        if not targets:
            sys.exit(f"FAIL: advice {n}: no {res}/{name} (namespace {ns}) in the input")
        patch = os.path.join(OUT, f"advice-{n}.yaml")
        with open(patch, "w") as fh:
            fh.write(body)
        for k in targets:
            obj = os.path.join(OUT, f"advised-{n}-{k}.json")
            with open(obj, "w") as fh:
                json.dump(after[k], fh)
            r = kubectl("patch", "--local", "-f", obj, f"--type={kind}", "--patch-file", patch,
                        "-o", "json")
            if r.returncode != 0:
                sys.exit(f"FAIL: kubectl refused advice {n} ({res}, --type={kind}): "
                         f"{r.stderr.strip()}\n{body}")
            advised.append(json.loads(r.stdout))
    with open(os.path.join(OUT, "advised.json"), "w") as fh:
        json.dump(advised, fh)
    with open(os.path.join(OUT, "after.json"), "w") as fh:
        json.dump({"apiVersion": "v1", "kind": "List", "items": after}, fh)
    with open(os.path.join(OUT, "closes.json"), "w") as fh:
        json.dump(closes, fh)
    kinds = sorted({f"{job[3]} ({job[2]})" for job in jobs})
    print(f"checked {len(jobs)} patches (kinds: {', '.join(kinds)})"
          + (f", {len(advised)} advised objects" if advised else ""))


main()
