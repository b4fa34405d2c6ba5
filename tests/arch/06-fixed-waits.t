#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""06-fixed-waits.t - the simulated tests wait for events, not for a time (doc/testing.md,
"Waiting in tests"): in tests/sim and tests/sanitized every time.sleep() is the pause of a
polling loop (inside a while or for) or an observation window marked as such (the words
"observation window" on its line or the line above: a window in which something must NOT
happen, never a wait before checking that something did); and every deadline of a wait is
taken with the harness's h.deadline()/h.patience() (scaled by IBSM_TEST_SLOW; a child script
without the harness reads IBSM_TEST_SLOW itself) unless it is a schedule, marked "schedule"
(how long a fault is kept on, not a bound on a wait)."""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from tap import Tap  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))

FILES = sorted(glob.glob(os.path.join(ROOT, "tests", "sim", "*.t")) +
               glob.glob(os.path.join(ROOT, "tests", "sim", "*.py")) +
               glob.glob(os.path.join(ROOT, "tests", "sanitized", "*.t")))
HARNESS = os.path.join(ROOT, "tests", "sim", "harness.py")


def in_loop(lines, i):
    """Line I is in the body of a while/for (of its own function)."""
    cur = len(lines[i]) - len(lines[i].lstrip())
    for j in range(i - 1, -1, -1):
        s = lines[j]
        if not s.strip() or s.lstrip().startswith("#"):
            continue
        k = len(s) - len(s.lstrip())
        if k < cur:
            if re.match(r"\s*(while|for)\b", s):
                return True
            if re.match(r"\s*(def|class)\b", s) or k == 0:
                return False
            cur = k
    return False


def marked(lines, i, word):
    return word in lines[i] or (i > 0 and word in lines[i - 1])


sleeps, deadlines = [], []
for path in FILES:
    rel = os.path.relpath(path, ROOT)
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        code = line.split("#", 1)[0]
        if re.search(r"\btime\.sleep\(", code) and not in_loop(lines, i) \
                and not marked(lines, i, "observation window"):
            sleeps.append("%s:%d: %s" % (rel, i + 1, line.strip()))
        if path != HARNESS and re.search(r"\btime\.time\(\)\s*\+", code) \
                and not marked(lines, i, "schedule") and "IBSM_TEST_SLOW" not in line:
            deadlines.append("%s:%d: %s" % (rel, i + 1, line.strip()))

tap = Tap(3)
tap.ok(len(FILES) > 50, "the simulated tests are found (%d files)" % len(FILES))
tap.ok(not sleeps, "every time.sleep() polls in a loop or is a marked observation window (%d not)"
       % len(sleeps), sleeps)
tap.ok(not deadlines, "every deadline of a wait is h.deadline() (scaled by IBSM_TEST_SLOW) or a "
       "marked schedule (%d not)" % len(deadlines), deadlines)
