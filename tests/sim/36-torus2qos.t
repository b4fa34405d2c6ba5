#!/usr/bin/env python3
"""36-torus2qos.t - ibsm -R torus-2QoS,no_fallback -Q on torus-4x4.net (switch tXY, host hXY,
port 1 x+, 2 x-, 3 y+, 4 y-, 5 the host), judged by the diags and the SA, not by ibsm's log:
the standard fabric checks; every host pair's PathRecord SL (saquery GetTable) is the
dateline crossings of its coordinates (bit 0 x, bit 1 y: the shorter way round a ring of 4
crosses between 3 and 0, a tie does not); every switch's SL2VL (smpquery) is torus-2QoS(8)'s map
(VL bit 0 the SL bit of the output's dimension, bit 1 after a y-x turn, bit 2 the QoS bit);
and the channel dependency graph of all host pairs over (link, VL), built from the LFTs, those
SL2VL tables and those SLs, has no cycle. Then a link fails (Unlink t11[1]) and a switch
fails (Unlink t22): each time every pair is delivered again around it, over no dead link,
with the same SLs and an acyclic graph. Then the x ring at y=1 is split (t01[1] as well):
ibsm logs the ring and, with no_fallback, leaves every LFT as it was. Last, on a fresh sim
with the ring split from the start, -R torus2qos (the alias, no no_fallback) falls back to
minhop. Multicast: every host joins the broadcast group; its MFTs reach every member once, and
the tree, from its root t22, goes x before y and crosses no dateline; when t22 fails the others
still reach each other (a new root)."""
import os
import re
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

NET = "torus-4x4.net"
IPOIB = "ff12:401b:ffff::ffff:ffff"
R = 4
CONF = """# torus-4x4.net: tXY = 0x40000 + 4y + x
torus 4 4 1
xp_link 0x40000 0x40001
xm_link 0x40000 0x40003
yp_link 0x40000 0x40004
ym_link 0x40000 0x4000c
"""
OSMCONF = """qos TRUE
qos_vlarb_high 0:0
qos_vlarb_low 0:32,1:32,2:32,3:32,4:32,5:32,6:32,7:32
qos_ca_vlarb_low 0:32,1:32
qos_sw0_vlarb_low 0:32,1:32
qos_rtr_vlarb_low 0:32,1:32
"""
POLL_S = 60


def xy(name):
    return int(name[1]), int(name[2])


def crosses(a, b):
    lo, hi = min(a, b), max(a, b)
    return int(hi - lo > lo + R - hi)


def want_sl(src, dst):
    (sx, sy), (dx, dy) = xy(src), xy(dst)
    return crosses(sx, dx) | crosses(sy, dy) << 1


def dim(port):
    return (port - 1) // 2 if 1 <= port <= 4 else None


def want_vl(inp, out, sl):
    di, do = dim(inp), dim(out)
    if do is None:
        return sl >> 3
    return ((sl >> do) & 1) | (2 if di is not None and di > do else 0) | (sl >> 3) << 2


def hosts(snap):
    """{host name: (its port, its switch's name)} for the hosts with a LID."""
    out = {}
    for p in snap.ca_ports():
        if p.lid and p.peer:
            out[p.node.desc.split()[0]] = p
    return out


def path_sls(sim, snap, names):
    """{(src, dst): SL} of the host pairs from the SA: one PathRecord GetTable (saquery -p with
    the RMPP library), every record's SLID, DLID and SL."""
    hs = hosts(snap)
    by_lid = {p.lid: n for n, p in hs.items() if n in names}
    r = sim.run(["saquery", "-p"], host="h00", timeout=30, env=sim.env("h00", rmpp=True))
    got = {}
    for rec in r.out.split("PathRecord dump:")[1:]:
        f = dict((k, v) for k, v in re.findall(r"(\w+)\.+(\S+)", rec))
        a, b = by_lid.get(int(f.get("slid", "0"), 0)), by_lid.get(int(f.get("dlid", "0"), 0))
        if a and b and a != b:
            got[(a, b)] = int(f.get("sl", "-1"), 0)
    for a in names:
        for b in names:
            if a != b and a in hs and b in hs:
                got.setdefault((a, b), None)
    return got


