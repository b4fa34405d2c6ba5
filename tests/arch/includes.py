# SPDX-License-Identifier: BSD-2-Clause
"""includes.py - the include graph of ibsm's sources and the dependency rule it must keep.

The rule (doc/architecture.md):
  * core/ is in layers, bottom up: base, config, mad, fabric, routing, program, sa, perfmgr, sm,
    ops. A file may include headers of its own layer and of layers below it, never above.
  * core/ may include the SDK (include/ibsm), the policy library (policy/) and the graph
    library (graph/).
  * policy/ includes only policy/ and the SDK: nothing of core/ or plugins/.
  * graph/ includes only graph/: algorithms with no knowledge of the SM.
  * plugins/NAME includes only its own folder, plugins/common, the SDK, policy/ and graph/.
  * include/ibsm (the SDK) and examples/ include only the SDK.
  * no cycle anywhere between modules (a module is NAME.c with NAME.h).
Only quoted includes and <ibsm/...> are part of the graph; system headers are not.

Usage: python3 includes.py [ROOT]   prints every violation, exit 1 if any.
"""
import os
import re
import sys

LAYERS = ["base", "config", "mad", "fabric", "routing", "program", "sa", "perfmgr", "sm", "ops"]
TREES = ("core", "policy", "graph", "plugins", "include/ibsm", "examples")
GENERATED = {"ibsm_paths.h"}  # written by make into $(B)/gen
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def source_files(root):
    for tree in TREES:
        top = os.path.join(root, tree)
        for d, dirs, files in os.walk(top):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), root)


def search_path(rel):
    """The -I directories the Makefile gives a file, in order (after the file's own dir)."""
    if rel.startswith(("core/", "policy/", "graph/")):
        return ["include", "core", "."]
    if rel.startswith("plugins/"):
        return ["include", "plugins/common", "."]  # "." for policy/ and graph/
    return ["include"]  # include/ibsm, examples


def resolve(root, rel, kind, name):
    """The repository path an include names, None for a system header, '' if not found."""
    if kind == "<":
        if not name.startswith("ibsm/"):
            return None
        p = os.path.join("include", name)
        return p if os.path.isfile(os.path.join(root, p)) else ""
    if os.path.basename(name) in GENERATED:
        return None
    for d in [os.path.dirname(rel)] + search_path(rel):
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return ""


def module(path):
    return path[:-2] if path.endswith((".c", ".h")) else path


def area(path):
    """('core', layer) | ('policy',) | ('graph',) | ('plugins', name) | ('sdk',) | ('examples',)."""
    parts = path.split("/")
    if parts[0] == "core":
        return ("core", parts[1] if len(parts) > 2 else "")
    if parts[0] == "plugins":
        return ("plugins", parts[1])
    if parts[0] == "include":
        return ("sdk",)
    return (parts[0],)


def edge_allowed(src, dst):
    """None when src may include dst, else why not."""
    a, b = area(src), area(dst)
    if b == ("sdk",):
        return None
    if a[0] == "core":
        if a[1] not in LAYERS:
            return "core/%s is not a known layer (%s)" % (a[1], ", ".join(LAYERS))
        if b[0] in ("policy", "graph"):
            return None
        if b[0] != "core":
            return "core includes %s" % dst
        if b[1] not in LAYERS:
            return "core/%s is not a known layer" % b[1]
        if LAYERS.index(b[1]) > LAYERS.index(a[1]):
            return "layer %s includes layer %s above it" % (a[1], b[1])
        return None
    if a[0] == "policy":
        return None if b[0] == "policy" else "policy/ includes %s" % dst
    if a[0] == "graph":
        return None if b[0] == "graph" else "graph/ includes %s" % dst
    if a[0] == "plugins":
        if b[0] in ("policy", "graph") or (b[0] == "plugins" and b[1] in (a[1], "common")):
            return None
        return "plugin %s includes %s" % (a[1], dst)
    return "%s includes %s (only the SDK is allowed)" % (src, dst)


def graph(root):
    """{file: [(line, included file)]} and a list of unresolved includes."""
    edges, missing = {}, []
    for rel in source_files(root):
        with open(os.path.join(root, rel), errors="replace") as f:
            text = f.read()
        out = []
        for m in INCLUDE_RE.finditer(text):
            dst = resolve(root, rel, m.group(1), m.group(2))
            line = text.count("\n", 0, m.start()) + 1
            if dst == "":
                missing.append("%s:%d: #include %s%s not found" % (rel, line, m.group(1), m.group(2)))
            elif dst:
                out.append((line, dst))
        edges[rel] = out
    return edges, missing


def forbidden(edges):
    bad = []
    for src, out in sorted(edges.items()):
        for line, dst in out:
            why = edge_allowed(src, dst)
            if why:
                bad.append("%s:%d: includes %s: %s" % (src, line, dst, why))
    return bad


def strong_sets(g):
    """Every strongly connected set of two or more nodes of g ({node: nodes it reaches}), each
    sorted (Tarjan's algorithm)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):  # recursive: deep enough for this tree
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            strong(v)
    return comps


def cycles(edges):
    """Every strongly connected set of two or more modules, as one example cycle each."""
    g = {}
    for src, out in edges.items():
        g.setdefault(module(src), set())
        for _, dst in out:
            if module(dst) != module(src):
                g[module(src)].add(module(dst))
                g.setdefault(module(dst), set())
    comps = strong_sets(g)
    out = []
    for comp in comps:
        members = set(comp)
        path = [comp[0]]  # walk inside the component back to the start
        seen = {comp[0]}
        while True:
            nxt = sorted(w for w in g[path[-1]] if w in members)
            back = [w for w in nxt if w == comp[0]]
            if back and len(path) > 1:
                path.append(comp[0])
                break
            fresh = [w for w in nxt if w not in seen]
            if not fresh:
                path.append(nxt[0])
                break
            path.append(fresh[0])
            seen.add(fresh[0])
        out.append(" -> ".join(path))
    return out


def check(root):
    """(missing, forbidden, cycles, unknown layer folders) of the tree at root."""
    edges, missing = graph(root)
    unknown = sorted(d for d in os.listdir(os.path.join(root, "core"))
                     if os.path.isdir(os.path.join(root, "core", d)) and d not in LAYERS)
    return missing, forbidden(edges), cycles(edges), unknown


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    missing, bad, cyc, unknown = check(root)
    for line in missing + bad + ["cycle: " + c for c in cyc] + ["unknown layer core/" + u for u in unknown]:
        print(line)
    sys.exit(1 if missing or bad or cyc or unknown else 0)
