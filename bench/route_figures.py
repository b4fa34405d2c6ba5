#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""route_figures.py - the quality of a routing as the fabric holds it, computed by the project's
own code for `make bench` (bench/engines_bench.py): from a snapshot the diags read
(tests/sim/harness.py: LFTs, links, LIDs), the SL of every pair (the SA's PathRecords) and the
SL2VL tables the switches hold. Figures, over the routes from every CA port to the base LID of
every other CA port:
  delivered / pairs    routes that reach their port;
  max load, max/mean   routes per directed switch-to-switch link: the most any link carries,
                       and that over the mean of all such links (idle ones included);
  worst shift          16 shift permutations (hosts in LID order, host i sends to host i + k,
                       k = 1 + j (N - 1) / 16 for j = 0..15): the most routes one link carries
                       in one of them;
  VLs                  the distinct VLs the hops use (SL from the SA, SL2VL of each hop);
  credit loops         channels (link, VL) that lie on a cycle of the routes' dependencies
                       (0: free of credit loops), over every CA port to every LID of every CA
                       port, as routing/deadlock.c counts them.
Python 3 standard library only."""
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "sim"))
import harness as h  # noqa: E402


def cyclic_channels(deps):
    """Channels on some cycle of DEPS ({channel: set of channels}): the members of the strongly
    connected components of more than one channel (iterative Tarjan)."""
    index, low, on, stack, n, count = {}, {}, set(), [], 0, 0
    nodes = set(deps) | {w for ws in deps.values() for w in ws}
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(deps.get(root, ())))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(deps.get(w, ()))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    count += len(comp)
    return count


def figures(snap, sls=None, sl2vl=None, shifts=16):
    """The figures above as a dict. SLS {(SLID, DLID): SL} (None: SL 0), SL2VL {switch guid:
    {(in, out): [16 VLs]}} (None or missing: VL = SL)."""
    check_sls = bool(sls)  # SLs asked for and some read: every route must have its own
    sls, sl2vl = sls or {}, sl2vl or {}
    missing = 0
    owners = snap.lid_owners()
    ca_lids = sorted(l for l, o in owners.items() if len(o) == 1 and o[0][0] == "CA")
    ports = sorted((p for p in snap.ca_ports() if p.lid and p.peer), key=lambda p: p.lid)
    base = {p.lid for p in ports}
    sw_links = [(n.guid, num) for n in snap.switches() for num, p in n.ports.items()
                if p.peer and snap.nodes.get(p.peer[0]) is not None and snap.nodes[p.peer[0]].type == "SW"]
    load = collections.Counter()
    path = {}
    deps, vls = {}, set()
    pairs = delivered = 0
    for src in ports:
        for lid in ca_lids:
            o = owners[lid][0]
            if o[1].guid == src.node.guid and o[2] == src.num:
                continue
            links, ok = h.route_links(snap, src, lid)
            sl = sls.get((src.lid, lid), 0)
            missing += check_sls and (src.lid, lid) not in sls
            # the VLs and the dependencies of this route
            guid, inp = src.peer
            prev = None
            for g, out in links:
                vl = sl2vl.get(g, {}).get((inp, out), list(range(16)))[sl]
                vls.add(vl)
                chan = (g, out, vl)
                if prev is not None:
                    deps.setdefault(prev, set()).add(chan)
                prev = chan
                peer = snap.nodes[g].ports[out].peer
                inp = peer[1] if peer else 0
            if lid not in base:
                continue
            pairs += 1
            delivered += ok
            path[(src.lid, lid)] = links
            for g, out in links:
                if snap.nodes[snap.nodes[g].ports[out].peer[0]].type == "SW":
                    load[(g, out)] += 1
    sw_load = [load.get(l, 0) for l in sw_links]
    mx = max(sw_load) if sw_load else 0
    mean = sum(sw_load) / len(sw_load) if sw_load else 0
    worst = 0
    n = len(ports)
    for j in range(shifts if n > 1 else 0):
        k = 1 + j * (n - 1) // shifts
        sh = collections.Counter()
        for i, p in enumerate(ports):
            q = ports[(i + k) % n]
            for link in path.get((p.lid, q.lid), ()):
                sh[link] += 1
        worst = max(worst, max(sh.values()) if sh else 0)
    res = {"pairs": pairs, "delivered": delivered, "max_load": mx,
           "max_mean": round(mx / mean, 2) if mean else None, "worst_shift": worst,
           "vls": len(vls), "credit_loops": cyclic_channels(deps), "hosts": n, "sl_missing": missing}
    if missing:  # a route taken on SL 0 for want of its PathRecord would judge other VLs
        res["vls"] = res["credit_loops"] = "n/a (%d routes without an SL)" % missing
    return res
