#!/usr/bin/env python3
"""10-lossy.t - ibsim drops 2% of the SMPs crossing every switch (console 'Error' command):
ibsm must still bring the fabric fully up through its retries and back-off, and its own
statistics must show that SMPs were really lost and retried (so the test cannot pass idle)."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=7, timeout=240)
net = h.need_fabric(tap, "ftree-small.net")
with h.Sim(net) as sim:
    switches = re.findall(r'^Switch\s+\d+\s+"([^"]+)"', h.read(net), re.M)
    for name in switches:
        sim.console('Error "%s" 2' % name)
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log], timeout=120)
    text = h.read(log)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once exits 0 despite 2% loss", r.describe() + h.tail(log))
    m = re.findall(r"STATS transport sent=(\d+) received=\d+ retries=(\d+)", text)
    retries = sum(int(x[1]) for x in m)
    tap.ok(retries > 0, "SMPs were lost and retried (%d retries)" % retries, h.tail(log))
    for name in switches:
        sim.console('Error "%s" 0' % name)  # the diags must not be judged through the loss
    h.fabric_checks(tap, sim, diag_log=log)
tap.done()
