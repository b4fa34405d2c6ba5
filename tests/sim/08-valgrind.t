#!/usr/bin/env python3
"""08-valgrind.t - ibsm brings up the demo fabric (etc/fabrics/demo.net) under valgrind memcheck: no invalid access,
no uninitialised use, no leak (errors inside libumad2sim.so itself are suppressed by
tests/valgrind/umad2sim.supp); the fabric it leaves must still pass the checks."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=4, timeout=600)
if not h.which("valgrind"):
    tap.skip_all("valgrind not installed")
here = os.path.dirname(os.path.abspath(__file__))
supp = os.path.join(here, "..", "valgrind", "umad2sim.supp")
net = os.path.join(here, "..", "..", "etc", "fabrics", "demo.net")  # the demo fabric
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    vlog = sim.path("valgrind.txt")
    cmd = ["valgrind", "--error-exitcode=99", "--leak-check=full",
           "--show-leak-kinds=definite,indirect,possible",
           "--errors-for-leak-kinds=definite,indirect,possible",
           "--suppressions=" + supp, "--log-file=" + vlog, h.ibsm_path()]
    r = sim.run(cmd + ["--once", "-f", log, "-D", "0x43"], timeout=300)
    report = h.read(vlog)
    m = re.search(r"ERROR SUMMARY: (\d+) errors", report)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once under valgrind exits 0 (99 = memcheck error)",
           r.describe() + "\n" + report[-3000:])
    tap.ok(m is not None and m.group(1) == "0", "valgrind: 0 errors", report[-3000:])
    leaks = re.findall(r"(definitely|indirectly|possibly) lost: ([\d,]+) bytes", report)
    tap.ok(leaks and all(v == "0" for _, v in leaks), "valgrind: nothing lost", str(leaks))
    tap.ok("SUBNET UP" in h.read(log), "log says SUBNET UP", h.tail(log))
tap.done()