def parse_sl2vl(text):
    rows = {}
    for m in re.finditer(r"ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})", text):
        rows[(int(m.group(1)), int(m.group(2)))] = [int(x) for x in m.group(3).split("|") if x.strip()]
    return rows


def sl2vl_tables(sim, snap):
    """{switch guid: {(in, out): [16 VLs]}} for every output port with a link."""
    out = {}
    for sw in snap.switches():
        tab = {}
        for p in sorted(sw.ports):
            if sw.ports[p].peer is None:
                continue
            r = sim.run(["smpquery", "sl2vl", str(sw.lid), str(p)], host="h00", timeout=20)
            tab.update(parse_sl2vl(r.out))
        out[sw.guid] = tab
    return out


def check_sl2vl(snap, tabs):
    bad, n = [], 0
    for sw in snap.switches():
        for (i, o), vls in tabs.get(sw.guid, {}).items():
            if i == o or sw.ports.get(o) is None or sw.ports[o].peer is None or \
                    (i and (sw.ports.get(i) is None or sw.ports[i].peer is None)):
                continue  # tables of ports without a link carry no traffic
            n += 1
            want = [want_vl(i, o, sl) for sl in range(16)]
            if vls != want:
                bad.append("%s in %d out %d: %s, want %s" % (sw.desc, i, o, vls, want))
    return n > 0 and not bad, "%d (in, out) tables as torus-2QoS(8) maps them" % n if not bad else \
        "%d of %d differ: %s" % (len(bad), n, "; ".join(bad[:3]))


def vl_cdg(snap, tabs, sls):
    """None when the (link, VL) dependency graph of all host pairs is acyclic, else a text."""
    hs = hosts(snap)
    deps = {}
    for (a, b), sl in sls.items():
        if sl is None or a not in hs or b not in hs:
            continue
        src, lid = hs[a], hs[b].lid
        guid, inp = src.peer
        prev = None
        for _ in range(64):
            node = snap.nodes.get(guid)
            if node is None or node.type != "SW":
                break
            out = snap.lfts[guid][lid]
            port = node.ports.get(out)
            if port is None or port.peer is None:
                return "%s -> %s: no route at %s" % (a, b, node.desc)
            vl = tabs[guid].get((inp, out), [0] * 16)[sl]
            chan = (guid, out, vl)
            if prev is not None:
                deps.setdefault(prev, set()).add(chan)
            prev = chan
            guid, inp = port.peer
        else:
            return "%s -> %s: loop" % (a, b)
    cyc = h.find_cycle(deps)
    if cyc is None:
        return None
    return "cycle: " + " -> ".join("%s[%d] VL %d" % (snap.nodes[g].desc, p, vl) for g, p, vl in cyc)


def mcast_tree(tap, sim, snap, what, members, root):
    """The broadcast group's MFTs: every member reaches every other once (harness flood), and
    read from the root (a switch name) every branch goes x before y, never across the
    dateline between x=3 and x=0 or y=3 and y=0 (whole rings only: `whole`)."""
    end = h.deadline(POLL_S)
    while True:
        mfts = h.read_mfts(sim, snap, host="h00")
        ok, why, _ = h.mcast_flood(snap, mfts, 0xC000, members)
        if ok or time.time() > end:
            break
        time.sleep(0.5)
    tap.ok(ok, "%s: the %d members of the broadcast group reach each other once over the MFTs"
           % (what, len(members)), why)
    by_name = {n.desc: n for n in snap.switches()}
    start = by_name.get(root)
    bad, seen, queue = [], {root: -1}, [root]
    while start and queue:
        name = queue.pop(0)
        node = by_name[name]
        for out in sorted(mfts.get(node.guid, {}).get(0xC000, ())):
            port = node.ports.get(out)
            d = dim(out)
            if d is None or port is None or port.peer is None:
                continue
            peer = snap.nodes[port.peer[0]].desc
            if peer in seen:
                continue
            if d < seen[name]:
                bad.append("%s -> %s: %s after %s" % (name, peer, "xy"[d], "xy"[seen[name]]))
            (a, b) = xy(name), xy(peer)
            if abs(a[d] - b[d]) != 1:
                bad.append("%s -> %s crosses the dateline" % (name, peer))
            seen[peer] = d
            queue.append(peer)
    tap.ok(start is not None and not bad and len(seen) == len(by_name),
           "%s: the group's tree, from its root %s, goes x then y and crosses no dateline "
           "(%d switches)" % (what, root, len(seen)), "; ".join(bad[:4]))


