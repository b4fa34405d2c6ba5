# SPDX-License-Identifier: BSD-2-Clause
"""tap.py - the few lines of TAP the architecture checks print (plan, ok/not ok, skips,
diagnostics)."""


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
        return cond

    def skip(self, why, count=1):
        """COUNT tests that cannot run here, each with why."""
        for _ in range(count):
            self.n += 1
            print("ok %d # skip %s" % (self.n, why))
