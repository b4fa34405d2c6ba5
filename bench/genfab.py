#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""genfab.py - writes large XGFT fat trees and random irregular fabrics as ibsim net files for
`make bench`.

The node names are "H-<guid>" / "S-<guid>" where <guid> is the node GUID ibsim 0.10 itself
gives the node (ibsim ignores the names and counts in file order): the k-th switch of the
file gets 0x200000 + k, the k-th CA gets 0x100000 + 2k (its port GUID is one more), so root
and CN GUID files agree between ibsim, OpenSM and `ibsm --fabric`.

XGFT(h; m1..mh; w1..wh): level 0 holds the hosts, level l the switches. A node of level l is
labelled (a_h .. a_{l+1}, b_l .. b_1) with a_i < m_i and b_i < w_i; the child
(a_h .. a_l, b_{l-1} .. b_1) is linked to every parent (a_h .. a_{l+1}, x, b_{l-1} .. b_1),
x < w_l. A k-ary n-tree is --m k,..,k --w 1,k,..,k.

usage: genfab.py xgft --m 16,16,8 --w 1,16,16 [-o FILE] [--roots FILE] [--cns FILE]
"""
import argparse
import itertools
import sys

SWITCH_GUID_BASE = 0x200000
CA_GUID_BASE = 0x100000


class NetFile:
    """Nodes in creation order plus per-node port maps; ports are handed out in link order."""

    def __init__(self):
        self.switches = []      # names, in creation (= file) order
        self.cas = []
        self.radix = {}         # name -> declared port count
        self.peer = {}          # name -> {port: (peer name, peer port)}

    def new_switch(self, radix):
        name = "S-%016x" % (SWITCH_GUID_BASE + len(self.switches))
        self.switches.append(name)
        self._declare(name, radix)
        return name

    def new_ca(self):
        name = "H-%016x" % (CA_GUID_BASE + 2 * len(self.cas))
        self.cas.append(name)
        self._declare(name, 1)
        return name

    def _declare(self, name, radix):
        self.radix[name] = radix
        self.peer[name] = {}

    def connect(self, a, b):
        pa = len(self.peer[a]) + 1
        pb = len(self.peer[b]) + 1
        self.peer[a][pa] = (b, pb)
        self.peer[b][pb] = (a, pa)

    def ports(self, name):
        return max(self.radix[name], len(self.peer[name]))

    def write(self, out):
        # CAs first: ibsim attaches its clients (the SM) to the first CA port of the file
        for kind, names in (("Hca", self.cas), ("Switch", self.switches)):
            for name in names:
                out.write('%s\t%d "%s"\n' % (kind, self.ports(name), name))
                for port, (rname, rport) in sorted(self.peer[name].items()):
                    out.write('[%d]\t"%s"[%d]\n' % (port, rname, rport))
                out.write("\n")

    def summary(self):
        """Sizes ibsim needs: -N nodes, -S switches, -P ports (switch port 0 included)."""
        nsw, nca = len(self.switches), len(self.cas)
        ports = sum(self.ports(n) + 1 for n in self.switches) + sum(self.ports(n) for n in self.cas)
        return {"hosts": nca, "switches": nsw, "nodes": nsw + nca, "ports": ports,
                "max_radix": max(self.ports(n) for n in self.radix)}


def xgft(m, w):
    """Builds XGFT(h; m; w). Returns (NetFile, top-level switch names)."""
    if len(m) != len(w) or not m:
        raise ValueError("--m and --w need the same, non-zero number of levels")
    h = len(m)
    fab = NetFile()
    levels = []
    for lvl in range(h + 1):
        # label digits, most significant first: a_h .. a_{lvl+1}, then b_lvl .. b_1
        digits = [range(m[i]) for i in reversed(range(lvl, h))] + \
                 [range(w[i]) for i in reversed(range(lvl))]
        nodes = {}
        for label in itertools.product(*digits):
            if lvl == 0:
                nodes[label] = fab.new_ca()
            else:
                up = w[lvl] if lvl < h else 0
                nodes[label] = fab.new_switch(m[lvl - 1] + up)
        levels.append(nodes)
    for lvl in range(1, h + 1):
        n_a = h - lvl + 1          # child label: a_h .. a_lvl (n_a digits), then b_{lvl-1} .. b_1
        for label, child in levels[lvl - 1].items():
            high, low = label[:n_a - 1], label[n_a:]
            for x in range(w[lvl - 1]):
                fab.connect(child, levels[lvl][high + (x,) + low])
    return fab, list(levels[h].values())


def irregular(switches, hosts, degree, seed):
    """A random connected irregular fabric: SWITCHES switches of radix HOSTS + DEGREE, HOSTS
    hosts on each; a random spanning tree first, then random switch-to-switch links (no
    parallel ones) until every switch has DEGREE links or no pair is left. Same SEED, same
    fabric (Python's random.Random)."""
    import random
    rnd = random.Random(seed)
    fab = NetFile()
    hs = []
    for _ in range(switches * hosts):
        hs.append(fab.new_ca())
    sw = [fab.new_switch(hosts + degree) for _ in range(switches)]
    for i, name in enumerate(sw):
        for k in range(hosts):
            fab.connect(hs[i * hosts + k], name)
    links = {i: set() for i in range(switches)}
    order = list(range(switches))
    rnd.shuffle(order)
    for k in range(1, switches):
        a, b = order[k], order[rnd.randrange(k)]
        links[a].add(b)
        links[b].add(a)
    pairs = [(a, b) for a in range(switches) for b in range(a + 1, switches)]
    rnd.shuffle(pairs)
    for a, b in pairs:
        if len(links[a]) < degree and len(links[b]) < degree and b not in links[a]:
            links[a].add(b)
            links[b].add(a)
    for a in range(switches):
        for b in sorted(links[a]):
            if a < b:
                fab.connect(sw[a], sw[b])
    return fab


def irregular_name(switches, hosts, degree, seed):
    return "irregular-s%d-h%d-d%d-seed%d" % (switches, hosts, degree, seed)


def write_irregular(path, switches, hosts, degree, seed):
    fab = irregular(switches, hosts, degree, seed)
    with open(path, "w") as out:
        out.write("# %s (bench/genfab.py)\n" % irregular_name(switches, hosts, degree, seed))
        fab.write(out)
    return fab.summary()


def xgft_name(m, w):
    return "xgft-%s-w%s" % ("-".join(map(str, m)), "-".join(map(str, w)))


def write_xgft(path, m, w, roots=None, cns=None):
    """Writes the net file (and optional root/CN GUID files); returns NetFile.summary()."""
    fab, top = xgft(m, w)
    with open(path, "w") as out:
        out.write("# %s (bench/genfab.py)\n" % xgft_name(m, w))
        fab.write(out)
    if roots:
        with open(roots, "w") as out:
            out.writelines("0x%s\n" % n[2:] for n in top)
    if cns:
        with open(cns, "w") as out:
            out.writelines("0x%016x\n" % (int(n[2:], 16) + 1) for n in fab.cas)
    return fab.summary()


def main():
    ap = argparse.ArgumentParser(description="XGFT fat-tree net files with ibsim GUID numbering")
    sub = ap.add_subparsers(dest="topology", required=True)
    x = sub.add_parser("xgft")
    x.add_argument("--m", required=True, help="children per level, e.g. 16,16,8")
    x.add_argument("--w", required=True, help="parents per level, e.g. 1,16,16")
    x.add_argument("-o", "--out", default="/dev/stdout")
    x.add_argument("--roots", help="write the top switch GUIDs here")
    x.add_argument("--cns", help="write the CA port GUIDs here")
    a = ap.parse_args()
    m = [int(v) for v in a.m.split(",")]
    w = [int(v) for v in a.w.split(",")]
    try:
        s = write_xgft(a.out, m, w, a.roots, a.cns)
    except ValueError as e:
        sys.exit("genfab: %s" % e)
    sys.stderr.write("hosts=%(hosts)d switches=%(switches)d nodes=%(nodes)d ports=%(ports)d "
                     "max_radix=%(max_radix)d\n" % s)


if __name__ == "__main__":
    main()
