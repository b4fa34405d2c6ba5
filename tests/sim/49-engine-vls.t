#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""49-engine-vls.t - an engine that gives its routes virtual lanes has its SL2VL (and VLArb)
tables written without -Q too (issue 27: dfsssp, nue and lash need their VLs without -Q),
judged by what the ports hold (`smpquery sl2vl`, `smpquery vlarb`) and by the SMP counter,
on qos.net with the test engine qoshook (tests/plugins/qoshook.c: an SL2VL map and a VLArb
table of its own for switch external ports, nothing for CA ports and switch port 0).
  1. ibsm --once -R qoshook without -Q: SL2VL and VLArb Sets; the switch external ports hold
     the engine's map (fitted to their OperVLs) and VLArb; every other table stays as ibsim
     had it (the options are -Q's);
  2. the same again: the tables are read and none is written;
  3. ibsm --once with minhop (no VL hooks) without -Q: no SL2VL or VLArb SMP at all, as OpenSM;
  4. the daemon with -R qoshook: SIGHUP on the unchanged fabric sends no Set at all."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

OPERVLS = {"VL0": 1, "VL0-1": 2, "VL0-3": 4, "VL0-7": 8, "VL0-14": 15}


def fit(vl, count):
    """OpenSM's masking of a VL to a port's usable VLs (as tests/sim/34-qos.t)."""
    if vl == 15 or vl < count:
        return vl
    p2 = 1
    while p2 * 2 <= count:
        p2 *= 2
    return vl & (p2 - 1)


def parse_sl2vl(text):
    rows = {}
    for m in re.finditer(r"ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})", text):
        rows[(int(m.group(1)), int(m.group(2)))] = [int(x) for x in m.group(3).split("|") if x.strip()]
    return rows


def parse_vlarb(text):
    out, cur, vls = {}, None, []
    for line in text.splitlines():
        if "Low priority" in line:
            cur = "low"
        elif "High priority" in line:
            cur = "high"
        elif cur and line.startswith("VL"):
            vls = [int(x, 16) for x in line.split("|")[1:] if x.strip()]
        elif cur and line.startswith("WEIGHT"):
            ws = [int(x, 16) for x in line.split("|")[1:] if x.strip()]
            out[cur] = out.get(cur, []) + list(zip(vls, ws))
    return out or None


def read_tables(sim):
    """{label: table} of every port of qos.net, and {switch external port label: OperVLs}."""
    snap = sim.collect()
    tabs, swe = {}, {}
    for node in sorted(snap.nodes.values(), key=lambda n: n.desc):
        if node.type != "SW":
            for pn, p in sorted(node.ports.items()):
                if p.lid:
                    label = "%s[%d]" % (node.desc.split()[0], pn)
                    tabs[label + " sl2vl"] = parse_sl2vl(sim.run(["smpquery", "sl2vl", str(p.lid)]).out)
                    tabs[label + " vlarb"] = parse_vlarb(sim.run(["smpquery", "vlarb", str(p.lid)]).out)
            continue
        for out in range(0, node.nports + 1):
            label = "%s[%d]" % (node.desc, out)
            tabs[label + " sl2vl"] = parse_sl2vl(sim.run(["smpquery", "sl2vl", str(node.lid), str(out)]).out)
            if out in node.ports:
                tabs[label + " vlarb"] = parse_vlarb(sim.run(["smpquery", "vlarb", str(node.lid), str(out)]).out)
                pi = sim.run(["smpquery", "portinfo", str(node.lid), str(out)]).out
                m = re.search(r"OperVLs:\.*(\S+)", pi)
                swe[label] = OPERVLS.get(m.group(1), 1) if m else 1
    return tabs, swe


tap = h.start(plan=9, timeout=900, need=("smpquery",))
net = h.need_fabric(tap, "qos.net")
plugins = os.path.join(h.build_dir(), "tests", "plugins")
HOOK = ["-R", "qoshook,no_fallback", "--plugin-dir", plugins]

with h.Sim(net, host="h1") as sim:
    # LIDs first (minhop, no -Q, writes no table), then what ibsim's ports hold
    sim.run_sm(["--once", "-f", sim.path("lids.log")], timeout=120)
    before, _ = read_tables(sim)
    # 1. the engine's tables without -Q
    log = sim.path("hook.log")
    r = sim.run_sm(["--once", "-f", log] + HOOK, timeout=120)
    tap.ok(r.rc == 0 and r.counts.valid and r.counts.sets(h.SL2VL) > 0 and r.counts.sets(h.VLARB) > 0,
           "-R qoshook without -Q: SL2VL and VLArb Sets", r.describe() + r.counts.summary() + h.tail(log))
    after, swe = read_tables(sim)
    bad = []
    for label, opervls in swe.items():
        out = int(label.split("[")[1][:-1])
        want = [fit(15 if sl == 15 else 7 - sl % 8, opervls) for sl in range(16)]
        got = after.get(label + " sl2vl") or {}
        bad += ["%s in %d: %s, want %s" % (label, i, got.get((i, out)), want)
                for i in range(0, 9) if got.get((i, out)) != want]
        arb = after.get(label + " vlarb") or {}
        if arb.get("high", [None])[0] != (3, 99) or arb.get("low", [None])[:2] != [(0, 10), (fit(1, opervls), 11)]:
            bad.append("%s vlarb %s" % (label, arb))
    tap.ok(swe and not bad, "the %d switch external ports hold the engine's SL2VL map (VL 7 - SL, fitted "
           "to OperVLs) and VLArb" % len(swe), "; ".join(bad[:6]))
    same = [k for k in before if not any(k.startswith(s + " ") for s in swe) and before[k] != after.get(k)]
    tap.ok(not same, "every other table (CA, router, switch port 0) stays as ibsim had it: without -Q "
           "the options are not written", "changed: %s" % same[:6])

    # 2. again: read, none written
    r = sim.run_sm(["--once", "-f", sim.path("hook2.log")] + HOOK, timeout=120)
    tap.ok(r.rc == 0 and r.counts.sets(h.SL2VL) == 0 and r.counts.sets(h.VLARB) == 0 and
           r.counts.gets(h.SL2VL) > 0, "a second run reads the engine's tables and writes none",
           r.counts.summary())

    # 3. an engine without VL hooks, without -Q: no SL2VL or VLArb SMP at all
    r = sim.run_sm(["--once", "-f", sim.path("minhop.log")], timeout=120)
    n = r.counts.gets(h.SL2VL) + r.counts.sets(h.SL2VL) + r.counts.gets(h.VLARB) + r.counts.sets(h.VLARB)
    tap.ok(r.rc == 0 and r.counts.valid and n == 0, "minhop without -Q: no SL2VL or VLArb SMP (as OpenSM)",
           r.counts.summary())
    again, _ = read_tables(sim)
    tap.ok(again == after, "and the tables stay as the engine left them", "")

    # 4. the daemon: SIGHUP on the unchanged fabric sends no Set
    log = sim.path("daemon.log")
    sm = sim.start_sm(["-f", log, "-s", "0"] + HOOK, name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 60) and sm.wait_idle(1.0, 60) is not None
    tap.ok(up, "daemon -R qoshook: SUBNET UP", h.tail(log, 8))
    c0 = sm.counts()
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"heavy sweep: nothing changed, nothing written|SWP-0005", 60, alive=sm.alive)
    sm.wait_idle(1.0, 30)
    d = sm.counts() - c0
    tap.ok(m is not None and d.valid and d.sets() == 0,
           "daemon: SIGHUP on the unchanged fabric sends no Set (the engine's tables are known)",
           d.summary() + du.since(log, off)[-600:])
    rc = sm.stop()
    tap.ok(rc == 0, "daemon: SIGTERM stops it with exit 0 (%s)" % rc, h.tail(log, 6))
tap.done()
