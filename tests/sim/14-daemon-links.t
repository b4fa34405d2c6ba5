#!/usr/bin/env python3
"""14-daemon-links.t - ibsm as a daemon reacts to links going down and up through the trap path:
it runs with -s 0 (no light sweep at all), so only ibsim's trap 128 (raised on a console
Unlink/ReLink) can make it act. Judged from outside: the SMP counter shim sees the TrapRepress
and the LFT blocks written, the diags see the routes. A spine-leaf link taken down is avoided
by every route and every pair is delivered again; brought back, routes cross it again. All
uplinks of one leaf taken down: every other pair is still delivered, no switch forwards the
lost hosts' LIDs into a dead link, LIDs are kept, and the log names each lost host (that
message is the feature checked there). No verdict depends on how fast anything happened:
each condition is polled for up to a minute."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60           # generous bound for each condition; the speed belongs in make bench

tap = h.start(plan=23, timeout=600)
net = h.need_fabric(tap, "ftree-small.net")

with h.Sim(net) as sim:
    nf = sim.netfile
    # the link leaf2[5] - spine1[2] (switch to switch), the SM and the diags on h1 (leaf1)
    LINK = frozenset([("leaf2", 5), ("spine1", 2)])
    tap.ok(LINK in nf.links and all(nf.nodes[n][0] == "SW" for n, _ in LINK),
           "leaf2[5] - spine1[2] is a switch-to-switch link of %s" % os.path.basename(net))
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)       # readiness only
    idle = sm.wait_idle(1.0, POLL_S)
    tap.ok(up and idle is not None, "daemon (-s 0) comes up and goes idle (its SMP counter stands still)",
           h.tail(log) + sm.output()[-500:])
    snap0, _ = h.fabric_checks(tap, sim, diag_log=log, switches=True)          # 6 tests
    leaf2, spine1 = sim.node(snap0, "leaf2"), sim.node(snap0, "spine1")
    host = sim.node(snap0, "h1")

    def use_of_link(snap):
        u = du.link_usage(snap)
        return u[(leaf2.guid, 5)] + u[(spine1.guid, 2)]

    base_use = use_of_link(snap0)
    tap.ok(base_use > 0, "before: %d routes cross leaf2[5] - spine1[2]" % base_use)

    def trap_handled(before, what):
        """The trap as the wire shows it: a TrapRepress and LFT blocks written since BEFORE."""
        c, ok = sm.wait_counts(lambda c: (c - before).count(h.TRAPREPRESS) >= 1 and
                               (c - before).sets(h.LFT) >= 1, POLL_S)
        d = c - before
        tap.ok(ok, "%s: ibsm answered the trap with a TrapRepress and rewrote LFT blocks (SMP counter: "
               "%d TrapRepress, %d LFT blocks)" % (what, d.count(h.TRAPREPRESS), d.sets(h.LFT)),
               "since the console command: %s\n%s" % (d.summary(), h.tail(log, 10)))

    # ---- a spine-leaf link goes down
    c0 = sm.counts()
    sim.console('Unlink "leaf2"[5]')

    def avoided(snap):
        ok, _ = h.check_routes(snap)
        return ok and 5 not in du.lft_ports_used(snap, leaf2.guid) and \
            2 not in du.lft_ports_used(snap, spine1.guid)

    trap_handled(c0, "Unlink")
    snap1, secs = du.poll_fabric(sim, avoided, POLL_S)
    tap.check("Unlink: every pair delivered again", h.check_routes(snap1))
    tap.ok(secs is not None,
           "Unlink: no LFT entry of leaf2 or spine1 points into the dead link",
           "leaf2 ports used: %s; spine1 ports used: %s\n%s" % (
               sorted(du.lft_ports_used(snap1, leaf2.guid)), sorted(du.lft_ports_used(snap1, spine1.guid)),
               h.tail(log, 15)))
    tap.check("Unlink: LIDs kept", du.compare_lids(snap0, snap1))
    sm.wait_idle(1.0, POLL_S)

    # ---- it comes back
    c1 = sm.counts()
    sim.console('ReLink "leaf2"[5]')

    def used_again(snap):
        ok, _ = h.check_routes(snap)
        return ok and h.check_ports_active(snap)[0] and use_of_link(snap) > 0

    trap_handled(c1, "ReLink")
    snap2, secs = du.poll_fabric(sim, used_again, POLL_S)
    tap.check("ReLink: every pair delivered, every linked port ACTIVE",
              (lambda a, b: (a[0] and b[0], a[1] + "; " + b[1]))(h.check_routes(snap2),
                                                                 h.check_ports_active(snap2)))
    tap.ok(secs is not None, "ReLink: routes cross leaf2[5] - spine1[2] again (%d pairs now, "
           "%d before the Unlink)" % (use_of_link(snap2), base_use), h.tail(log, 15))
    sm.wait_idle(1.0, POLL_S)

    # ---- leaf4 loses every uplink: h13-h16 are cut off
    leaf4 = sim.node(snap2, "leaf4")
    lost = [sim.node(snap2, "h%d" % i) for i in range(13, 17)]
    lost_lids = [n.ports[min(n.ports)].lid for n in lost]
    kept_ports = {k for k in du.lids(snap2) if k[0] not in {leaf4.guid} | {n.guid for n in lost}}
    off = du.size(log)
    c2 = sm.counts()
    for port in (5, 6, 7, 8):
        sim.console('Unlink "leaf4"[%d]' % port)

    def no_dead_entries(snap):
        """(switch, LID) entries of the lost hosts' LIDs that still lead into a link that is
        not ACTIVE (or to no link)."""
        bad = []
        for n in snap.switches():
            lft = snap.lfts.get(n.guid, b"")
            for lid in lost_lids:
                out = lft[lid] if lid < len(lft) else h.NO_PORT
                if out != h.NO_PORT and (out not in n.ports or n.ports[out].state != "Active"):
                    bad.append("%s LID %d -> port %d" % (n.name(), lid, out))
        return bad

    def cut_off(snap):
        ok, _ = h.check_routes(snap)
        return ok and leaf4.guid not in snap.nodes and not any(n.guid in snap.nodes for n in lost) \
            and not no_dead_entries(snap)

    c3, _ = sm.wait_counts(lambda c: (c - c2).count(h.TRAPREPRESS) >= 1, POLL_S)
    snap3, secs = du.poll_fabric(sim, cut_off, POLL_S)
    sm.wait_idle(1.0, POLL_S)
    tap.ok(leaf4.guid not in snap3.nodes and not any(n.guid in snap3.nodes for n in lost),
           "leaf4 and h13-h16 are gone from the diags' view (ibsim cut them off)",
           "%d nodes seen" % len(snap3.nodes))
    tap.check("leaf4 cut off: every other pair delivered", h.check_routes(snap3))
    tap.check("leaf4 cut off: every switch still reaches every CA LID", h.check_switch_routes(snap3))
    dead = no_dead_entries(snap3)
    tap.ok(not dead and (c3 - c2).count(h.TRAPREPRESS) >= 1,
           "leaf4 cut off: the traps were answered and no switch forwards the lost LIDs %s into a dead link"
           % lost_lids, "; ".join(dead[:8]) + "\n" + (c3 - c2).summary())
    tap.check("leaf4 cut off: the other ports keep their LIDs", du.compare_lids(snap2, snap3, kept_ports))

    # the message is the feature here: the administrator is told which hosts were lost
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
    rc = du.signal_and_wait(sm, 15, POLL_S)
    sm.stop()
    tap.ok(alive and rc == 0, "the daemon ran through all of it and exits 0 on SIGTERM (status %s)" % rc,
           sm.output()[-800:] + h.tail(log))
tap.done()
