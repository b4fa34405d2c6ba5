#!/usr/bin/env python3
"""00-harness.t - the judge is judged: the harness's checks must fail on a fabric no SM has
configured and must catch a loop, a black hole, a wrong delivery, a port not ACTIVE, a
changed LFT and a missing link; the SMP counter (tests/tools/smpcount.so) must count exactly
the MADs ibsim itself received, for ibsm and for OpenSM, and name the LFT blocks written;
the shift-permutation link load must be 1 on OpenSM's ftree routing of a full fat tree and
catch an unbalanced table, the up/down check a down-then-up turn; the opensm-subnet.lst
parser reads OpenSM's format."""
import copy
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=23, timeout=240, need=("opensm", "smpquery"))
net = h.need_fabric(tap, "tiny.net")


def fails(name, result, kind=None):
    ok, detail = result
    tap.ok(not ok and (kind is None or kind in detail), name, "check passed or said something else: %s" % detail)


with h.Sim(net) as sim:
    snap = sim.collect()
    tap.check("diags read the unconfigured fabric", h.check_collected(snap))
    fails("ports of an unconfigured fabric are reported not ACTIVE", h.check_ports_active(snap), "not ACTIVE")
    fails("missing LIDs are reported", h.check_lids(snap), "no unicast LID")
    fails("no route is reported", h.check_routes(snap))
    fails("no port naming the SM is reported", h.check_sm_lid(sim, snap))

    log = sim.path("sm.log")
    sim.trace_start()
    r = sim.run_sm(["--once", "-f", log], timeout=60)
    seen = sim.trace_counts()
    snap = sim.collect()
    good = h.check_routes(snap)
    tap.check("after the SM ran, every route is delivered (baseline for the cases below)", good)
    if not good[0]:
        tap.diag(r.describe() + "\n" + h.tail(log))
    c = r.counts
    tap.ok(c.valid and seen and c.sent == seen and not (c.send_failed or c.undecodable or c.overflow),
           "SMP counter under the SM: exactly the MADs ibsim received (%d, by class, method and attribute)"
           % sum(seen.values()), "counter: %s\nibsim: %s" % (sorted(c.sent.items()), sorted(seen.items())))
    tap.ok(c.requests() > 0 and c.requests() == c.responses() and not c.recv_bad_status,
           "SMP counter: on a lossless fabric every Get and Set is answered (%d requests, %d GetResp)"
           % (c.requests(), c.responses()), c.summary() + "\nreceived: " + c.summary(True))
    host = sim.node(snap, sim.host)
    written = {(snap.resolve_target(t, host), mod) for _, mod, t, _ in c.set_details(h.LFT)}
    written = {(n.guid if n else None, b) for n, b in written}
    want = {(n.guid, b) for n in snap.switches() for b in range(snap.lft_top[n.guid] // 64 + 1)}
    tap.ok(want and written == want, "SMP counter: the LFT Sets name every block of every switch up to "
           "LinearFDBTop, once resolved from their directed routes (%d blocks)" % len(want),
           "counted: %s\nwanted: %s" % (sorted(written, key=str), sorted(want)))

    # a CA port on some switch B, reached from a switch A through a switch-to-switch link
    dest = next(p for p in snap.ca_ports() if p.lid)
    b = snap.nodes[dest.peer[0]]
    b_down = dest.peer[1]
    a_up = next((p for n in snap.switches() if n is not b for p in n.ports.values() if p.peer[0] == b.guid), None)
    a = a_up.node
    b_back = a_up.peer[1]                      # B's port towards A
    lid = dest.lid

    def mutated(changes, states=()):
        s = copy.copy(snap)
        s.lfts = {g: bytearray(t) for g, t in snap.lfts.items()}
        for node, port in changes:
            s.lfts[node.guid][lid] = port
        s.nodes = copy.deepcopy(snap.nodes)
        for node, port, state in states:
            s.nodes[node.guid].ports[port].state = state
        return s

    fails("a loop between two switches is caught", h.check_routes(mutated([(a, a_up.num), (b, b_back)])), h.LOOP)
    fails("a missing LFT entry is caught", h.check_routes(mutated([(a, a_up.num), (b, h.NO_PORT)])), h.NO_ENTRY)
    other = next((p.num for p in b.ports.values() if p.num != b_down and snap.nodes[p.peer[0]].type == "CA"), None)
    fails("delivery to the wrong CA port is caught", h.check_routes(mutated([(b, other)])), h.WRONG)
    fails("forwarding to port 0 of a switch that is not the destination is caught",
          h.check_routes(mutated([(b, 0)])), h.WRONG)
    unlinked = next(p for p in range(1, b.nports + 2) if p not in b.ports)
    fails("an out port without a link is caught", h.check_routes(mutated([(b, unlinked)])), h.NO_LINK)
    fails("a route over a port that is not ACTIVE is caught",
          h.check_routes(mutated([(a, a_up.num)], [(b, b_back, "Armed")])), h.DOWN)
    fails("a changed LFT entry is caught", h.check_unchanged(snap, mutated([(b, other)])), "LFT")

    sim.console('Unlink "%s"[%d]' % (sim.netfile.cas()[-1], 1))
    fails("a link missing from the fabric is caught", h.check_inventory(sim.collect(), sim.netfile), "missing")

# ---- OpenSM's ftree on a full 2-level fat tree: the counter, the shift metric, up/down
with h.Sim(h.fabric("ftree-small.net")) as sim:
    osm_log = sim.path("opensm.log")
    sim.trace_start()
    osm = sim.start_sm(["-e", "-f", osm_log, "-d", "2", "-s", "0", "-R", "ftree"], cmd=[h.which("opensm")],
                       name="opensm")
    up = osm.wait_for(osm_log, r"SUBNET UP", 60) and osm.wait_idle(1.0, 60) is not None
    c = osm.counts()
    osm.stop()
    seen = sim.trace_counts()
    tap.ok(up and c.valid and seen and c.sent == seen and not (c.send_failed or c.undecodable or c.overflow),
           "SMP counter under OpenSM: exactly the MADs ibsim received (%d)" % sum(seen.values()),
           "counter: %s\nibsim: %s\n%s" % (sorted(c.sent.items()), sorted(seen.items()), h.tail(osm_log)))
    snap = sim.collect()
    base = h.shift_loads(snap)
    tap.ok(h.check_routes(snap)[0] and base.worst == 1 and not base.undelivered,
           "OpenSM's ftree on ftree-small.net: every shift permutation loads each link at most once",
           base.summary())
    leaf1 = sim.node(snap, "leaf1")
    unbalanced = copy.copy(snap)
    unbalanced.lfts = {g: bytearray(t) for g, t in snap.lfts.items()}
    local = {p.lid for p in snap.ca_ports() if p.peer[0] == leaf1.guid}
    for p in snap.ca_ports():
        if p.lid not in local:
            unbalanced.lfts[leaf1.guid][p.lid] = 5     # every remote host over one up link
    rep = h.shift_loads(unbalanced)
    tap.ok(not h.check_shift(unbalanced, 1)[0] and rep.worst == 4 and "leaf1 port 5" in rep.example,
           "a leaf sending every remote host up one link is caught: worst shift load 4", rep.summary())
    spines = [sim.node(snap, "spine%d" % i).guid for i in range(1, 5)]
    ud = h.updown_report(snap, spines)
    tap.ok(not ud.ca_turns and ud.pairs and ud.sw_turns <= ud.sw_needed,
           "OpenSM's ftree: no CA-to-CA route turns up after going down (roots: the spines)", ud.summary())
    # h5 (on leaf2) from leaf1: leaf1 -> spine1 -> leaf3 -> spine2 -> leaf2, down then up at leaf3
    dst = sim.node(snap, "h5").ports[1]
    leaf3 = sim.node(snap, "leaf3")
    turned = copy.copy(snap)
    turned.lfts = {g: bytearray(t) for g, t in snap.lfts.items()}
    turned.lfts[leaf1.guid][dst.lid] = 5
    turned.lfts[spines[0]][dst.lid] = 3
    turned.lfts[leaf3.guid][dst.lid] = 6
    ud = h.updown_report(turned, spines)
    tap.ok(h.walk_routes(turned).ok() and any("LID %d" % dst.lid in t for t in ud.ca_turns),
           "a delivered route that goes down and up again is caught by the up/down check", ud.summary())

lst = ("{ CA Ports:01 SystemGUID:0000000000100000 NodeGUID:0000000000100000 PortGUID:0000000000100001 "
       "VenID:000000 DevID:0000 Rev:000000A1 {h1} LID:0001 PN:01 } { SW Ports:08 SystemGUID:0000000000200000 "
       "NodeGUID:0000000000200000 PortGUID:0000000000200000 VenID:00000000 DevID:0000 Rev:000000A1 {sw1} "
       "LID:0002 PN:01 } PHY=4x LOG=ACT SPD=2.5\n"
       "{ SW Ports:08 SystemGUID:0000000000200000 NodeGUID:0000000000200000 PortGUID:0000000000200000 "
       "VenID:000000 DevID:0000 Rev:000000A1 {sw1} LID:0002 PN:01 } { CA-SM Ports:01 SystemGUID:0000000000100000 "
       "NodeGUID:0000000000100000 PortGUID:0000000000100001 VenID:00000000 DevID:0000 Rev:000000A1 {h1} "
       "LID:0001 PN:01 } PHY=4x LOG=ACT SPD=2.5\n")
m = h.parse_subnet_lst(lst)
tap.ok(m[0] == {0x100000: ("CA", 1), 0x200000: ("SW", 8)} and
       m[1] == {(0x100000, 1): 0x100001, (0x200000, 1): 0x200000} and
       m[2] == {frozenset([(0x100000, 1), (0x200000, 1)])} and not m[3],
       "opensm-subnet.lst parsed: 2 nodes, 2 ports, 1 link", repr(m))
tap.done()
