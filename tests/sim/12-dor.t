#!/usr/bin/env python3
"""12-dor.t - ibsm --once -R dor on a 2D mesh, a 3D mesh with parallel links and a hypercube
(tests/fabrics, written by gen-dor-fabrics.py): the standard checks pass, every port names the
SM, every route is a shortest path, and every CA-to-CA route crosses the dimensions in
increasing order, each hop fixing the lowest dimension in which its switch still differs from
the destination's (judged from the diags' LFTs and the fabrics' port layout, not from ibsm's
log; minhop and updn both fail that walk on these fabrics, so it also shows dor routed). Then a
mis-cabled mesh: dor declines naming the bad link (a message, read in the log), and the
fabric is routed on shortest paths all the same (the minhop fallback)."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

# fabric -> (number of dimensions, parallel links, hypercube)
FABRICS = [("mesh-3x3.net", 2, 1, False),
           ("mesh-3x2x2-par2.net", 3, 2, False),
           ("hypercube-3.net", 3, 1, True)]


def coords(node, nd):
    """Coordinates from the switch name: mXYZ (mesh) or qBBB (hypercube, bit b at the end)."""
    digits = node.desc[1:1 + nd]
    if node.desc[0] == "q":
        return tuple(int(digits[nd - 1 - b]) for b in range(nd))
    return tuple(int(c) for c in digits)


def port_dim(port, nd, par, cube):
    """The dimension of a switch port by the fabric's layout, None for host ports."""
    if cube:
        return port - 1 if 1 <= port <= nd else None
    return (port - 1) // (2 * par) if 1 <= port <= 2 * nd * par else None


def check_dimension_order(snap, nd, par, cube):
    """Walks every CA port to every LID of every other CA port through the LFTs."""
    bad, hops = [], 0
    switches = {n.guid: n for n in snap.switches()}
    for dlid, owners in sorted(snap.lid_owners().items()):
        if len(owners) != 1 or owners[0][0] != "CA":
            continue
        _, dnode, dport = owners[0]
        dsw = switches.get(dnode.ports[dport].peer[0])
        if dsw is None:
            continue
        dc = coords(dsw, nd)
        for src in snap.ca_ports():
            if src.node.guid == dnode.guid:
                continue
            cur = switches.get(src.peer[0])
            last, steps = -1, 0
            while cur is not None and cur.guid != dsw.guid and steps < 64:
                steps += 1
                lft = snap.lfts.get(cur.guid, b"")
                out = lft[dlid] if dlid < len(lft) else h.NO_PORT
                dim = port_dim(out, nd, par, cube)
                cc = coords(cur, nd)
                low = next((d for d in range(nd) if cc[d] != dc[d]), None)
                if dim is None or dim != low or dim < last:
                    bad.append("%s -> LID %d: at %s port %d (dimension %s, lowest differing %s)"
                               % (src.name(), dlid, cur.desc, out, dim, low))
                    break
                last = dim
                hops += 1
                p = cur.ports.get(out)
                cur = switches.get(p.peer[0]) if p is not None else None
            else:
                if cur is None or steps >= 64:
                    bad.append("%s -> LID %d: lost" % (src.name(), dlid))
    return hops, bad


tap = h.start(plan=10 * len(FABRICS) + 10, timeout=300, need=("smpquery",))
for name, nd, par, cube in FABRICS:
    net = h.need_fabric(tap, name)
    with h.Sim(net) as sim:
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log, "-R", "dor"], timeout=60)
        tap.ok(r.rc == 0 and not r.crashed(), "%s: ibsm --once -R dor exits 0" % name,
               r.describe())
        snap, rep = h.fabric_checks(tap, sim, diag_log=log, switches=True)
        tap.check("%s: every end port's PortInfo names the SM (SMLid)" % name, h.check_sm_lid(sim, snap))
        tap.check("%s: every route is a shortest path" % name,
                  h.check_routes(snap, rep, minimal=True))
        n, bad = check_dimension_order(snap, nd, par, cube)
        tap.ok(n > 0 and not bad, "%s: %d switch hops, all in dimension order (dor, not the minhop "
               "fallback)" % (name, n), "; ".join(bad[:5]) + "\n" + h.tail(log, 8))

name = "mesh-3x3-miscabled.net"
net = h.need_fabric(tap, name)
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "dor"], timeout=60)
    tap.ok(r.rc == 0 and not r.crashed(), "%s: ibsm --once -R dor exits 0" % name, r.describe())
    text = h.read(log)
    # the message itself is the feature here: the administrator is told which cable is wrong
    m = re.search(r"routing engine dor declined: (.*)", text)
    tap.ok(m and "inconsistent mesh cabling" in m.group(1) and '"m20" port 3 goes to port 1'
           in m.group(1) and '"m21"' in m.group(1),
           "%s: dor declines, naming the bad link m20[3] - m21[1]" % name, h.tail(log))
    snap, rep = h.fabric_checks(tap, sim, diag_log=log, switches=True)
    tap.check("%s: every end port's PortInfo names the SM (SMLid)" % name, h.check_sm_lid(sim, snap))
    tap.check("%s: every route is a shortest path (the minhop fallback routed it)" % name,
              h.check_routes(snap, rep, minimal=True))
tap.done()
