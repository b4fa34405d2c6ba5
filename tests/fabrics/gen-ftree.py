#!/usr/bin/env python3
"""gen-ftree.py - writes the fat-tree fabrics of ibsm's fat-tree engine tests (13-ftree.t).

The files are checked in; re-running this script rewrites them byte for byte. Format: the
ibsim / ibnetdiscover "net" file. Every node record is preceded by a `switchguid=` /
`caguid=` line, so GUIDs are fixed: switch i (1-based, in the order below) has node GUID
0x0003000000000000 + i, host j node GUID 0x0004000000000000 + 16 * j (port p: + p). Hosts are
written first (the first one is ibsim's attach point). Links appear on both ends.

  ftree-3l.net           4-ary 3-tree: 16 leaves x 4 hosts, 16 aggregation, 16 top switches
  ftree-3l-partial.net   the same with 8 hosts missing (leaves 3, 6, 11 keep 2, 1, 1)
  ftree-2l-degraded.net  4-ary 2-tree without link leaf-1 : top-1 (pure rules broken),
                         with ftree-2l-degraded.roots (the top switches, for -a)
  ftree-2l-par2.net      2-level tree with parallel up links: 4 leaves x 4 hosts, 2 top
                         switches, two cables between every leaf and every top switch (each
                         leaf: 4 host ports, 4 up cables; still non-blocking)
  ftree-3l-par2.net      the 4-ary 3-tree with its aggregation and top switches merged in
                         pairs: 16 leaves x 4 hosts; per pod of 4 leaves 2 aggregation
                         switches (16 ports), 8 top switches (8 ports); two parallel cables
                         between a leaf and each aggregation switch of its pod, and between an
                         aggregation switch and each of its 4 top switches. Cable for cable the
                         same routes as ftree-3l.net are possible, so non-blocking too

Usage: gen-ftree.py   (writes next to itself)
"""

import os

SW_BASE = 0x0003000000000000
CA_BASE = 0x0004000000000000


class Net:
    def __init__(self):
        self.nodes = {}
        self.order = []

    def node(self, kind, name, nports, guid):
        self.nodes[name] = dict(kind=kind, nports=nports, ports={}, guid=guid)
        self.order.append(name)

    def link(self, a, pa, b, pb):
        na, nb = self.nodes[a], self.nodes[b]
        assert pa not in na["ports"] and pb not in nb["ports"], (a, pa, b, pb)
        na["ports"][pa] = (b, pb)
        nb["ports"][pb] = (a, pa)

    def text(self, header):
        out = ["# " + line for line in header] + [""]
        for name in self.order:
            n = self.nodes[name]
            if n["kind"] == "Switch":
                out.append("switchguid=0x%016x" % n["guid"])
            else:
                out.append("caguid=0x%016x" % n["guid"])
            out.append('%s\t%d "%s"' % (n["kind"], n["nports"], name))
            for p in sorted(n["ports"]):
                peer, pp = n["ports"][p]
                out.append('[%d]\t"%s"[%d]' % (p, peer, pp))
            out.append("")
        return "\n".join(out)


