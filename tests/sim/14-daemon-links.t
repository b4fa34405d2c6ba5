#!/usr/bin/env python3
"""14-daemon-links.t - ibsm as a daemon (-s 10) reacts to links going down and up through the
trap path (ibsim raises trap 128 on a console Unlink/ReLink), well within one sweep interval:
a spine-leaf link taken down is avoided by every route and every pair is delivered again;
brought back, routes cross it again. All uplinks of one leaf taken down: the CAs behind it
are reported unreachable in the log, every other pair is still delivered, LIDs are kept."""
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

SWEEP_S = 10          # -s: the light-sweep interval the trap path must beat
TRAP_DEADLINE = 3.0   # seconds from the console command to a correct fabric

tap = h.start(plan=21, timeout=100)
net = h.need_fabric(tap, "ftree-small.net")

with h.Sim(net) as sim:
    nf = sim.netfile
    # the link leaf2[5] - spine1[2] (switch to switch), the SM and the diags on h1 (leaf1)
    LINK = frozenset([("leaf2", 5), ("spine1", 2)])
    tap.ok(LINK in nf.links and all(nf.nodes[n][0] == "SW" for n, _ in LINK),
           "leaf2[5] - spine1[2] is a switch-to-switch link of %s" % os.path.basename(net))
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", str(SWEEP_S)], host="h1", name="ibsm")
    tap.ok(sm.wait_for(log, r"SWP-0002 SUBNET UP", 30), "daemon reaches SUBNET UP",
           h.tail(log) + sm.output()[-500:])
    du.wait_quiet(log)
    snap0, _ = h.fabric_checks(tap, sim, diag_log=log)          # 5 tests
    leaf2, spine1 = sim.node(snap0, "leaf2"), sim.node(snap0, "spine1")

    def use_of_link(snap):
        u = du.link_usage(snap)
        return u[(leaf2.guid, 5)] + u[(spine1.guid, 2)]

    base_use = use_of_link(snap0)
    tap.ok(base_use > 0, "before: %d routes cross leaf2[5] - spine1[2]" % base_use)

    # ---- a spine-leaf link goes down
    off = du.size(log)
    sim.console('Unlink "leaf2"[5]')

    def avoided(snap):
        ok, _ = h.check_routes(snap)
        return ok and 5 not in du.lft_ports_used(snap, leaf2.guid) and \
            2 not in du.lft_ports_used(snap, spine1.guid)

    snap1, secs = du.poll_fabric(sim, avoided, TRAP_DEADLINE)
    text = du.since(log, off)
    tap.ok(re.search(r"TRP-0001 trap 128", text) and re.search(r"SWP-0002 SUBNET UP", text),
           "Unlink: ibsm logs trap 128 and a heavy sweep to SUBNET UP", text[-1500:])
    tap.check("Unlink: every pair delivered again", h.check_routes(snap1))
    tap.ok(secs is not None,
           "Unlink: every pair delivered and no LFT entry of leaf2/spine1 points into the dead link "
           "within %.0f s (%s; sweep interval %d s)" % (TRAP_DEADLINE, "%.1f s" % secs if secs is not None
                                                        else "not reached", SWEEP_S),
           "leaf2 ports used: %s; spine1 ports used: %s\n%s" % (
               sorted(du.lft_ports_used(snap1, leaf2.guid)), sorted(du.lft_ports_used(snap1, spine1.guid)),
               h.tail(log, 15)))
    tap.check("Unlink: LIDs kept", du.compare_lids(snap0, snap1))

    # ---- it comes back
    off = du.size(log)
    sim.console('ReLink "leaf2"[5]')

    def used_again(snap):
        ok, _ = h.check_routes(snap)
        return ok and use_of_link(snap) > 0

    snap2, secs = du.poll_fabric(sim, used_again, TRAP_DEADLINE)
    text = du.since(log, off)
    tap.ok(re.search(r"TRP-0001 trap 128", text) and re.search(r"SWP-0002 SUBNET UP", text),
           "ReLink: ibsm logs trap 128 and a heavy sweep to SUBNET UP", text[-1500:])
    tap.check("ReLink: every pair delivered, every linked port ACTIVE",
              (lambda a, b: (a[0] and b[0], a[1] + "; " + b[1]))(h.check_routes(snap2),
                                                                 h.check_ports_active(snap2)))
    tap.ok(secs is not None, "ReLink: routes cross leaf2[5] - spine1[2] again within %.0f s (%d pairs now, "
           "%d before the Unlink)" % (TRAP_DEADLINE, use_of_link(snap2), base_use),
           h.tail(log, 15))

    # ---- leaf4 loses every uplink: h13-h16 are cut off
    du.wait_quiet(log, 0.5, 5)
    leaf4 = sim.node(snap2, "leaf4")
    lost = [sim.node(snap2, "h%d" % i) for i in range(13, 17)]
    kept_ports = {k for k in du.lids(snap2) if k[0] not in {leaf4.guid} | {n.guid for n in lost}}
    off = du.size(log)
    for port in (5, 6, 7, 8):
        sim.console('Unlink "leaf4"[%d]' % port)

    def cut_off(snap):
        ok, _ = h.check_routes(snap)
        return ok and leaf4.guid not in snap.nodes and not any(n.guid in snap.nodes for n in lost)

    snap3, secs = du.poll_fabric(sim, cut_off, TRAP_DEADLINE + 2)
    du.wait_quiet(log, 0.5, 5)
    tap.ok(leaf4.guid not in snap3.nodes and not any(n.guid in snap3.nodes for n in lost),
           "leaf4 and h13-h16 are gone from the diags' view (ibsim cut them off)",
           "%d nodes seen" % len(snap3.nodes))
    tap.check("leaf4 cut off: every other pair delivered", h.check_routes(snap3))
    tap.ok(secs is not None, "leaf4 cut off: the rest is correct within %.0f s" % (TRAP_DEADLINE + 2),
           h.tail(log, 15))
    tap.check("leaf4 cut off: the other ports keep their LIDs", du.compare_lids(snap2, snap3, kept_ports))

    text = du.since(log, off)
    missing = []
    for n in lost:
        port = n.ports[min(n.ports)]
        ids = [r"\b%s\b" % re.escape(n.desc), r"0x0*%x\b" % n.guid, r"\b0*%x\b" % n.guid,
               r"0x0*%x\b" % port.guid, r"\b0*%x\b" % port.guid, r"\blid %d\b" % port.lid]
        if not any(re.search(r"(?i)unreachable", l) and any(re.search(i, l, re.I) for i in ids)
                   for l in text.splitlines()):
            missing.append("%s (node 0x%x, port 0x%x, LID %d)" % (n.desc, n.guid, port.guid, port.lid))
    tap.ok(not missing, "leaf4 cut off: the log reports each of h13-h16 as unreachable",
           "no log line with 'unreachable' names: %s\nlog since the Unlinks:\n%s" % (
               "; ".join(missing), "\n".join(l for l in text.splitlines() if "STS-0001" not in l)[-2500:]))

    alive = sm.alive()
    rc, secs = du.signal_and_time(sm, 15)
    sm.stop()
    tap.ok(alive and rc == 0, "the daemon ran through all of it and exits 0 on SIGTERM (status %s)" % rc,
           sm.output()[-800:] + h.tail(log))
tap.done()
