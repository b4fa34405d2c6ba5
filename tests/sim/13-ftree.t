#!/usr/bin/env python3
"""13-ftree.t - the fat-tree engine on ibsim: `ibsm --once -R ftree` brings up a 4-ary 3-tree,
a partially populated one and (with the roots given, -a) a degraded 2-level tree; each is
judged with infiniband-diags (every CA port reaches every CA and switch LID), the log must say
ftree routed, and opensm-ftree-ca-order.dump must list every compute node (dummies for the
missing ones). Then `-R ftree,updn` on a torus: ftree declines naming the rule, updn
routes."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=36, timeout=300)

CASES = [
    # fabric, extra args, compute nodes, dummies, extra log line expected
    ("ftree-3l.net", [], 64, 0, None),
    ("ftree-3l-partial.net", [], 56, 8, None),
    ("ftree-2l-degraded.net", ["-a", h.fabric("ftree-2l-degraded.roots")], 16, 0,
     "not up/down"),
]

for name, args, cns, dummies, extra in CASES:
    net = h.need_fabric(tap, name)
    with h.Sim(net) as sim:
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log, "-R", "ftree"] + args, timeout=90)
        tap.ok(r.rc == 0 and not r.crashed(), "%s: ibsm --once -R ftree exits 0" % name,
               r.describe())
        text = h.read(log)
        tap.ok("SUBNET UP" in text, "%s: log says SUBNET UP" % name, h.tail(log))
        tap.ok("routed by ftree" in text and "declined" not in text,
               "%s: the log says ftree routed" % name, h.tail(log))
        if extra:
            tap.ok(extra in text, "%s: log counts the non-up/down routes toward switch LIDs"
                   % name, h.tail(log))
        h.fabric_checks(tap, sim, diag_log=log)
        dump = os.path.join(sim.osmdir, "opensm-ftree-ca-order.dump")
        lines = h.read(dump).splitlines() if os.path.exists(dump) else []
        real = [ln for ln in lines if not ln.startswith("0xFFFF\t")]
        dummy = [ln for ln in lines if ln == "0xFFFF\tDUMMY"]
        ok = (len(real) == cns and len(dummy) == dummies and
              all(ln.startswith("0x") and "\thost-" in ln for ln in real))
        tap.ok(ok, "%s: opensm-ftree-ca-order.dump lists %d compute nodes and %d dummies"
               % (name, cns, dummies), "got %d lines: %s" % (len(lines), lines[:5]))

net = h.need_fabric(tap, "torus-4x4.net")
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "ftree,updn"], timeout=90)
    tap.ok(r.rc == 0 and not r.crashed(), "torus: ibsm --once -R ftree,updn exits 0",
           r.describe())
    text = h.read(log)
    tap.ok("routing engine ftree declined: fat-tree rule" in text,
           "torus: the log says why ftree declined (the rule broken)", h.tail(log))
    tap.ok("routed by updn" in text and "routed by minhop" not in text,
           "torus: updn (the next engine of the chain) routed, not the minhop fallback", h.tail(log))
    h.fabric_checks(tap, sim, diag_log=log)

tap.done()
