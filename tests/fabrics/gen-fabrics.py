#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""gen-fabrics.py - writes the small fabric files of ibsm's own tests (and the demo fabric).

The files are checked in; re-running this script rewrites them byte for byte. Format: the
ibsim / ibnetdiscover "net" file. GUIDs come from ibsim's counters: a `caguid=` /
`switchguid=` line sets the base, every CA then takes base, base+1..base+nports for its
ports and advances the counter by nports + 1; every switch takes one GUID. Every link is
written on both ends (ibsim 0.10 refuses links declared on one side only), records are
separated by a blank line, and the first record is a host (ibsim's default attach point).

Usage: gen-fabrics.py [--demo PATH]   (writes tiny, ftree-small, torus-4x4, irregular,
                                       chain-mixed here)
"""

import argparse
import os
import sys


class Net:
    def __init__(self):
        self.nodes = {}   # name -> dict(kind, nports, ports{p: (peer, pp)}, extra)
        self.order = []

    def node(self, kind, name, nports, header_comment=None, pre=None):
        assert name not in self.nodes, name
        self.nodes[name] = dict(kind=kind, nports=nports, ports={},
                                comment=header_comment, pre=pre or [])
        self.order.append(name)

    def link(self, a, pa, b, pb):
        na, nb = self.nodes[a], self.nodes[b]
        assert 1 <= pa <= na["nports"] and 1 <= pb <= nb["nports"], (a, pa, b, pb)
        assert pa not in na["ports"] and pb not in nb["ports"], (a, pa, b, pb)
        na["ports"][pa] = (b, pb)
        nb["ports"][pb] = (a, pa)

    def text(self, header, globals_):
        out = [f"# {line}".rstrip() for line in header] + [""]
        out += globals_ + [""]
        for name in self.order:
            n = self.nodes[name]
            out += n["pre"]
            head = f'{n["kind"]}\t{n["nports"]} "{name}"'
            if n["comment"]:
                head += f"\t# {n['comment']}"
            out.append(head)
            for p in sorted(n["ports"]):
                peer, pp = n["ports"][p]
                out.append(f'[{p}]\t"{peer}"[{pp}]')
            out.append("")
        return "\n".join(out)


def tiny():
    n = Net()
    n.node("Hca", "h1", 2, '"h1 dual-port, port 2 unconnected"')
    for h in ("h2", "h3", "h4"):
        n.node("Hca", h, 1)
    n.node("Switch", "sw1", 8)
    n.node("Switch", "sw2", 8)
    n.link("h1", 1, "sw1", 1)
    n.link("h2", 1, "sw1", 2)
    n.link("h3", 1, "sw2", 1)
    n.link("h4", 1, "sw2", 2)
    n.link("sw1", 7, "sw2", 7)
    n.link("sw1", 8, "sw2", 8)
    return n.text(["tiny.net - 2 switches joined by 2 parallel links, 4 hosts.",
                   "h1 0x100000 (ports 0x100001, 0x100002), h2 0x100003, h3 0x100005,",
                   "h4 0x100007; sw1 0x200000, sw2 0x200001."],
                  ["caguid=0x100000", "switchguid=0x200000"])


def ftree_small():
    leaves, hosts, spines = 4, 4, 4
    n = Net()
    for li in range(1, leaves + 1):
        for hi in range(1, hosts + 1):
            n.node("Hca", f"h{(li - 1) * hosts + hi}", 1)
    for li in range(1, leaves + 1):
        n.node("Switch", f"leaf{li}", hosts + spines)
    for si in range(1, spines + 1):
        n.node("Switch", f"spine{si}", leaves)
    for li in range(1, leaves + 1):
        for hi in range(1, hosts + 1):
            n.link(f"h{(li - 1) * hosts + hi}", 1, f"leaf{li}", hi)
        for si in range(1, spines + 1):
            n.link(f"leaf{li}", hosts + si, f"spine{si}", li)
    return n.text(["ftree-small.net - 2-level fat tree: 4 leaves x 4 hosts, 4 spines.",
                   "host hN: node GUID 0x10000 + 2*(N-1), port GUID + 1;",
                   "leafN: 0x20000 + N-1; spineN: 0x20004 + N-1.",
                   "leaf ports 1-4 hosts, 5-8 spines 1-4; spine port N = leafN."],
                  ["caguid=0x10000", "switchguid=0x20000"])


def torus():
    X = Y = 4
    n = Net()
    name = lambda x, y: f"t{x}{y}"
    for y in range(Y):
        for x in range(X):
            n.node("Hca", f"h{x}{y}", 1)
    for y in range(Y):
        for x in range(X):
            n.node("Switch", name(x, y), 5)
    for y in range(Y):
        for x in range(X):
            n.link(f"h{x}{y}", 1, name(x, y), 5)
            n.link(name(x, y), 1, name((x + 1) % X, y), 2)   # x+ -> neighbour's x-
            n.link(name(x, y), 3, name(x, (y + 1) % Y), 4)   # y+ -> neighbour's y-
    return n.text(["torus-4x4.net - 4x4 2D torus, one host per switch.",
                   "switch tXY (x, y in 0..3), host hXY on its port 5;",
                   "port 1 = x+, 2 = x-, 3 = y+, 4 = y-.",
                   "hXY: 0x30000 + 2*(4*y + x); tXY: 0x40000 + 4*y + x."],
                  ["caguid=0x30000", "switchguid=0x40000"])


def irregular():
    # 10 switches of 12 ports; links (including parallel ones and several loops)
    sw_links = [(1, 2), (1, 2), (2, 3), (3, 4), (4, 5), (5, 1),       # ring + parallel
                (3, 6), (6, 7), (7, 8), (8, 6),                       # triangle
                (2, 7), (4, 9), (9, 10), (10, 5), (8, 10)]
    hosts_per_sw = [3, 1, 2, 0, 4, 2, 2, 1, 3, 2]                     # 20 hosts
    n = Net()
    hosts = []
    for s, cnt in enumerate(hosts_per_sw, 1):
        for _ in range(cnt):
            hosts.append(s)
    for i, s in enumerate(hosts, 1):
        pre = []
        comment = None
        nports = 1
        if i == 11:
            # a new CA counter base in the middle of the file, and a shared system image
            pre = ["caguid=0x51000", "sysimgguid=0x5aa0000000000001"]
            comment = '"h11 dual-homed"'
            nports = 2
        n.node("Hca", f"h{i}", nports, comment, pre)
    for s in range(1, 11):
        n.node("Switch", f"s{s}", 12, f'"irregular switch {s}"' if s == 1 else None)
    nextp = {s: 1 for s in range(1, 11)}

    def port(s):
        p = nextp[s]
        nextp[s] += 1
        return p
    for i, s in enumerate(hosts, 1):
        n.link(f"h{i}", 1, f"s{s}", port(s))
    n.link("h11", 2, "s5", port(5))      # h11 hangs off s6 and s5
    for a, b in sw_links:
        n.link(f"s{a}", port(a), f"s{b}", port(b))
    return n.text(["irregular.net - 10 switches (12 ports) with loops and a parallel link,",
                   "20 hosts, h11 dual-homed (s6 and s5) with its own system image GUID.",
                   "h1..h10: 0x50000 + 2*(N-1); h11: 0x51000 (ports +1, +2); h12..h20:",
                   "0x51003 + 2*(N-12); sN: 0x60000 + N-1."],
                  ["caguid=0x50000", "switchguid=0x60000"])


def chain_mixed():
    # a 2-level fat tree (tleafN, tspineN, hosts thN) and an irregular part (iswN, hosts ihN)
    # joined by one cable, tleaf4 port 9 to isw1: for routing chains (ftree on the tree, updn
    # on the rest)
    leaves, hosts, spines = 4, 4, 4
    isw_links = [(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 1), (1, 4), (2, 5), (3, 4)]
    ihosts = [0, 2, 2, 1, 3, 2]                                       # 10 hosts on isw1..6
    n = Net()
    for li in range(1, leaves + 1):
        for hi in range(1, hosts + 1):
            n.node("Hca", f"th{(li - 1) * hosts + hi}", 1)
    ih = []
    for s, cnt in enumerate(ihosts, 1):
        ih += [s] * cnt
    for i in range(1, len(ih) + 1):
        n.node("Hca", f"ih{i}", 1)
    for li in range(1, leaves + 1):
        n.node("Switch", f"tleaf{li}", 10)
    for si in range(1, spines + 1):
        n.node("Switch", f"tspine{si}", leaves)
    for s in range(1, 7):
        n.node("Switch", f"isw{s}", 12)
    for li in range(1, leaves + 1):
        for hi in range(1, hosts + 1):
            n.link(f"th{(li - 1) * hosts + hi}", 1, f"tleaf{li}", hi)
        for si in range(1, spines + 1):
            n.link(f"tleaf{li}", hosts + si, f"tspine{si}", li)
    nextp = {s: 1 for s in range(1, 7)}

    def port(s):
        p = nextp[s]
        nextp[s] += 1
        return p
    for i, s in enumerate(ih, 1):
        n.link(f"ih{i}", 1, f"isw{s}", port(s))
    for a, b in isw_links:
        n.link(f"isw{a}", port(a), f"isw{b}", port(b))
    n.link("tleaf4", 9, "isw1", port(1))
    return n.text(["chain-mixed.net - a fat tree and an irregular part, for routing chains:",
                   "tleaf1-4 (ports 1-4 hosts th1-16, 5-8 tspine1-4), tspine1-4 (port N = tleafN);",
                   "isw1-6 (12 ports: a ring, chords 1-4 and 2-5, a parallel 3-4) with hosts",
                   "ih1-10; one cable joins the parts, tleaf4 port 9 to isw1.",
                   "thN: 0x70000 + 2*(N-1); ihN: 0x70020 + 2*(N-1); tleafN: 0x80000 + N-1,",
                   "tspineN: 0x80004 + N-1, iswN: 0x80008 + N-1."],
                  ["caguid=0x70000", "switchguid=0x80000"])


def demo():
    leaves, hosts, spines = 8, 12, 6
    n = Net()
    for li in range(1, leaves + 1):
        for hi in range(1, hosts + 1):
            n.node("Hca", f"hca-{(li - 1) * hosts + hi}", 1)
    for li in range(1, leaves + 1):
        n.node("Switch", f"leaf-{li}", 24)
    for si in range(1, spines + 1):
        n.node("Switch", f"spine-{si}", 12)
    for li in range(1, leaves + 1):
        for hi in range(1, hosts + 1):
            n.link(f"hca-{(li - 1) * hosts + hi}", 1, f"leaf-{li}", hi)
        for si in range(1, spines + 1):
            n.link(f"leaf-{li}", hosts + si, f"spine-{si}", li)
    return n.text(["demo.net - ibsm demo fabric: 2-level fat tree, 8 leaves x 12 hosts,",
                   "6 spines (96 hosts, 14 switches). Leaf ports 1-12 hosts, 13-18",
                   "spines, 19-24 free. hca-N: 0x0002c90300000000 + 2*(N-1) (port +1);",
                   "leaf-N: 0x0002c90400000000 + N-1, spine-N: ... + 8 + N-1.",
                   "Written by tests/fabrics/gen-fabrics.py --demo."],
                  ["caguid=0x0002c90300000000", "switchguid=0x0002c90400000000"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--demo", help="also write the demo fabric to this path")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    files = {"tiny.net": tiny(), "ftree-small.net": ftree_small(),
             "torus-4x4.net": torus(), "irregular.net": irregular(),
             "chain-mixed.net": chain_mixed()}
    for fn, text in files.items():
        with open(os.path.join(here, fn), "w") as f:
            f.write(text)
    if args.demo:
        with open(args.demo, "w") as f:
            f.write(demo())
    return 0


if __name__ == "__main__":
    sys.exit(main())
