#!/usr/bin/env python3
"""00-harness.t - the judge is judged: the harness's checks must fail on a fabric no SM has
configured and must catch a loop, a black hole, a wrong delivery, a port not ACTIVE, a
changed LFT and a missing link; the opensm-subnet.lst parser reads OpenSM's format."""
import copy
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=14, timeout=120)
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

    log = sim.path("sm.log")
    r = sim.run_sm(["--once", "-f", log], timeout=60)
    snap = sim.collect()
    good = h.check_routes(snap)
    tap.check("after the SM ran, every route is delivered (baseline for the cases below)", good)
    if not good[0]:
        tap.diag(r.describe() + "\n" + h.tail(log))

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
