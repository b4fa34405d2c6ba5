# SPDX-License-Identifier: BSD-2-Clause
"""fastcheck.py - every (host port, LID) pair of a large fabric checked in seconds, not hours.

tests/sim/harness.py walk_routes loops over every source for every destination LID: 67 million
pairs in Python at 8192 hosts. Routing is by destination, so every host behind one switch
shares its route from that switch on: here each switch's next hop towards a LID is resolved
once (memoised over the LFTs read back, linear in switches x LIDs), and every host port behind
a switch takes that switch's verdict, so every pair is still judged, with the same verdicts as
walk_routes (loop, black hole, wrong port, down link, too long; hops; non-minimal routes).

The same pass builds the channel dependency graph of the routes between host ports, every
hop on VL 0 (what harness.vl_credit_loops does with no SL2VL and no PathRecord SLs), and looks
for a cycle: a credit loop. Engines that break loops with SLs (torus-2QoS, dfsssp, nue, lash)
need the per-pair SLs: chaos.py uses harness.vl_credit_loops for them, on small fabrics.

Switch-to-switch distances (for the shortest path of each pair) are kept between calls while
the topology is the same: the faults of a chaos step are undone before its sample."""
import collections
import concurrent.futures
import os
import re
import sys
import time

import harness as h

NO_PORT = h.NO_PORT
_NOLINK, _DOWN = -1, -2       # next-hop codes; >= 0 a switch index; <= -10 a CA port (-10 - i)


class Report(h.RouteReport):
    """A harness.RouteReport (pairs, delivered, failed, examples, hops, max_hops, max_shortest,
    non_minimal) plus the credit-loop verdict: cycle (text or None), cdg_edges, routes."""

    def __init__(self):
        super().__init__()
        self.cycle = None
        self.cdg_edges = 0
        self.routes = 0          # host-to-host-LID routes in the dependency graph

    def cdg_summary(self):
        return "%d CA-to-CA routes, %d channel dependencies on VL 0%s" % (
            self.routes, self.cdg_edges, "; " + self.cycle if self.cycle else ": no credit loop")


