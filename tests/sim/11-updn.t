#!/usr/bin/env python3
"""11-updn.t - ibsm --once -R updn brings up a fat tree, a torus, an irregular fabric (root
detection: histogram, fall-back) and a degraded fat tree with a root GUID file (-a, every
spine a root: spine1's LID needs up-down-up turns from leaf1). Per fabric: the log shows updn
routed (no fall-back), the harness's checks pass (routes may be longer than the diameter:
up/down trades hops for deadlock freedom), every pair is delivered, and the channel dependency graph of all
CA-to-CA routes (one VL) read back from the switches is acyclic: deadlock-free."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402


def ca_cdg_cycle(snap):
    """Channel dependency graph of every CA port to every LID of every CA port, following the
    LFTs. Channels are directed links (node guid, out port). Returns None when acyclic, else a
    short text naming a cycle; also a text when a route cannot be followed."""
    owners = snap.lid_owners()
    ca_lids = sorted(l for l, o in owners.items() if len(o) == 1 and o[0][0] == "CA")
    deps = {}
    for src in snap.ca_ports():
        if src.peer is None:
            continue
        for lid in ca_lids:
            if owners[lid][0][1].guid == src.node.guid and owners[lid][0][2] == src.num:
                continue
            chan = (src.node.guid, src.num)
            guid, _ = src.peer
            for _ in range(64):
                node = snap.nodes.get(guid)
                if node is None or node.type != "SW":
                    break
                lft = snap.lfts.get(guid)
                out = lft[lid] if lft is not None and lid < len(lft) else h.NO_PORT
                port = node.ports.get(out)
                if port is None or port.peer is None:
                    return "LID %d from %s: no route at %s" % (lid, src.name(), node.name())
                nxt = (guid, out)
                deps.setdefault(chan, set()).add(nxt)
                chan = nxt
                guid = port.peer[0]
            else:
                return "LID %d from %s: loop" % (lid, src.name())
    color, parent = {}, {}
    for start in deps:
        if start in color:
            continue
        stack = [(start, iter(deps.get(start, ())))]
        color[start] = 1
        while stack:
            v, it = stack[-1]
            w = next(it, None)
            if w is None:
                color[v] = 2
                stack.pop()
                continue
            if color.get(w) == 1:
                cyc, x = [w], v
                while x != w and len(cyc) < 12:
                    cyc.append(x)
                    x = parent[x]
                names = ["%s[%d]" % (snap.nodes[g].name(), p) for g, p in reversed(cyc)]
                return "cycle: " + " -> ".join(names)
            if w not in color:
                color[w] = 1
                parent[w] = v
                stack.append((w, iter(deps.get(w, ()))))
    return None


here = os.path.dirname(os.path.abspath(__file__))
fabrics = os.path.join(os.path.dirname(here), "fabrics")
cases = [("ftree-small.net", [], None),
         ("torus-4x4.net", [], None),
         ("irregular.net", [], None),
         ("updn-2l-fail.net", ["-a", os.path.join(fabrics, "updn-2l-fail.roots")],
          r"(\d+) switch-LID routes .* up-down-up")]
tap = h.start(plan=8 * len(cases) + 1, timeout=600)
for name, extra, want in cases:
    net = h.need_fabric(tap, name)
    with h.Sim(net) as sim:
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log, "-R", "updn"] + extra, timeout=120)
        text = h.read(log)
        tap.ok(r.rc == 0 and not r.crashed() and "SUBNET UP" in text,
               "%s: ibsm --once %s exits 0, SUBNET UP" % (name, " ".join(["-R updn"] + extra)),
               r.describe() + "\n" + h.tail(log))
        routed = re.search(r"RTE-0003 routed by (\S+) ", text)
        tap.ok(routed and routed.group(1) == "updn" and "falling back" not in text
               and "declined" not in text,
               "%s: routed by updn, no fall-back" % name,
               routed.group(0) if routed else h.tail(log))
        # the harness's checks, but up/down may route past the fabric's diameter (the price
        # of deadlock freedom on tori and irregular graphs): every pair delivered is the rule
        snap = sim.collect()
        rep = h.walk_routes(snap)
        results = [("diags read the fabric", h.check_collected(snap)),
                   ("nodes and links as in %s" % name, h.check_inventory(snap, sim.netfile)),
                   ("every linked port ACTIVE", h.check_ports_active(snap)),
                   ("LIDs assigned, unique, aligned", h.check_lids(snap)),
                   ("every source CA port reaches every destination LID",
                    (rep.ok(), rep.summary()))]
        for what, res in results:
            if not tap.check("%s: %s" % (name, what), res):
                tap.diag("last lines of the SM log:\n%s" % h.tail(log, 15))
        cyc = ca_cdg_cycle(snap)
        tap.ok(cyc is None, "%s: CA-to-CA channel dependency graph (1 VL) acyclic" % name, cyc)
        if want:
            m = re.search(want, text)
            tap.ok(m and int(m.group(1)) > 0,
                   "%s: up-down-up switch-LID routes counted in the log" % name, h.tail(log))
tap.done()
