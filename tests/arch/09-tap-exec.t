#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""09-tap-exec.t - make check runs its tests through tests/tap-exec: a test that prints
"Bail out!" (GLib's test framework does when an assertion fails) fails alone, and the tests
beside and after it still run and are reported. Checked with prove itself on two scratch tests,
one bailing out and one passing, two at a time as make check runs them; and the Makefile's
prove runs use the wrapper."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from tap import Tap  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
WRAP = os.path.join(ROOT, "tests", "tap-exec")

tap = Tap(4)
with tempfile.TemporaryDirectory(prefix="ibsm-tapexec.") as d:
    tests = {"a-bails.t": '#!/bin/sh\necho 1..3\necho "ok 1"\necho "Bail out! ERROR:x.c:1: assertion failed"\n'
                          'kill -ABRT $$\n',
             "b-passes.t": '#!/bin/sh\necho 1..2\necho "ok 1"\necho "ok 2"\n'}
    paths = []
    for name, text in sorted(tests.items()):
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)
        paths.append(p)
    r = subprocess.run(["prove", "-j2", "-e", WRAP] + paths, capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    tap.ok(r.returncode != 0 and re.search(r"a-bails\.t\s.*Failed", out, re.S),
           "the test that bails out fails", out.splitlines())
    tap.ok(re.search(r"Files=2, Tests=\d+", out) and "Bailout called" not in out,
           "prove does not stop the run: both files are counted", out.splitlines())
    tap.ok(re.search(r"b-passes\.t \.+ ok", out), "the test beside it passes and is reported", out.splitlines())
mk = open(os.path.join(ROOT, "Makefile")).read()
proves = re.findall(r"^\t.*\bprove\b.*$", mk, re.M)
tap.ok(proves and all("-e tests/tap-exec" in p for p in proves),
       "every prove run in the Makefile goes through tests/tap-exec", proves)