class Checker:
    """Holds the distance cache between calls; check(snap) -> Report."""

    def __init__(self):
        self._dist_sig = None
        self._dist = {}

    def check(self, snap, cdg=True):
        rep = Report()
        sws = snap.switches()
        nsw = len(sws)
        idx = {n.guid: i for i, n in enumerate(sws)}

        def active(port):
            peer = snap.port(*port.peer) if port.peer else None
            return port.state == "Active" and peer is not None and peer.state == "Active"

        ca_ports = []                     # (node guid, port num) -> index
        ca_index = {}
        for p in snap.ca_ports():
            ca_index[(p.node.guid, p.num)] = len(ca_ports)
            ca_ports.append(p)
        # per switch: port number -> next-hop code
        nh = []
        adj = []
        for i, n in enumerate(sws):
            t = [_NOLINK] * 256
            a = set()
            for num, p in n.ports.items():
                peer = snap.nodes.get(p.peer[0]) if p.peer else None
                if peer is None:
                    t[num] = _NOLINK
                elif not active(p):
                    t[num] = _DOWN
                elif peer.type == "SW":
                    t[num] = idx[peer.guid]
                    a.add(idx[peer.guid])
                else:
                    ci = ca_index.get(p.peer)
                    t[num] = -10 - ci if ci is not None else _NOLINK
            nh.append(t)
            adj.append(tuple(sorted(a)))
        lfts = [bytes(snap.lfts.get(n.guid, b"")) for n in sws]
        # the sources: CA ports attached to a switch, by switch
        by_sw = collections.defaultdict(list)       # switch index -> [(ca index, active)]
        cdg_src = collections.defaultdict(int)      # switch index -> CA ports with a LID and a peer
        for ci, p in enumerate(ca_ports):
            sw = snap.nodes.get(p.peer[0]) if p.peer else None
            if sw is not None and sw.type == "SW":
                by_sw[idx[sw.guid]].append((ci, active(p)))
            if p.peer is not None and p.lid and sw is not None and sw.type == "SW":
                cdg_src[idx[sw.guid]] += 1
        rep.sources = sum(len(v) for v in by_sw.values())
        src_sw = sorted(by_sw)
        n_active = {i: sum(1 for _, a in by_sw[i] if a) for i in src_sw}
        where = {ci: (i, a) for i in src_sw for ci, a in by_sw[i]}

        sig = hash(tuple(adj))
        if sig != self._dist_sig:
            self._dist_sig, self._dist = sig, {}

        def distances(g):
            d = self._dist.get(g)
            if d is None:
                d = [-1] * nsw
                d[g] = 0
                queue = collections.deque([g])
                while queue:
                    v = queue.popleft()
                    dv = d[v] + 1
                    for w in adj[v]:
                        if d[w] < 0:
                            d[w] = dv
                            queue.append(w)
                self._dist[g] = d
            return d

        deps = set() if cdg else None
        CH = 256
        E = nsw * CH
        failed = rep.failed
        examples = rep.examples
        hopc = rep.hops
        for lid, owners in sorted(snap.lid_owners().items()):
            if len(owners) != 1:
                continue
            kind, dnode, dport = owners[0]
            rep.dest_lids += 1
            is_ca = kind == "CA"
            if is_ca:
                dca = ca_index.get((dnode.guid, dport))
                dcode = -10 - dca if dca is not None else None
                peer = snap.nodes.get(dnode.ports[dport].peer[0]) if dnode.ports[dport].peer else None
                dsw = idx[peer.guid] if peer is not None and peer.type == "SW" else None
                dsw_self = None
            else:
                dcode = None
                dsw = dsw_self = idx[dnode.guid]
            dist = distances(dsw) if dsw is not None else None
            memo = [None] * nsw        # switch -> hops to the destination port, or a failure text
            want_cdg = cdg and is_ca

            def resolve(g):
                path = []
                cur = g
                while True:
                    r = memo[cur]
                    if r is not None:
                        break
                    if r is None and cur in path:
                        r = h.LOOP
                        break
                    if len(path) > 64:
                        r = h.TOO_LONG
                        break
                    path.append(cur)
                    lft = lfts[cur]
                    out = lft[lid] if lid < len(lft) else NO_PORT
                    if out == 0:
                        r = 0 if cur == dsw_self else "%s (to %s port 0)" % (h.WRONG, sws[cur].name())
                        path.pop()
                        memo[cur] = r
                        break
                    if out == NO_PORT:
                        r = h.NO_ENTRY
                        path.pop()
                        memo[cur] = r
                        break
                    code = nh[cur][out]
                    if code >= 0:
                        if want_cdg:
                            nl = lfts[code]
                            o2 = nl[lid] if lid < len(nl) else NO_PORT
                            if o2 != NO_PORT and o2 in sws[code].ports:
                                deps.add((cur * CH + out) * E + code * CH + o2)
                        cur = code
                        continue
                    if code == _NOLINK:
                        r = h.NO_LINK
                    elif code == _DOWN:
                        r = h.DOWN
                    else:
                        r = 1 if code == dcode else h.WRONG
                    path.pop()
                    memo[cur] = r
                    break
                for s in reversed(path):
                    if isinstance(r, int):
                        r += 1
                    memo[s] = r
                return memo[g]

            pairs = 0
            self_ca = where.get(dca) if is_ca and dca is not None else None
            for i in src_sw:
                srcs = by_sw[i]
                n = len(srcs)
                act = n_active[i]
                if self_ca is not None and self_ca[0] == i:
                    n -= 1
                    if self_ca[1]:
                        act -= 1
                if n <= 0:
                    continue
                pairs += n
                if act < n:
                    failed[h.DOWN] += n - act
                    if len(examples[h.DOWN]) < 3:
                        for ci, a in srcs:
                            if not a and ci != dca:
                                examples[h.DOWN].append("%s -> LID %d (%s %s)" % (
                                    ca_ports[ci].name(), lid, kind, dnode.name()))
                                break
                if act <= 0:
                    continue
                r = resolve(i)
                if isinstance(r, int):
                    hops = r + 1
                    rep.delivered += act
                    hopc[hops] += act
                    if hops > rep.max_hops:
                        rep.max_hops = hops
                    if dist is not None and dist[i] >= 0:
                        shortest = dist[i] + (2 if is_ca else 1)
                        if shortest > rep.max_shortest:
                            rep.max_shortest = shortest
                        if hops > shortest:
                            rep.non_minimal += act
                else:
                    base = r.split(" (")[0]
                    failed[base] += act
                    if len(examples[base]) < 3:
                        ci = next(c for c, a in srcs if a and c != dca)
                        examples[base].append("%s -> LID %d (%s %s)" % (
                            ca_ports[ci].name(), lid, kind, dnode.name()))
                if want_cdg and cdg_src.get(i):
                    rep.routes += cdg_src[i] - (1 if self_ca is not None and self_ca[0] == i else 0)
            rep.pairs += pairs
            rep.per_lid[lid] = [pairs, None]
        if cdg:
            rep.cdg_edges = len(deps)
            cyc = _find_cycle(deps, E)
            if cyc is not None:
                rep.cycle = "cycle: " + " -> ".join("%s[%d] VL 0" % (sws[c // CH].name(), c % CH) for c in cyc)
        return rep


def _find_cycle(deps, E):
    """One cycle of the graph given as edges a * E + b, as a list of channels, or None."""
    succ = collections.defaultdict(list)
    for e in deps:
        succ[e // E].append(e % E)
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {}
    for root in list(succ):
        if colour.get(root):
            continue
        stack = [(root, iter(succ[root]))]
        colour[root] = GREY
        while stack:
            v, it = stack[-1]
            for w in it:
                c = colour.get(w, WHITE)
                if c == GREY:
                    cyc = [x for x, _ in stack]
                    return cyc[cyc.index(w):] + [w]
                if c == WHITE:
                    colour[w] = GREY
                    stack.append((w, iter(succ.get(w, ()))))
                    break
            else:
                colour[v] = BLACK
                stack.pop()
    return None


_HEAD_RE = re.compile(r"^Unicast lids .*$", re.M)
_ENTRY_RE = re.compile(r"^0x([0-9a-fA-F]+) (\d+)", re.M)
# digit -> its value in each of the three decimal places of dump_fts's "%03d" out port
_D100 = bytes.maketrans(b"0123456789", bytes([0, 100, 200, 0, 0, 0, 0, 0, 0, 0]))
_D10 = bytes.maketrans(b"0123456789", bytes(range(0, 100, 10)))
_D1 = bytes.maketrans(b"0123456789", bytes(range(10)))


def _section_fast(body, top):
    """The out ports of one switch's dump_fts -n lines when they are the fixed-width
    '0xLLLL PPP \n' for every LID 0..TOP in order (what dump_fts prints with -a): the three
    digit columns are cut out by slicing and summed as big integers (no carry: a port <= 255),
    all at C speed. None when the section is not exactly that (the slow parse takes it)."""
    n = min(top + 1, body.count(b"\n0x") + 1)     # LID top is missing when top % 64 == 0
    if n < 1 or len(body) < 12 * n:
        return None
    body = body[:12 * n]
    if body[0::12] != b"0" * n or body[11::12] != b"\n" * n or body[6::12] != b" " * n \
            or body[10::12] != b" " * n or body[:6] != b"0x0000" or \
            int(body[12 * n - 10:12 * n - 6], 16) != n - 1:
        return None
    a = int.from_bytes(body[7::12].translate(_D100), "big")
    b = int.from_bytes(body[8::12].translate(_D10), "big")
    c = int.from_bytes(body[9::12].translate(_D1), "big")
    return bytearray((a + b + c).to_bytes(n, "big")) + bytearray([NO_PORT]) * (top + 1 - n)


def parse_lfts(snap, text):
    """What harness.Snapshot.parse_lfts does, in seconds rather than minutes on a large fabric
    (dump_fts -n -a of 1200 switches x 9200 LIDs is 11 million lines): fills snap.lfts and
    snap.lft_top, returns {switch guid: DR path} for Snapshot.fix_top_blocks."""
    paths = {}
    heads = list(_HEAD_RE.finditer(text))
    for k, m in enumerate(heads):
        line = m.group(0)
        g = int(re.search(r"guid (0x[0-9a-fA-F]+)", line).group(1), 16)
        mt = re.search(r"\[0x([0-9a-fA-F]+)-0x([0-9a-fA-F]+)\]", line)
        md = re.search(r"DR path slid \d+; dlid \d+; ([0-9,]+)", line)
        top = int(mt.group(2), 16) if mt else 0
        if md:
            paths[g] = md.group(1)
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        sec = text[m.end():end]
        first = sec.find("\n0x")
        lft = None
        if first >= 0:
            body = sec[first + 1:].encode("ascii", "replace")
            lft = _section_fast(body, top)
        if lft is None:
            lft = bytearray([NO_PORT]) * (top + 1)
            for lm in _ENTRY_RE.finditer(sec):
                lid = int(lm.group(1), 16)
                if lid >= len(lft):
                    lft.extend(bytearray([NO_PORT]) * (lid + 1 - len(lft)))
                lft[lid] = min(int(lm.group(2)), NO_PORT)
        snap.lfts[g] = lft
        snap.lft_top[g] = top
    return paths


LFT_BLOCK = None     # the lft_block executable, when chaos.py could build it


def fix_top_blocks(snap, sim, host, paths, jobs=6):
    """harness.Snapshot.fix_top_blocks (dump_fts never shows LID LinearFDBTop when it is a
    multiple of 64: 8192 hosts + 1280 switches = 148 x 64 LIDs), its smpdumps run JOBS at a
    time: one per switch, a fifth of a second each, minutes in a row at 1280 switches."""
    todo = [(g, top) for g, top in snap.lft_top.items() if top and not top % 64 and g in paths]
    if not todo:
        return
    if LFT_BLOCK:                 # tests/chaos/lft_block.c: every switch's block in one process
        r = h.run([LFT_BLOCK], env=sim.env(host), cwd=sim.rundir, timeout=600,
                  stdin_text="".join("%s %d\n" % (paths[g], top // 64) for g, top in todo))
        got = {}
        for line in r.out.splitlines():
            f = line.split()
            if len(f) == 66:
                got[f[0]] = int(f[2])
        for g, top in todo:
            if paths[g] in got:
                snap.lfts[g][top] = got[paths[g]]
            else:
                snap.errors.append("lft_block: no block %d of the switch at %s: %s" % (
                    top // 64, paths[g], (r.out + r.err)[-300:]))
        return

    def one(item):
        g, top = item
        return g, top, sim.run(["smpdump", "-D", paths[g], "0x19", str(top // 64)], host=host, timeout=60)

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for g, top, r in ex.map(one, todo):
            words = "".join(re.findall(r"\b[0-9a-fA-F]{4}\b", "\n".join(
                l for l in r.out.splitlines() if not l.startswith("SMP"))))
            if r.rc != 0 or len(words) < 2:
                snap.errors.append(r.describe())
                continue
            snap.lfts[g][top] = int(words[0:2], 16)


def read_sl2vl(sim, snap, host=None, jobs=6):
    """harness.read_sl2vl ({switch guid: {(in, out): [16 VLs]}}, smpquery sl2vl LID OUT for
    every switch output with a link), JOBS smpqueries at a time."""
    todo = [(sw.guid, sw.lid, p) for sw in snap.switches() for p in sorted(sw.ports)
            if sw.ports[p].peer is not None]

    def one(item):
        g, lid, p = item
        return g, sim.run(["smpquery", "sl2vl", str(lid), str(p)], host=host, timeout=30)

    out = {sw.guid: {} for sw in snap.switches()}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for g, r in ex.map(one, todo):
            for m in re.finditer(r"ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})", r.out):
                out[g][(int(m.group(1)), int(m.group(2)))] = [int(x) for x in m.group(3).split("|") if x.strip()]
    return out


def collect(sim, host=None, timeout=600):
    """harness.Snapshot.collect (ibnetdiscover, iblinkinfo, dump_fts -n -a from HOST) with a
    ceiling of TIMEOUT s per tool instead of 60 (dump_fts reads 174 000 LFT blocks at 8192 hosts)
    and the fast LFT parse. Returns (snapshot, {tool: seconds})."""
    s = h.Snapshot()
    took = {}
    cache = os.path.join(sim.dir, "ibnd-%d.cache" % time.monotonic_ns())
    for tool, argv, parse in (("ibnetdiscover", ["ibnetdiscover", "--cache", cache], s.parse_topology),
                              ("iblinkinfo", ["iblinkinfo", "--load-cache", cache, "-l"], s.parse_linkinfo),
                              ("dump_fts", ["dump_fts", "-n", "-a"], None)):
        t = time.time()
        r = sim.run(argv, host=host, timeout=timeout)
        if r.rc != 0:
            s.errors.append(r.describe())
        if parse is not None:
            parse(r.out)
        else:
            paths = parse_lfts(s, r.out)
        took[tool] = round(time.time() - t, 2)
        if len(r.out) < 1 << 20:
            s.raw[tool] = r.out
    t = time.time()
    fix_top_blocks(s, sim, host, paths)
    took["top_blocks"] = round(time.time() - t, 2)
    try:
        os.unlink(cache)
    except OSError:
        pass
    return s, took


def check_routes(rep):
    """(ok, detail) as harness.check_routes judges a walk_routes report."""
    ok = rep.ok() and rep.max_hops <= rep.max_shortest
    detail = rep.summary()
    if rep.max_hops > rep.max_shortest:
        detail += "; routes longer than the longest shortest path"
    return ok, detail


if __name__ == "__main__":       # self-check: the same verdicts as harness on a net file's sim
    sys.exit(0)
