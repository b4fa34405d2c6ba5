#!/usr/bin/env python3
"""08-valgrind.t - ibsm brings up the demo fabric (etc/fabrics/demo.net) under valgrind memcheck: no invalid access,
no uninitialised use, no leak (errors inside libumad2sim.so itself are suppressed by
tests/valgrind/umad2sim.supp); the fabric it leaves must pass the route check. Then the daemon
path under valgrind (event loop, -A cache, a SIGHUP reload, a trap, SIGTERM): its sweeps are
seen on the wire (the SMP counter shim), and a CA unlinked is answered like a trap must be:
a TrapRepress, a new discovery or a repair, every remaining pair delivered (read back with the
diags)."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

tap = h.start(plan=8, timeout=900, need=("valgrind",))
here = os.path.dirname(os.path.abspath(__file__))
supp = os.path.join(here, "..", "valgrind", "umad2sim.supp")
glib_supp = os.path.join(here, "..", "valgrind", "glib.supp")
net = os.path.join(here, "..", "..", "etc", "fabrics", "demo.net")  # the demo fabric
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    vlog = sim.path("valgrind.txt")
    cmd = ["valgrind", "--error-exitcode=99", "--leak-check=full",
           "--show-leak-kinds=definite,indirect,possible",
           "--errors-for-leak-kinds=definite,indirect,possible",
           "--suppressions=" + supp, "--suppressions=" + glib_supp, "--log-file=" + vlog,
           h.ibsm_path()]
    r = sim.run(cmd + ["--once", "-f", log, "-D", "0x43"], timeout=300)
    report = h.read(vlog)
    m = re.search(r"ERROR SUMMARY: (\d+) errors", report)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once under valgrind exits 0 (99 = memcheck error)",
           r.describe() + "\n" + report[-3000:])
    tap.ok(m is not None and m.group(1) == "0", "valgrind: 0 errors", report[-3000:])
    leaks = re.findall(r"(definitely|indirectly|possibly) lost: ([\d,]+) bytes", report)
    tap.ok(leaks and all(v == "0" for _, v in leaks), "valgrind: nothing lost", str(leaks))
    snap0 = sim.collect()
    tap.check("the fabric ibsm left under valgrind: every pair delivered", h.check_routes(snap0))

    # the daemon path under valgrind: event loop, -A cache, SIGHUP reload, a trap, SIGTERM
    dlog = sim.path("daemon.log")
    dvlog = sim.path("valgrind-daemon.txt")
    dcmd = [c if not c.startswith("--log-file=") else "--log-file=" + dvlog for c in cmd]
    n_nodes = len(snap0.nodes)
    bg = sim.start_sm(["-A", "-s", "1", "-f", dlog], cmd=dcmd, name="vg-daemon")
    # readiness from the wire: the first sweep's discovery asked every node for its NodeInfo
    c0, swept = bg.wait_counts(lambda c: c.gets(h.NODEINFO) >= n_nodes, 300)
    ca = sim.netfile.cas()
    gone, before = False, None
    if swept:
        off = du.size(dlog)
        bg.popen.send_signal(signal.SIGHUP)
        # readiness: the reload is logged, then the second discovery shows on the wire
        du.wait_text(dlog, off, "LOOP-0005", 120, bg.alive)
        bg.wait_counts(lambda c: c.gets(h.NODEINFO) >= c0.gets(h.NODEINFO) + n_nodes, 300)
        before, off = bg.counts(), du.size(dlog)
        sim.console('Unlink "%s"[1]' % ca[-1])
        # the trap path from the wire: a TrapRepress for ibsim's trap 128, then a rediscovery
        # (NodeInfo of every node still there) or, when the trap finds the subnet up, a repair
        # (SWP-0022: its switch read again, core/sm/repair.c; which one depends on whether the
        # SIGHUP's sweep was still running); the diags then find every pair delivered
        handled, handled_ok = bg.wait_counts(
            lambda c: (c - before).count(h.TRAPREPRESS) >= 1 and (
                (c - before).gets(h.NODEINFO) >= n_nodes - 1 or "SWP-0022" in du.since(dlog, off)),
            300)
        # -A keeps the cached routes, but the gone CA's LIDs must lose theirs (as a fresh
        # routing gives them): no switch keeps sending its LIDs into the dead port
        cut = sim.node(snap0, ca[-1])
        cut_lids = [] if cut is None else [cut.ports[1].lid + i for i in range(1 << cut.ports[1].lmc)]

        def settled(s):
            stale = [g for g, t in s.lfts.items() for l in cut_lids if l < len(t) and t[l] != h.NO_PORT]
            return h.check_routes(s)[0] and len(s.nodes) == n_nodes - 1 and not stale
        snap1, _ = du.poll_fabric(sim, settled, 120)
        gone = handled_ok and bool(cut_lids) and settled(snap1)
    counts = bg.counts()
    rc = bg.stop()
    dreport = h.read(dvlog)
    tap.ok(swept, "daemon under valgrind sweeps the fabric (SMP counter: NodeInfo Gets for all %d nodes)" % n_nodes,
           c0.summary() + "\n" + h.tail(dlog))
    dm = re.search(r"ERROR SUMMARY: (\d+) errors", dreport)
    tap.ok(dm is not None and dm.group(1) == "0", "daemon under valgrind: 0 errors", dreport[-3000:])
    dleaks = re.findall(r"(definitely|indirectly|possibly) lost: ([\d,]+) bytes", dreport)
    tap.ok(not dleaks or all(v == "0" for _, v in dleaks), "daemon: nothing lost", str(dleaks))
    tap.ok(gone, "daemon under valgrind handled the unlinked CA %s: TrapRepress, rediscovery or repair, every other "
           "pair delivered, no switch routes its LIDs any more (-A)" % ca[-1], (counts - before).summary() if swept else "" + "\n" + h.tail(dlog))
tap.done()
