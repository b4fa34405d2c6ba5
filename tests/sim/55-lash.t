#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""55-lash.t - the lash engine (-R lash) as a daemon on an irregular fabric and a 4x4 torus,
judged from outside: the fabric checks (every pair delivered, on a shortest path: lash never
trades hops); the path SLs the SA's PathRecords give and the SL2VL tables read back from the
switches make the (link, VL) channel dependency graph of every CA-to-CA route acyclic, while the
same routes on one VL are cyclic (the layers are what frees them); the SL of a->b is that of
b->a (one SL serves a connection both ways). With --lash_start_vl 1 every SL is at least 1 and
still no credit loop; with --do_mesh_analysis the torus is routed dimension by dimension on one
VL (a ring of 4 as two dimensions of 2), acyclic there, where lash alone needs more.
With max_op_vls 1 (one data VL) lash cannot route the torus: it declines, the log says why and
the fallback (minhop) routes it."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

# fabric, arguments, label, whether the routes on one VL are cyclic (the mesh analysis routes
# the 4x4 torus dimension by dimension, a ring of 4 as two dimensions of 2: acyclic on one VL)
CASES = [("irregular.net", [], "irregular", True),
         ("torus-4x4.net", [], "torus", True),
         ("torus-4x4.net", ["--do_mesh_analysis"], "torus, mesh analysis", False),
         ("irregular.net", ["--lash_start_vl", "1"], "irregular, lash_start_vl 1", True)]
PER_CASE = 6
tap = h.start(plan=len(CASES) * PER_CASE + 2, timeout=1800, need=("smpquery", "saquery"))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: lash is ibsm's engine")

vls_used = {}
for name, extra, label, cyclic in CASES:
    net = h.need_fabric(tap, name)
    with h.Sim(net) as sim:
        log = sim.path("ibsm.log")
        sm = sim.start_sm(["-f", log, "-s", "0", "-R", "lash"] + extra, name="ibsm",
                          env=sim.env(rmpp=True))  # the SA answers GetTable whole
        up = sm.wait_for(log, r"SUBNET UP", 120) and sm.wait_idle(1.0, 60) is not None
        text = h.read(log)
        routed = re.search(r"RTE-0003 routed by (\S+) ", text)
        tap.ok(up and routed is not None and routed.group(1) == "lash" and "RTE-0002" not in text,
               "%s: the daemon brings it up, routed by lash itself" % label, h.tail(log, 12))
        snap = sim.collect()
        rep = h.walk_routes(snap)
        tap.ok(rep.ok() and rep.non_minimal == 0,
               "%s: every pair delivered on a shortest path" % label, rep.summary())
        sls = h.path_sls(sim) if up else {}
        sl2vl = h.read_sl2vl(sim, snap) if up else {}
        sm.stop()
        vrep = h.vl_credit_loops(snap, sl2vl, sls)
        tap.ok(vrep.ok() and not vrep.missing,
               "%s: no credit loop over (link, VL): SLs from the SA, SL2VL read back" % label,
               vrep.summary())
        one = h.ca_cdg_cycle(snap)
        if cyclic:
            tap.ok(one is not None and one.startswith("cycle") and len(vrep.vls) > 1,
                   "%s: on one VL the same routes close a cycle; lash uses %d VLs" % (
                       label, len(vrep.vls)), "one VL: %s; VLs %s" % (one, sorted(vrep.vls)))
        else:
            tap.ok(one is None and len(vrep.vls) == 1,
                   "%s: dimension order needs no second VL: one layer, acyclic on one VL" % label,
                   "one VL: %s; VLs %s" % (one, sorted(vrep.vls)))
        asym = [(a, b) for (a, b), sl in sls.items() if (b, a) in sls and sls[(b, a)] != sl]
        tap.ok(sls and not asym, "%s: the SL of a->b is the SL of b->a (%d pairs)" % (label, len(sls)),
               "differ: %s" % asym[:5])
        low = min(sls.values()) if sls else None
        want = 1 if "--lash_start_vl" in extra else 0
        tap.ok(low == want, "%s: the lowest SL is %d" % (label, want), "lowest %s" % low)
        vls_used[label] = len(vrep.vls)

tap.ok(vls_used.get("torus, mesh analysis", 99) < vls_used.get("torus", 0),
       "torus: the mesh analysis uses fewer VLs (%s) than without (%s)" % (
           vls_used.get("torus, mesh analysis"), vls_used.get("torus")))

# one data VL: lash declines, minhop routes, the log says why
net = h.need_fabric(tap, "torus-4x4.net")
with h.Sim(net) as sim:
    log = sim.path("vl1.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "lash", "--max_op_vls", "1"], timeout=120)
    text = h.read(log)
    snap = sim.collect()
    rep = h.walk_routes(snap)
    tap.ok(r.rc == 0 and "more than 1 layers needed" in text and rep.ok() and
           re.search(r"RTE-0003 routed by minhop", text) is not None,
           "max_op_vls 1: lash declines (too few VLs, said in the log) and minhop routes",
           r.describe() + "\n" + h.tail(log, 12))
tap.done()
