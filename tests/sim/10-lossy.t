#!/usr/bin/env python3
"""10-lossy.t - ibsim drops 2% of the SMPs crossing every switch (console 'Error' command):
ibsm must still bring the fabric fully up through its retries and back-off, and the SMP
counter shim (tests/tools/smpcount.so) must see requests go unanswered, so the test cannot
pass on a fabric that lost nothing."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=8, timeout=240)
net = h.need_fabric(tap, "ftree-small.net")
with h.Sim(net) as sim:
    switches = re.findall(r'^Switch\s+\d+\s+"([^"]+)"', h.read(net), re.M)
    for name in switches:
        sim.console('Error "%s" 2' % name)
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log], timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once exits 0 despite 2% loss", r.describe() + h.tail(log))
    c = r.counts
    lost = c.requests() - c.responses()
    tap.ok(c.valid and lost > 0, "SMPs were lost: %d of %d Gets and Sets got no answer (SMP counter); the "
           "checks below show they were sent again" % (lost, c.requests()),
           "sent: %s\nreceived: %s" % (c.summary(), c.summary(True)))
    for name in switches:
        sim.console('Error "%s" 0' % name)  # the diags must not be judged through the loss
    h.fabric_checks(tap, sim, diag_log=log, switches=True)
tap.done()
