#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""57-nue.t - the nue engine (-R nue) as a daemon on an irregular fabric, judged from outside:
with OpenSM's default (nue_max_num_vls 1) the fabric checks pass, every CA-to-CA route is
delivered and their channel dependency graph on that one VL has no cycle (where minhop's tables
on the same fabric have one: the check can fail here); with --nue_max_num_vls 4 the path SLs the
SA's PathRecords give and the SL2VL tables read back from the switches (written without -Q)
make the (link, VL) graph acyclic, over more than one and at most 4 VLs, every SL below 4 and
every switch link's table SL -> SL mod the layers. Then an opensm.conf with `routing_engine
nue`, `nue_max_num_vls 2` and `nue_include_switches TRUE` is taken whole (no key unknown or
without effect) and routes on 2 layers; and with max_op_vls 1 nue keeps to the one VL the links
have, and says so."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

NET = "irregular.net"
CASES = [([], "1 VL (OpenSM's default)", 1),
         (["--nue_max_num_vls", "4"], "nue_max_num_vls 4", 4)]
PER_CASE = 5
tap = h.start(plan=len(CASES) * PER_CASE + 4, timeout=1800, need=("smpquery", "saquery"))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: nue is ibsm's engine")
net = h.need_fabric(tap, NET)


def layers_of(text):
    m = re.search(r"on (\d+) virtual layers? of (\d+) VLs", text)
    return int(m.group(1)) if m else None


for extra, label, want in CASES:
    with h.Sim(net) as sim:
        log = sim.path("ibsm.log")
        sm = sim.start_sm(["-f", log, "-s", "0", "-R", "nue"] + extra, name="ibsm",
                          env=sim.env(rmpp=True))  # the SA answers GetTable whole
        up = sm.wait_for(log, r"SUBNET UP", 120) and sm.wait_idle(1.0, 60) is not None
        text = h.read(log)
        routed = re.search(r"RTE-0003 routed by (\S+) ", text)
        layers = layers_of(text)
        tap.ok(up and routed is not None and routed.group(1) == "nue" and "RTE-0002" not in text
               and layers is not None and 1 <= layers <= want,
               "%s: the daemon brings it up, routed by nue itself on %s layers" % (label, layers),
               h.tail(log, 12))
        snap = sim.collect()
        rep = h.walk_routes(snap)
        checks = [h.check_inventory(snap, sim.netfile), h.check_ports_active(snap),
                  h.check_lids(snap), (rep.ok(), rep.summary())]
        bad = [m for ok, m in checks if not ok]
        tap.ok(not bad, "%s: the fabric checks: inventory, ACTIVE, LIDs, every pair delivered" % label,
               "\n".join(bad))
        sls = h.path_sls(sim) if up else {}
        sl2vl = h.read_sl2vl(sim, snap) if up else {}
        sm.stop()
        vrep = h.vl_credit_loops(snap, sl2vl, sls)
        tap.ok(vrep.ok() and not vrep.missing and 1 <= len(vrep.vls) <= want,
               "%s: no credit loop over (link, VL) with the SA's SLs and the SL2VL read back, "
               "on %d VLs (at most %d)" % (label, len(vrep.vls), want), vrep.summary())
        one = h.ca_cdg_cycle(snap)
        if want == 1:
            tap.ok(one is None and len(vrep.vls) == 1,
                   "%s: one VL, and the routes' dependency graph on it is acyclic" % label,
                   "one VL: %s; VLs %s" % (one, sorted(vrep.vls)))
            table_ok = sls and set(sls.values()) == {0}
            table_msg = "SLs %s" % sorted(set(sls.values()))
        else:
            tap.ok(len(vrep.vls) > 1 and sls and max(sls.values()) < want,
                   "%s: more than one VL used; every PathRecord SL below %d" % (label, want),
                   "VLs %s, SLs %s" % (sorted(vrep.vls), sorted(set(sls.values()))))
            table_ok, wrong = True, []
            for sw in snap.switches():
                for (inp, out), row in sl2vl.get(sw.guid, {}).items():
                    port = sw.ports.get(out)
                    peer = snap.nodes.get(port.peer[0]) if port and port.peer else None
                    if peer is None or peer.type != "SW":
                        continue
                    if row[:8] != [sl % layers for sl in range(8)]:
                        wrong.append("%s in %d out %d: %s" % (sw.name(), inp, out, row))
            table_ok, table_msg = not wrong, "\n".join(wrong[:5])
        tap.ok(table_ok and (want == 1 or layers > 1),
               "%s: one layer: every PathRecord has the SL asked for (0)" % label if want == 1 else
               "%s: every switch link's SL2VL maps SL to SL mod %s (the layers)" % (label, layers),
               table_msg)

# minhop's tables on the same fabric close a cycle: the acyclic verdicts above can fail
with h.Sim(net) as sim:
    r = sim.run_sm(["--once", "-R", "minhop"], timeout=120)
    snap = sim.collect()
    one = h.ca_cdg_cycle(snap)
    tap.ok(r.rc == 0 and one is not None and one.startswith("cycle"),
           "minhop on %s: its CA-to-CA dependency graph has a cycle (the check can fail)" % NET,
           "%s; %s" % (r.describe(), one))

# an opensm.conf with OpenSM's nue keys: taken whole, in force
with h.Sim(net) as sim:
    conf = sim.path("opensm.conf")
    with open(conf, "w") as f:
        f.write("routing_engine nue\nnue_max_num_vls 2\nnue_include_switches TRUE\n")
    log = sim.path("conf.log")
    r = sim.run_sm(["--once", "-F", conf, "-f", log], timeout=120)
    text = h.read(log)
    snap = sim.collect()
    rep = h.walk_routes(snap)
    noisy = [l for l in text.splitlines() if re.search(r"CFG-000[357]", l) and "nue" in l]
    tap.ok(r.rc == 0 and not noisy and re.search(r"RTE-0003 routed by nue ", text) is not None,
           "opensm.conf with routing_engine nue, nue_max_num_vls 2, nue_include_switches TRUE: "
           "no key unknown or without effect, routed by nue", r.describe() + "\n" + "\n".join(noisy))
    tap.ok(layers_of(text) == 2 and "switch LIDs, routed among the CAs" in text and rep.ok(),
           "the keys are in force: 2 layers, switch LIDs among the destinations, every pair "
           "delivered", h.tail(log, 8) + "\n" + rep.summary())

# max_op_vls 1: one data VL on every link, so one layer whatever nue_max_num_vls asks
with h.Sim(net) as sim:
    log = sim.path("vl1.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "nue", "--nue_max_num_vls", "4",
                    "--max_op_vls", "1"], timeout=120)
    text = h.read(log)
    snap = sim.collect()
    rep = h.walk_routes(snap)
    tap.ok(r.rc == 0 and layers_of(text) == 1 and "is more than the 1 data VLs" in text and
           rep.ok() and h.ca_cdg_cycle(snap) is None,
           "max_op_vls 1: nue routes on one layer, says why, acyclic on the one VL",
           r.describe() + "\n" + h.tail(log, 8))
tap.done()
