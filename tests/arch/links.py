# SPDX-License-Identifier: BSD-2-Clause
"""links.py - the link graph of ibsm's objects, and its cycles.

Includes can be acyclic while the code is not: a.c calling b.c and b.c calling a.c need no header
of each other's. So the objects of a build are read with nm: an undefined symbol of A that B
defines is an edge A -> B, resolved inside each thing the Makefile links (the daemon: core/,
policy/ and main; each engine: plugins/NAME, plugins/common and policy/). The rule: no strongly
connected set of two or more files.

Usage: python3 links.py [BUILD_DIR]   prints every cycle, exit 1 if any (default: build/).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import includes  # noqa: E402  (its strong_sets)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFINED = set("TDBRGSVWCiu")    # nm's kinds of a symbol defined here (global or weak)


def sources(root, tree):
    """The .c files of one folder of the repository (tree: 'core/*', 'policy', 'plugins/x')."""
    out = []
    top = os.path.join(root, tree.rstrip("/*"))
    if not os.path.isdir(top):
        return out
    deep = tree.endswith("/*")
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(dirs) if deep else []
        out += sorted(os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".c"))
    return out


def object_of(build, src):
    """Where the Makefile puts the object of src (policy/, graph/: the position-independent
    pic/)."""
    folder = "pic" if src.startswith(("policy/", "graph/")) else "obj"
    return os.path.join(build, folder, src[:-2] + ".o")


def units(root, build):
    """{what is linked: [source files]}, as the Makefile links them."""
    policy = sources(root, "policy") + sources(root, "graph")
    out = {"ibsm": sources(root, "core/*") + policy}
    common = sources(root, "plugins/common")
    for name in sorted(os.listdir(os.path.join(root, "plugins"))):
        if name != "common" and os.path.isdir(os.path.join(root, "plugins", name)):
            out["plugins/%s.so" % name] = sources(root, "plugins/" + name) + common + policy
    return out


def symbols(objs):
    """{object: (defined, undefined) global symbols}, from one nm run over objs."""
    out = {o: (set(), set()) for o in objs}
    if not objs:
        return out
    r = subprocess.run(["nm", "-A"] + sorted(objs), capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        obj, _, rest = line.rpartition(":")  # "OBJECT:[VALUE] KIND NAME" (C names hold no ':')
        parts = rest.split()
        if obj not in out:
            continue
        if len(parts) == 2 and parts[0] == "U":
            out[obj][1].add(parts[1])
        elif len(parts) == 3 and parts[1] in DEFINED:
            out[obj][0].add(parts[2])
    return out


def graph(root, build, replace=None):
    """({file: {file: [symbols]}}, [objects missing]) over every unit. replace: {source: object}
    read instead of the build's (a self-check's)."""
    replace = replace or {}
    linked = units(root, build)
    obj_of = {src: replace.get(src) or object_of(build, src) for srcs in linked.values()
              for src in srcs}
    missing = sorted({os.path.relpath(o, build) for o in obj_of.values() if not os.path.isfile(o)})
    syms = symbols([o for o in set(obj_of.values()) if os.path.isfile(o)])
    edges = {}
    for srcs in linked.values():
        have = [(src, syms[obj_of[src]]) for src in srcs if obj_of[src] in syms]
        where = {}
        for src, (defined, _) in have:
            for s in defined:
                where.setdefault(s, src)
        for src, (_, undefined) in have:
            out = edges.setdefault(src, {})
            for s in undefined:
                dst = where.get(s)
                if dst and dst != src:
                    out.setdefault(dst, set()).add(s)
    return {a: {b: sorted(s) for b, s in out.items()} for a, out in edges.items()}, missing


def describe(edges, comp):
    """The lines that name one cycle: its files, then each edge inside it with its symbols."""
    members = set(comp)
    lines = ["cycle of %d files: %s" % (len(comp), " ".join(comp))]
    for a in comp:
        for b, syms in sorted(edges.get(a, {}).items()):
            if b in members:
                more = " and %d more" % (len(syms) - 6) if len(syms) > 6 else ""
                lines.append("  %s -> %s: %s%s" % (a, b, ", ".join(syms[:6]), more))
    return lines


def cycles(root, build, replace=None):
    """([lines describing every cycle], [objects missing], edges)."""
    edges, missing = graph(root, build, replace)
    out = []
    for comp in includes.strong_sets(edges):
        out += describe(edges, comp)
    return out, missing, edges


if __name__ == "__main__":
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    lines, missing, _ = cycles(ROOT, build)
    for m in missing:
        print("not built: " + m)
    for line in lines:
        print(line)
    sys.exit(1 if lines or missing else 0)