def ktree(k, levels, hosts_per_leaf=None, drop=(), par=1):
    """k-ary tree of 2 or 3 levels; hosts_per_leaf: list per leaf; drop: (leaf, up) pairs;
    par (2 levels only): cables between a leaf and each top switch, with k / par top
    switches (leaf up port k + 1 + par * t + c goes to top t + 1, port par * leaf + c + 1)."""
    assert par == 1 or (levels == 2 and k % par == 0 and not drop)
    net = Net()
    nleaf = k if levels == 2 else k * k
    hosts = hosts_per_leaf or [k] * nleaf
    j = 0
    for leaf in range(nleaf):
        for i in range(hosts[leaf]):
            j += 1
            net.node("Hca", "host-%d" % j, 1, CA_BASE + 16 * j)
    sw = 0
    names = []

    def add(name):
        nonlocal sw
        sw += 1
        net.node("Switch", name, 2 * k, SW_BASE + sw)
        names.append(name)

    for leaf in range(nleaf):
        add("leaf-%d" % (leaf + 1))
    if levels == 3:
        for a in range(k * k):
            add("agg-%d" % (a + 1))
    tops = []
    for t in range(k // par if levels == 2 else k * k):
        add("top-%d" % (t + 1))
        tops.append("top-%d" % (t + 1))
    j = 0
    for leaf in range(nleaf):
        for i in range(hosts[leaf]):
            j += 1
            net.link("leaf-%d" % (leaf + 1), i + 1, "host-%d" % j, 1)
    if levels == 2 and par > 1:
        for leaf in range(k):
            for t in range(k // par):
                for c in range(par):
                    net.link("leaf-%d" % (leaf + 1), k + 1 + par * t + c, "top-%d" % (t + 1),
                             par * leaf + c + 1)
    elif levels == 2:
        for leaf in range(k):
            for t in range(k):
                if (leaf + 1, t + 1) in drop:
                    continue
                net.link("leaf-%d" % (leaf + 1), k + 1 + t, "top-%d" % (t + 1), leaf + 1)
    else:
        for pod in range(k):
            for a in range(k):
                for b in range(k):
                    leaf = pod * k + a
                    if (leaf + 1, b + 1) in drop:
                        continue
                    net.link("leaf-%d" % (leaf + 1), k + 1 + b, "agg-%d" % (pod * k + b + 1),
                             a + 1)
        for pod in range(k):
            for b in range(k):
                for c in range(k):
                    net.link("agg-%d" % (pod * k + b + 1), k + 1 + c, "top-%d" % (b * k + c + 1),
                             pod + 1)
    return net, [net.nodes[t]["guid"] for t in tops]


def merged_3l(k=4):
    """ftree-3l.net's 4-ary 3-tree with aggregation switches 2x, 2x+1 of every pod merged into
    agg (pod, x) and top switches (2x)k+c, (2x+1)k+c into top (x, c): every cable kept."""
    net = Net()
    nleaf, half = k * k, k // 2
    for j in range(1, nleaf * k + 1):
        net.node("Hca", "host-%d" % j, 1, CA_BASE + 16 * j)
    sw = 0
    for name, nports, count in (("leaf", 2 * k, nleaf), ("agg", 4 * k, k * half), ("top", 2 * k, half * k)):
        for i in range(count):
            sw += 1
            net.node("Switch", "%s-%d" % (name, i + 1), nports, SW_BASE + sw)
    for j in range(nleaf * k):
        net.link("leaf-%d" % (j // k + 1), j % k + 1, "host-%d" % (j + 1), 1)
    for pod in range(k):
        for a in range(k):                      # leaf a of the pod
            leaf = pod * k + a
            for b in range(k):                  # its b-th up cable: old agg b = merged b // 2
                net.link("leaf-%d" % (leaf + 1), k + 1 + b, "agg-%d" % (pod * half + b // 2 + 1),
                         2 * a + b % 2 + 1)
        for b in range(k):                      # old agg b of the pod, its c-th up cable
            for c in range(k):                  # old top b * k + c = merged top (b // 2, c)
                net.link("agg-%d" % (pod * half + b // 2 + 1), 2 * k + 1 + (b % 2) * k + c,
                         "top-%d" % ((b // 2) * k + c + 1), 2 * pod + b % 2 + 1)
    return net


def write(dirname, name, net, header):
    with open(os.path.join(dirname, name), "w") as fp:
        fp.write(net.text(header))


def main():
    d = os.path.dirname(os.path.abspath(__file__))
    net, _ = ktree(4, 3)
    write(d, "ftree-3l.net", net,
          ["ftree-3l.net - 4-ary 3-tree: 64 hosts, 16 leaves, 16 aggregation, 16 top switches.",
           "Written by gen-ftree.py."])
    hosts = [4] * 16
    hosts[2], hosts[5], hosts[10] = 2, 1, 1
    net, _ = ktree(4, 3, hosts)
    write(d, "ftree-3l-partial.net", net,
          ["ftree-3l-partial.net - 4-ary 3-tree with 8 hosts missing (leaves 3, 6, 11 short).",
           "Written by gen-ftree.py."])
    net, tops = ktree(4, 2, drop={(1, 1)})
    write(d, "ftree-2l-degraded.net", net,
          ["ftree-2l-degraded.net - 4-ary 2-tree without link leaf-1 : top-1.",
           "Written by gen-ftree.py; ftree-2l-degraded.roots lists the top switches."])
    with open(os.path.join(d, "ftree-2l-degraded.roots"), "w") as fp:
        fp.write("".join("0x%016x\n" % g for g in tops))
    net, _ = ktree(4, 2, par=2)
    write(d, "ftree-2l-par2.net", net,
          ["ftree-2l-par2.net - 2-level tree, 4 leaves x 4 hosts, 2 top switches, two parallel",
           "cables between every leaf and every top switch (leaf ports 5-6 to top-1, 7-8 to top-2).",
           "Written by gen-ftree.py."])
    write(d, "ftree-3l-par2.net", merged_3l(4),
          ["ftree-3l-par2.net - ftree-3l.net with aggregation and top switches merged in pairs:",
           "16 leaves x 4 hosts, 8 aggregation (16 ports, 2 per pod), 8 top switches (8 ports);",
           "two parallel cables leaf - aggregation and aggregation - top. Written by gen-ftree.py."])


if __name__ == "__main__":
    main()
