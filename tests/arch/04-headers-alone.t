#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""04-headers-alone.t - every header compiles alone: a file holding nothing but its #include
passes `cc -fsyntax-only` with the flags the Makefile gives its folder (core/, policy/, each
plugin, the SDK), warnings as errors. A header that leans on what its includers happened to
include before it breaks the day one of them changes its order. The check is shown to fail:
a scratch copy of the tree gets a header that uses a type without including its header, and
that header must be named."""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from tap import Tap  # noqa: E402

TREES = ("core", "policy", "graph", "plugins", "include/ibsm")
CORE_PKGS = ["libibumad", "libibmad", "glib-2.0", "gmodule-2.0", "yaml-0.1"]
POLICY_PLUGINS = ("chain", "torus2qos")   # the engines that link the policy library


def pkg_cflags(pkgs):
    r = subprocess.run(["pkg-config", "--cflags"] + pkgs, capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


def flags(rel, core, glib):
    """The Makefile's include flags for a header of rel's folder."""
    if rel.startswith("core/"):
        return ["-D_GNU_SOURCE", "-Iinclude", "-Icore", "-I."] + core
    if rel.startswith("policy/"):
        return ["-D_GNU_SOURCE", "-Iinclude", "-I."] + glib
    if rel.startswith("graph/"):
        return ["-D_GNU_SOURCE", "-I."]
    if rel.startswith("plugins/"):
        extra = glib if rel.split("/")[1] in POLICY_PLUGINS else []
        return ["-Iinclude", "-Iplugins/common", "-I."] + extra
    return ["-Iinclude"]                  # the SDK sees only itself


def headers(root):
    out = []
    for tree in TREES:
        for d, dirs, files in os.walk(os.path.join(root, tree)):
            dirs[:] = sorted(dirs)
            out += sorted(os.path.relpath(os.path.join(d, f), root) for f in files
                          if f.endswith(".h"))
    return out


def compile_alone(root, rel, core, glib):
    """None when rel compiles alone, else the compiler's first lines."""
    cc = os.environ.get("CC", "cc")
    src = '#include "%s"\n' % os.path.join(root, rel)
    r = subprocess.run([cc, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"] +
                       flags(rel, core, glib) + ["-x", "c", "-"], input=src, cwd=root,
                       capture_output=True, text=True)
    if r.returncode == 0:
        return None
    first = [line for line in r.stderr.splitlines() if "error" in line][:2]
    return "%s: %s" % (rel, " | ".join(first) or "exit %d" % r.returncode)


def check(root, core, glib):
    """(headers checked, [one line per header that does not compile alone])."""
    hs = headers(root)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        bad = [b for b in pool.map(lambda h: compile_alone(root, h, core, glib), hs) if b]
    return hs, bad


tap = Tap(4)
core, glib = pkg_cflags(CORE_PKGS), pkg_cflags(["glib-2.0"])
if core is None or glib is None:
    tap.skip("pkg-config cannot find %s (run make deps)" % " ".join(CORE_PKGS), 4)
    sys.exit(0)

hs, bad = check(ROOT, core, glib)
areas = {h.split("/")[0] if not h.startswith("plugins/") else "/".join(h.split("/")[:2])
         for h in hs}
tap.ok(len(hs) > 80 and {"core", "policy", "include", "plugins/common"} <= areas,
       "the headers of core/, policy/, plugins/ and the SDK are found (%d)" % len(hs))
tap.ok(not bad, "every header compiles alone (cc -fsyntax-only, -Wall -Wextra -Werror)", bad)

# ---- self-check: a header of a scratch copy uses uint8_t and GPtrArray without their headers
work = tempfile.mkdtemp(prefix="ibsm-headers-")
try:
    for tree in ("core", "policy", "plugins", "include"):
        shutil.copytree(os.path.join(ROOT, tree), os.path.join(work, tree))
    with open(os.path.join(work, "core", "mad", "leaning.h"), "w") as f:
        f.write("/* leaning.h - leans on its includers */\n#ifndef LEANING_H\n#define LEANING_H\n"
                "struct leaning {\n\tuint8_t port;\n\tGPtrArray *names;\n};\n#endif\n")
    with open(os.path.join(work, "policy", "numbers.h")) as f:
        text = f.read()
    with open(os.path.join(work, "policy", "numbers.h"), "w") as f:
        f.write(text.replace("#include <stdint.h>\n", ""))
    ok_bad = [compile_alone(work, "core/mad/leaning.h", core, glib),
              compile_alone(work, "policy/numbers.h", core, glib)]
    tap.ok(all(ok_bad) and "core/mad/leaning.h" in ok_bad[0] and "uint8_t" in ok_bad[0],
           "self-check: a new header using uint8_t without <stdint.h> is named", ok_bad[:1])
    tap.ok(all(ok_bad) and "policy/numbers.h" in ok_bad[1],
           "self-check: policy/numbers.h without its #include <stdint.h> is named", ok_bad[1:])
finally:
    shutil.rmtree(work)
