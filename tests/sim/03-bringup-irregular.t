#!/usr/bin/env python3
"""03-bringup-irregular.t - ibsm --once brings up an irregular fabric with loops, a parallel link and a dual-homed host
(tests/fabrics/irregular.net) on ibsim; infiniband-diags then judge ports, LIDs and every route."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=7, timeout=120)
net = h.need_fabric(tap, "irregular.net")
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log], timeout=60)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once exits 0", r.describe())
    tap.ok("SUBNET UP" in h.read(log), "log says SUBNET UP", h.tail(log))
    h.fabric_checks(tap, sim, diag_log=log)
tap.done()
