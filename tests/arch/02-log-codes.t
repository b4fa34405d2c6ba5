#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""02-log-codes.t - doc/log-codes.md and the sources agree: every log code used in core/ is listed
under its file, each file logs with one prefix of its own, no prefix is shared by two files, and
every code listed is still used. Administrators alert on these codes; a silent rename breaks
their alerts, so a code changes only together with this registry."""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from tap import Tap  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
CODE = re.compile(r'"([A-Z]{2,4}-\d{4})"')
SECTION = re.compile(r"^## (\S+) \(([A-Z]{2,4})\)\s*$")
ROW = re.compile(r"^\| ([A-Z]{2,4}-\d{4}) \| (\w+|[^|]+) \| (.+) \|\s*$")

used = {}  # file -> set of codes
for path in sorted(glob.glob(os.path.join(ROOT, "core", "*", "*.c"))):
    rel = os.path.relpath(path, ROOT)
    with open(path) as f:
        codes = set(CODE.findall(f.read()))
    if codes:
        used[rel] = codes

listed, prefix_of, problems = {}, {}, []
section = None
with open(os.path.join(ROOT, "doc", "log-codes.md")) as f:
    for n, line in enumerate(f, 1):
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            prefix_of[section] = m.group(2)
            listed.setdefault(section, {})
            continue
        m = ROW.match(line)
        if m:
            if not section:
                problems.append("log-codes.md:%d: a code outside a file section" % n)
                continue
            if not m.group(3).strip():
                problems.append("log-codes.md:%d: %s has no meaning" % (n, m.group(1)))
            listed[section][m.group(1)] = n

ok = Tap(6).ok
ok(not problems and len(listed) >= 10, "the registry parses (%d files)" % len(listed), problems)
unlisted = ["%s: %s is not in doc/log-codes.md under this file" % (f, c)
            for f, cs in sorted(used.items()) for c in sorted(cs) if c not in listed.get(f, {})]
ok(not unlisted, "every code used is listed under its file", unlisted)
stale = ["%s: %s is listed but no longer used" % (f, c)
         for f, cs in sorted(listed.items()) for c in sorted(cs) if c not in used.get(f, set())]
ok(not stale, "every code listed is used", stale)
mixed = ["%s uses prefixes %s" % (f, ", ".join(sorted({c.split('-')[0] for c in cs})))
         for f, cs in sorted(used.items()) if len({c.split('-')[0] for c in cs}) > 1]
ok(not mixed, "each file logs with one prefix", mixed)
wrong = ["%s: %s does not have the section's prefix %s" % (f, c, prefix_of[f])
         for f, cs in sorted(listed.items()) for c in cs if not c.startswith(prefix_of[f] + "-")]
ok(not wrong, "every listed code has its file's prefix", wrong)
owners = {}
for f, p in prefix_of.items():
    owners.setdefault(p, []).append(f)
shared = ["%s is the prefix of %s" % (p, " and ".join(fs)) for p, fs in sorted(owners.items()) if len(fs) > 1]
ok(not shared, "no prefix is shared by two files", shared)
