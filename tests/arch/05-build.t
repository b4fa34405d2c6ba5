#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""05-build.t - the build knows what it has done: on a scratch copy of the tree, `make` builds,
a second `make` has nothing to do and `make -q` says the tree is up to date; after a header
changes (touch core/base/log.h) make would compile exactly the objects whose dependency file
names it; a new PREFIX recompiles exactly the files that include the generated ibsm_paths.h
(only those that use its paths include it). Built at -O0 to stay quick. The check is shown to
fail: a copy of the Makefile that regenerates the paths header on every run (as it once did)
must make `make -q` fail."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from tap import Tap  # noqa: E402

TREES = ("Makefile", "core", "graph", "policy", "plugins", "include", "tests/plugins", "tests/tools",
         "tests/clients", "tools")
VARS = ["OPT=-O0"]
JOBS = "-j%d" % min(os.cpu_count() or 2, 4)
COMPILE = re.compile(r"\s-c\s+(\S+\.c)\s+-o\s")


def clean_env():
    """No jobserver or variables of an outer make (make check runs us), no preload."""
    return {k: v for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "LD_PRELOAD")}


def copy_sources(dst):
    for tree in TREES:
        src = os.path.join(ROOT, tree)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dst, tree), symlinks=True,
                            ignore=shutil.ignore_patterns("*.o", "*.so", "*.d", "__pycache__"))
        else:
            shutil.copy2(src, os.path.join(dst, tree))


def make(work, *args):
    r = subprocess.run(["make", "--no-print-directory"] + VARS + list(args), cwd=work,
                       env=clean_env(), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def compiled(out):
    """The sources a make run (or make -n) compiles."""
    return sorted({m.group(1) for line in out.splitlines() for m in [COMPILE.search(line)] if m})


def naming(work, header):
    """The sources whose dependency file (build/{obj,pic}/**/*.d) names header."""
    out = set()
    for top in ("obj", "pic"):
        base = os.path.join(work, "build", top)
        for d, _, files in os.walk(base):
            for f in files:
                if not f.endswith(".d"):
                    continue
                with open(os.path.join(d, f)) as fh:
                    rule = fh.read().split("\n\n")[0]
                if re.search(r"(^|\s)%s(\s|\\|$)" % re.escape(header), rule):
                    out.add(os.path.relpath(os.path.join(d, f[:-2] + ".c"), base))
    return sorted(out)


def including(work, name):
    """The sources of core/ that #include "name" themselves."""
    out = []
    for d, _, files in os.walk(os.path.join(work, "core")):
        for f in files:
            if f.endswith(".c"):
                with open(os.path.join(d, f)) as fh:
                    if re.search(r'^\s*#\s*include\s+"%s"' % re.escape(name), fh.read(), re.M):
                        out.append(os.path.relpath(os.path.join(d, f), work))
    return sorted(out)


tap = Tap(8)
work = tempfile.mkdtemp(prefix="ibsm-build-")
try:
    copy_sources(work)
    t0 = time.time()
    rc, out = make(work, JOBS)
    built = compiled(out)
    if not tap.ok(rc == 0, "make %s builds a fresh copy (%d files compiled, %.0f s)"
                  % (" ".join(VARS), len(built), time.time() - t0),
                  out.splitlines()[-20:] if rc else ()):
        tap.skip("the first make failed", 7)
        sys.exit(0)

    rc, out = make(work)
    tap.ok(rc == 0 and "Nothing to be done for 'all'" in out and not compiled(out) and
           " -o " not in out, "a second make has nothing to do", out.splitlines()[:20])
    rc, out = make(work, "-q")
    tap.ok(rc == 0, "make -q exits 0 (the tree is up to date)", ["exit %d" % rc] + out.splitlines()[:10])

    # a header every layer uses: exactly what includes it, nothing else
    log_h = os.path.join(work, "core", "base", "log.h")
    before = os.stat(log_h)
    os.utime(log_h, (before.st_atime, time.time()))
    rc, out = make(work, "-n")
    want, got = naming(work, "core/base/log.h"), compiled(out)
    tap.ok(rc == 0 and want and got == want and len(got) < len(built),
           "after touch core/base/log.h, make compiles exactly the %d objects whose .d names it "
           "(of %d)" % (len(want), len(built)),
           ["compiled, not naming it: " + s for s in sorted(set(got) - set(want))] +
           ["naming it, not compiled: " + s for s in sorted(set(want) - set(got))])
    os.utime(log_h, (before.st_atime, before.st_mtime))

    # a new PREFIX: the generated paths header changes, and only its includers follow
    rc, out = make(work, "-n", "PREFIX=/opt/ibsm-05-build")
    users = including(work, "ibsm_paths.h")
    want = naming(work, "build/gen/ibsm_paths.h")
    got = compiled(out)
    tap.ok(rc == 0 and users and got == users == want and "ibsm_paths.h" in out,
           "a new PREFIX rewrites ibsm_paths.h and compiles exactly its includers: %s"
           % ", ".join(got), ["compiled: " + " ".join(got), "include it: " + " ".join(users),
                              "their .d name it: " + " ".join(want)])
    rc, out = make(work, "-q")
    rc2, _ = make(work, "-q", "PREFIX=/opt/ibsm-05-build")
    tap.ok(rc == 0 and rc2 == 1, "make -q: 0 for the PREFIX built, 1 for another one",
           ["exit %d and %d" % (rc, rc2)])

    # self-check: the paths header made on every run again
    with open(os.path.join(work, "Makefile")) as f:
        mk = f.read()
    forced = re.sub(r"^ifneq \(\$\(file < \$\(PATHS_H\)\),\$\(PATHS_H_TEXT\)\)\n(.*)\nendif\n",
                    r"\1\n", mk, count=1, flags=re.M)
    with open(os.path.join(work, "Makefile"), "w") as f:
        f.write(forced)
    rc, out = make(work, "-q")
    tap.ok(forced != mk and rc != 0,
           "self-check: with the paths header FORCE'd again, make -q fails (exit %d)" % rc)
    rc, out = make(work, "-n")
    tap.ok(forced != mk and "ibsm_paths.h" in out,
           "self-check: ... and make -n rewrites ibsm_paths.h again",
           [line for line in out.splitlines() if "ibsm_paths.h" in line][:2])
finally:
    shutil.rmtree(work)
