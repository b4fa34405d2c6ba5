#!/usr/bin/env python3
"""78-chaos-fastcheck.t - the chaos harness's fast route check (tests/chaos/fastcheck.py, what
lets tests/chaos/chaos.py judge every (host port, LID) pair of an 8192-host fabric at every
sample) gives the verdicts of harness.walk_routes, pair for pair in number: on ftree-small.net
(updn) and irregular.net (minhop, which has a credit loop there) as the SM left them, and
again with the SM stopped and two switch links and a host link cut (black holes, down links).
Its credit-loop verdict (every hop on VL 0) agrees with harness.vl_credit_loops where that
one can follow every route. Its dump_fts parser reads the same LFTs as harness's, also when
the top LID's entry is missing (LinearFDBTop a multiple of 64)."""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "chaos"))
import harness as h  # noqa: E402
import fastcheck as fc  # noqa: E402

FABRICS = (("ftree-small.net", "updn"), ("irregular.net", "minhop"))
tap = h.start(plan=1 + 5 * len(FABRICS), timeout=600)


def same(a, b):
    return (a.pairs, a.delivered, dict(a.failed), a.max_hops, a.max_shortest, a.non_minimal, dict(a.hops),
            a.dest_lids, a.sources) == \
           (b.pairs, b.delivered, dict(b.failed), b.max_hops, b.max_shortest, b.non_minimal, dict(b.hops),
            b.dest_lids, b.sources)


# the fixed-width fast path and the line parser on a table whose top LID (128) is not shown
lines = ["Unicast lids [0x0-0x80] of switch DR path slid 0; dlid 0; 0,1 guid 0x0000000000000011 (x):",
         "  Lid  Out   Destination", "       Port     Info "]
lines += ["0x%04x %03d " % (lid, (lid * 7) % 256) for lid in range(128)] + ["128 lids dumped "]
text = "\n".join(lines) + "\n"
a, b = h.Snapshot(), h.Snapshot()
a.parse_lfts(text)
fc.parse_lfts(b, text)
tap.ok(a.lfts == b.lfts and a.lft_top == b.lft_top and len(b.lfts[0x11]) == 129 and b.lfts[0x11][128] == h.NO_PORT,
       "dump_fts parse: the same table as harness's, LID top (a multiple of 64) left unknown")

for name, engine in FABRICS:
    net = h.need_fabric(tap, name)
    with h.Sim(net, lmc=0) as sim:
        log = sim.path("ibsm.log")
        sm = sim.start_sm(["-f", log, "-R", engine, "-s", "0"], env=sim.env(rmpp=True))
        up = sm.wait_for(log, r"SUBNET UP", 120) and sm.wait_idle(1.0, 60) is not None
        snap, took = fc.collect(sim, sim.host, 120)
        tap.ok(up and not snap.errors and snap.lfts, "%s: read back (%s)" % (name, took), h.tail(log, 5))
        slow = h.walk_routes(snap)
        fast = fc.Checker().check(snap)
        tap.ok(same(slow, fast), "%s, %s as routed: the same verdicts (%s)" % (name, engine, fast.summary()),
               slow.summary())
        cdg = h.vl_credit_loops(snap, {}, {})
        tap.ok((cdg.cycle is None) == (fast.cycle is None) and cdg.routes == fast.routes,
               "%s: the same credit-loop verdict on VL 0 (%s)" % (name, fast.cdg_summary()), cdg.summary())
        sm.stop()
        sws = set(sim.netfile.switches())
        inner = [l for l in sim.netfile.links if all(n in sws for n, _ in l)]
        hostl = [l for l in sim.netfile.links if not all(n in sws for n, _ in l)]
        for (n, p), _ in (inner[1], inner[-1], hostl[-1]):
            sim.console('Unlink "%s"[%d]' % (n, p))
        snap2, _ = fc.collect(sim, sim.host, 120)
        slow2 = h.walk_routes(snap2)
        fast2 = fc.Checker().check(snap2)
        tap.ok(same(slow2, fast2) and not fast2.ok(), "%s with 3 links cut and no SM: the same failures (%s)" % (
            name, fast2.summary()), slow2.summary())
        ok_slow, _ = h.check_routes(snap2, slow2)
        ok_fast, _ = fc.check_routes(fast2)
        tap.ok(ok_slow == ok_fast, "%s: the same overall verdict (%s)" % (name, ok_fast))
h.cleanup()
tap.done()
