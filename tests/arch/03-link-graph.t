#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""03-link-graph.t - no cycle between files at the link level either (tests/arch/links.py): over
the objects of a build (build/, or $IBSM_BUILD), an undefined symbol of A that B defines is an
edge A -> B, inside the daemon and inside each engine, and no two files reach each other. Two
files can call each other without including each other's headers, so 01-include-graph.t alone
does not see it. The engines export their entry symbol only: the policy parsers they link
stay hidden. The checker is shown to fail: the cycle this rule once removed (the chain policy
parser using the topology parser, which used the chain parser's stanza reader) is put back into
a scratch copy of topo_parse.c, compiled, and must be reported with the symbol that ties it."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import links  # noqa: E402
from tap import Tap  # noqa: E402

BUILD = os.environ.get("IBSM_BUILD") or os.path.join(ROOT, "build")
EXPORTS = {"ibsm_engine", "ibsm_orchestrator"}
tap = Tap(6)
ok = tap.ok

if not os.path.isfile(os.path.join(BUILD, "ibsm")):
    tap.skip("no build at %s (run make)" % BUILD, 6)
    sys.exit(0)

lines, missing, edges = links.cycles(ROOT, BUILD)
ok(not missing, "every source of core/, policy/ and plugins/ has its object in %s"
   % os.path.relpath(BUILD, ROOT), ["not built: " + m for m in missing])
ok(not lines, "no cycle between files at the link level (daemon and engines)", lines)

n_edges = sum(len(out) for out in edges.values())
spans = {src.split("/")[0] for src, out in edges.items() if out}
ok(n_edges > 200 and spans == {"core", "policy", "plugins"} and
   "policy/chain_stanza.c" in edges.get("policy/topo_parse.c", {}),
   "the graph covers the tree (%d files, %d edges; %s)" % (len(edges), n_edges,
                                                           ", ".join(sorted(spans))))

exported = []
plugins_dir = os.path.join(BUILD, "plugins")
for so in sorted(os.listdir(plugins_dir)) if os.path.isdir(plugins_dir) else []:
    path = os.path.join(plugins_dir, so)
    if not so.endswith(".so") or os.path.islink(path):
        continue
    r = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
    names = {p.split()[-1] for p in r.stdout.splitlines() if p.split()}
    if r.returncode != 0 or not names & EXPORTS or names - EXPORTS:
        exported.append("%s exports %s" % (so, " ".join(sorted(names - EXPORTS)) or "nothing"))
ok(os.path.isfile(os.path.join(plugins_dir, "chain.so")) and not exported,
   "each engine exports its entry symbol only (the policy parsers it links stay hidden)",
   exported)

# ---- self-check: put the old cycle back (topo_parse.c calling the chain policy parser)
work = tempfile.mkdtemp(prefix="ibsm-links-")
try:
    for tree in ("policy", "include"):
        shutil.copytree(os.path.join(ROOT, tree), os.path.join(work, tree))
    with open(os.path.join(work, "policy", "topo_parse.c"), "a") as f:
        f.write("\nconst struct chain_step *topo_selfcheck(const struct chain_policy *c);\n"
                "const struct chain_step *topo_selfcheck(const struct chain_policy *c)\n"
                "{\n\treturn chain_policy_find(c, 1);\n}\n")
    glib = subprocess.run(["pkg-config", "--cflags", "glib-2.0"], capture_output=True,
                          text=True).stdout.split()
    obj = os.path.join(work, "topo_parse.o")
    cc = subprocess.run([os.environ.get("CC", "cc"), "-std=gnu11", "-D_GNU_SOURCE", "-fPIC",
                         "-Iinclude", "-I.", *glib, "-c", "policy/topo_parse.c", "-o", obj],
                        cwd=work, capture_output=True, text=True)
    if cc.returncode != 0:
        ok(False, "self-check: the scratch topo_parse.c compiles", cc.stderr.splitlines())
        ok(False, "self-check: the injected cycle is found")
    else:
        ok(True, "self-check: a scratch topo_parse.c calling chain_policy_find() compiles")
        bad, _, _ = links.cycles(ROOT, BUILD, replace={"policy/topo_parse.c": obj})
        ok(any("policy/chain_parse.c" in b and "policy/topo_parse.c" in b for b in bad) and
           any("policy/topo_parse.c -> policy/chain_parse.c: chain_policy_find" in b
               for b in bad),
           "self-check: the injected cycle (topo_parse.c <-> chain_parse.c) is found and "
           "named with its symbols", bad)
finally:
    shutil.rmtree(work)
