#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""gen-updn-fabrics.py - writes the fabrics of the updn engine's simulated test (run from
anywhere; files land next to this script):

  updn-2l-fail.net / .roots  2-level fat tree, 4 leaves x 4 hosts, spines 1, 3, 4 (spine 2
                             removed) and no link leaf1-spine1: with every spine a root, no
                             up/down path leads from leaf1 to spine1's LID.

GUIDs: host hN 0x30000 + 2*(N-1) (port GUID + 1), leafN 0x40000 + N-1, spineN 0x40004 + N-1.
Leaf ports 1-4 hosts, 5-8 spines 1-4; spine port N = leafN."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def fail_tree():
    leaves, hosts, spines = 4, 4, [1, 3, 4]
    cut = {(1, 1)}  # (leaf, spine) links removed
    out = ["# updn-2l-fail.net - written by gen-updn-fabrics.py: 4 leaves x 4 hosts, spines 1, 3, 4;",
           "# no link leaf1-spine1. host hN: 0x30000 + 2*(N-1); leafN 0x40000 + N-1; spineN 0x40004 + N-1.",
           ""]
    n = 0
    for l in range(1, leaves + 1):
        for p in range(1, hosts + 1):
            n += 1
            out += ["caguid=0x%x" % (0x30000 + 2 * (n - 1)), 'Hca\t1 "h%d"' % n,
                    '[1]\t"leaf%d"[%d]' % (l, p), ""]
    for l in range(1, leaves + 1):
        out += ["switchguid=0x%x" % (0x40000 + l - 1), 'Switch\t8 "leaf%d"' % l]
        for p in range(1, hosts + 1):
            out.append('[%d]\t"h%d"[1]' % (p, (l - 1) * hosts + p))
        for s in spines:
            if (l, s) not in cut:
                out.append('[%d]\t"spine%d"[%d]' % (hosts + s, s, l))
        out.append("")
    for s in spines:
        out += ["switchguid=0x%x" % (0x40004 + s - 1), 'Switch\t8 "spine%d"' % s]
        for l in range(1, leaves + 1):
            if (l, s) not in cut:
                out.append('[%d]\t"leaf%d"[%d]' % (l, l, hosts + s))
        out.append("")
    with open(os.path.join(HERE, "updn-2l-fail.net"), "w") as f:
        f.write("\n".join(out))
    with open(os.path.join(HERE, "updn-2l-fail.roots"), "w") as f:
        f.write("# every spine of updn-2l-fail.net\n")
        f.write("".join("0x%016x\n" % (0x40004 + s - 1) for s in spines))


if __name__ == "__main__":
    fail_tree()
