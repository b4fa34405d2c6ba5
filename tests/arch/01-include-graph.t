#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""01-include-graph.t - the dependency rule of doc/architecture.md, checked on the sources: every
include resolves, no layer includes one above it, policy/ and plugins/ include nothing of core/,
and no two modules include each other through any chain. The checker is shown to fail: a scratch
copy of the tree gets a cycle and a forbidden edge, and both must be reported by name."""
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import includes  # noqa: E402
from tap import Tap  # noqa: E402

ok = Tap(7).ok
missing, bad, cyc, unknown = includes.check(ROOT)
ok(not unknown, "every folder of core/ is a layer of the rule", unknown)
ok(not missing, "every quoted include resolves", missing)
ok(not bad, "no include against the layer rule (core up, policy/plugins into core)", bad)
ok(not cyc, "no include cycle between modules", cyc)

edges, _ = includes.graph(ROOT)
layers_seen = sorted({includes.area(f)[1] for f in edges if f.startswith("core/")})
ok(len(edges) > 50 and len(layers_seen) >= 7,
   "the graph covers the tree (%d files, layers %s)" % (len(edges), ", ".join(layers_seen)))


def scratch_copy():
    d = tempfile.mkdtemp(prefix="ibsm-includes-")
    for tree in ("core", "policy", "plugins", "include", "examples"):
        src = os.path.join(ROOT, tree)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(d, tree))
    return d


def append_include(root, path, header):
    with open(os.path.join(root, path), "a") as f:
        f.write('\n#include "%s"\n' % header)


# A cycle inside one layer: pass.h is included by portinfo.h; make it include portinfo.h back.
d = scratch_copy()
try:
    append_include(d, "core/program/pass.h", "program/portinfo.h")
    _, bad2, cyc2, _ = includes.check(d)
    ok(any("core/program/pass" in c and "core/program/portinfo" in c for c in cyc2) and not bad2,
       "self-check: an injected cycle (program/pass.h -> program/portinfo.h) is found and named",
       cyc2 + bad2)
finally:
    shutil.rmtree(d)

# A forbidden edge: the fabric model including the SM's state, and a policy parser the log.
d = scratch_copy()
try:
    append_include(d, "core/fabric/model.h", "sm/sm.h")
    append_include(d, "policy/partitions_parse.c", "base/log.h")
    _, bad3, _, _ = includes.check(d)
    ok(any("core/fabric/model.h" in b and "above it" in b for b in bad3) and
       any("policy/partitions_parse.c" in b and "core/base/log.h" in b for b in bad3),
       "self-check: injected forbidden edges (fabric -> sm, policy -> core) are found and named",
       bad3)
finally:
    shutil.rmtree(d)
