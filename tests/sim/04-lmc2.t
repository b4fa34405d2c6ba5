#!/usr/bin/env python3
"""04-lmc2.t - ibsm --once -l 2 on the fat tree: every CA port gets 4 LIDs aligned to 4, and
each of the 4 LIDs of every CA port is reached from every other CA port (diags judge)."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=10, timeout=120, need=("smpquery",))
net = h.need_fabric(tap, "ftree-small.net")
with h.Sim(net, lmc=2) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "-l", "2"], timeout=60)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once -l 2 exits 0", r.describe())
    snap, rep = h.fabric_checks(tap, sim, lmc=2, diag_log=log, switches=True)
    tap.check("every end port's PortInfo names the SM (SMLid)", h.check_sm_lid(sim, snap))

    # every CA port: LMC 2, base LID % 4 == 0, and all 4 LIDs delivered from all other sources
    cas = snap.ca_ports()
    bad = []
    for p in cas:
        if p.lmc != 2 or p.lid == 0 or p.lid % 4:
            bad.append("%s LID %d LMC %d" % (p.name(), p.lid, p.lmc))
            continue
        for lid in range(p.lid, p.lid + 4):
            pairs, delivered = rep.per_lid.get(lid, [0, 0])
            if pairs != len(cas) - 1 or delivered != pairs:
                bad.append("%s LID %d: %d of %d sources delivered" % (p.name(), lid, delivered, len(cas) - 1))
    tap.ok(cas and not bad, "all 4 LIDs of each of %d CA ports reached from every other CA port" % len(cas),
           "; ".join(bad[:8]))
    # the switches keep one LID each (LMC 0 on base switch port 0)
    sws = snap.switches()
    tap.ok(sws and all(n.lmc == 0 and n.lid for n in sws), "%d switches have one LID each (LMC 0)" % len(sws),
           "; ".join("%s lid %d lmc %d" % (n.name(), n.lid, n.lmc) for n in sws if n.lmc or not n.lid))
tap.done()
