# SPDX-License-Identifier: BSD-2-Clause
"""tap.py - the few lines of TAP the architecture checks print (plan, ok/not ok, diagnostics)."""


class Tap:
    def __init__(self, plan):
        self.n = 0
        print("1..%d" % plan)

    def ok(self, cond, name, detail=()):
        """One test line; DETAIL (lines) follows as diagnostics, at most 40."""
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, name))
        for line in list(detail)[:40]:
            print("# " + line)