def judge(tap, sim, snap, what, names, sls0=None):
    """SLs (as the datelines say, or unchanged from sls0), SL2VL, acyclic (link, VL) graph."""
    sls = path_sls(sim, snap, names)
    if sls0 is None:
        bad = ["%s->%s %s (want %d)" % (a, b, s, want_sl(a, b)) for (a, b), s in sorted(sls.items())
               if s != want_sl(a, b)]
        tap.ok(sls and not bad, "%s: the SL of all %d host pairs is their dateline crossings" %
               (what, len(sls)), "; ".join(bad[:5]))
    else:
        bad = ["%s->%s %s (was %s)" % (a, b, s, sls0.get((a, b))) for (a, b), s in sorted(sls.items())
               if s != sls0.get((a, b))]
        tap.ok(sls and not bad, "%s: the SLs of all %d host pairs are unchanged" % (what, len(sls)),
               "; ".join(bad[:5]))
    tabs = sl2vl_tables(sim, snap)
    tap.check("%s: switch SL2VL tables" % what, check_sl2vl(snap, tabs))
    cyc = vl_cdg(snap, tabs, sls)
    tap.ok(cyc is None, "%s: no credit loop over (link, VL) in the routes of all host pairs" % what, cyc)
    return sls


def main():
    tap = h.start(plan=29, timeout=600, need=("smpquery", "saquery"))
    net = h.need_fabric(tap, NET)
    names = ["h%d%d" % (x, y) for y in range(R) for x in range(R)]
    with h.Sim(net) as sim:
        conf, osmconf, log = sim.path("torus-2QoS.conf"), sim.path("opensm.conf"), sim.path("ibsm.log")
        with open(conf, "w") as f:
            f.write(CONF)
        with open(osmconf, "w") as f:
            f.write(OSMCONF)
        sm = sim.start_sm(["-R", "torus-2QoS,no_fallback", "-Q", "--torus_config", conf, "-F", osmconf,
                           "-f", log, "-s", "1"], host="h00", env=sim.env("h00", rmpp=True))
        up = du.wait_text(log, 0, r"SUBNET UP", POLL_S, alive=sm.alive)
        tap.ok(up is not None, "ibsm with torus-2QoS reaches SUBNET UP", h.tail(log, 15))
        snap0, _ = h.fabric_checks(tap, sim, diag_log=log)
        sls0 = judge(tap, sim, snap0, "whole torus", names)
        client = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
        j = sim.run([client, "-B", "64", IPOIB], host="h00", timeout=60)
        tap.ok(j.rc == 0 and "failed 0" in j.out, "every host joins the broadcast group (by proxy)",
               j.describe()[-600:])
        hs = hosts(snap0)
        members = {p.guid for n, p in hs.items()}
        mcast_tree(tap, sim, snap0, "whole torus", members, "t22")

        # ---- a link fails: t11 x+ (to t21)
        t11, t21 = sim.node(snap0, "t11"), sim.node(snap0, "t21")
        off = du.size(log)
        sim.console('Unlink "t11"[1]')

        def around(snap, guid, port):
            return h.walk_routes(snap).ok() and port not in du.lft_ports_used(snap, guid)

        snap1, secs = du.poll_fabric(sim, lambda s: around(s, t11.guid, 1) and
                                     2 not in du.lft_ports_used(s, t21.guid), POLL_S)
        tap.ok(secs is not None, "link t11-t21 down: every pair delivered (the long way round the broken "
               "ring), no route into it",
               "%s; t11 uses %s, t21 uses %s\n%s" % (
                   h.walk_routes(snap1).summary(), sorted(du.lft_ports_used(snap1, t11.guid)),
                   sorted(du.lft_ports_used(snap1, t21.guid)), h.tail(log, 10)))
        tap.ok(re.search(r"rings or lines broken", du.since(log, off)) is not None,
               "link down: the broken ring is logged", du.since(log, off)[-800:])
        judge(tap, sim, snap1, "link down", names, sls0)

        # ---- a switch fails: t22
        off = du.size(log)
        sim.console('Unlink "t22"')
        t22 = sim.node(snap0, "t22")

        def without(snap):
            return h.walk_routes(snap).ok() and t22.guid not in snap.nodes

        snap2, secs = du.poll_fabric(sim, without, POLL_S)
        tap.ok(secs is not None, "switch t22 down: every pair of the rest delivered (round it, "
               "the long way where a ring is broken)", h.walk_routes(snap2).summary())
        tap.ok(re.search(r"1 torus positions have no switch", du.since(log, off)) is not None,
               "switch down: the empty position is logged", du.since(log, off)[-800:])
        judge(tap, sim, snap2, "switch down", [n for n in names if n != "h22"], sls0)
        end = h.deadline(POLL_S)
        while True:
            ok, why, _ = h.mcast_flood(snap2, h.read_mfts(sim, snap2, host="h00"), 0xC000,
                                       members - {hs["h22"].guid})
            if ok or time.time() > end:
                break
            time.sleep(0.5)
        tap.ok(ok, "switch down (the tree's root): the other 15 members still reach each other "
               "once (a new root)", why)

        # ---- the x ring at y=1 split in two: {t11} and {t21, t31, t01}
        off = du.size(log)
        sim.console('Unlink "t01"[1]')
        split = du.wait_text(log, off, r"x ring at y=1 z=0 is split into 2 disjoint segments",
                             POLL_S, alive=sm.alive)
        tap.ok(split is not None, "split ring: ibsm logs the x ring at y=1 as split",
               du.since(log, off)[-1200:])
        du.wait_text(log, du.size(log), r"routing|declined", 5, alive=sm.alive)
        snap3 = sim.collect()
        tap.check("split ring with no_fallback: the previous routes stay (every LFT unchanged)",
                  _lfts_same(snap2, snap3))
        tap.ok(re.search(r"falling back to minhop", du.since(log, off)) is None,
               "split ring with no_fallback: no fallback engine", du.since(log, off)[-600:])
        sm.stop()
        tap.ok(not sm.alive(), "ibsm stopped")

    # ---- without no_fallback the chain falls back
    with h.Sim(net) as sim:
        conf, log = sim.path("torus-2QoS.conf"), sim.path("ibsm.log")
        with open(conf, "w") as f:
            f.write(CONF)
        sim.console('Unlink "t11"[1]')
        sim.console('Unlink "t01"[1]')
        r = sim.run_sm(["--once", "-R", "torus2qos", "--torus_config", conf, "-Q", "-f", log],
                       timeout=60, host="h00")
        text = h.read(log)
        tap.ok(r.rc == 0 and "x ring at y=1 z=0 is split" in text and "falling back to minhop" in text,
               "split ring without no_fallback: refused with the ring named, minhop routes",
               r.describe() + "\n" + h.tail(log, 10))
        snap = sim.collect()
        tap.check("split ring without no_fallback: every pair delivered", h.check_routes(snap))
    tap.done()


def _lfts_same(a, b):
    """Every LFT entry of the switches both snapshots have is unchanged."""
    diff = []
    for g, x in a.lfts.items():
        y = b.lfts.get(g)
        if y is None:
            continue
        n = [l for l in range(min(len(x), len(y))) if x[l] != y[l]]
        if n:
            diff.append("%s: %d entries (LID %s)" % (a.nodes[g].desc, len(n), n[:4]))
    return not diff, "no LFT entry changed" if not diff else "; ".join(diff[:4])


if __name__ == "__main__":
    main()
