#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""47-engine-names.t - every routing engine name OpenSM 3.3.23 lists in `opensm --help`
(minhop, updn, dnup, file, ftree, lash, dor, torus-2QoS, nue, dfsssp, sssp) brings a simulated
fabric up under ibsm (issue 27), each on a fabric it routes: -R NAME, as an OpenSM site's
opensm.conf names it. Verdicts per engine, by the diags: the harness's fabric checks (every
pair delivered; an engine may route past the diameter: up/down, lash and nue trade hops for
deadlock freedom), and by the log: the engine named routed, not the minhop fallback (RTE-0003
names it, no RTE-0002). `file` routes the tables a first run (updn, -D 0x43) dumped in
OpenSM's format (opensm-lfts.dump, opensm-lid-matrix.dump: -U and -M), and the tables read
back are that run's. The engines that claim deadlock freedom (updn, dnup, ftree, lash,
torus-2QoS, nue, dfsssp) are run once more as the daemon, and the (link, VL) channel dependency
graph of every CA-to-CA route, with the SL the SA's PathRecords give each pair and the VL each
hop's SL2VL table (read back) gives it, must have no cycle."""
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

TORUS_CONF = """# torus-4x4.net: tXY = 0x40000 + 4y + x
torus 4 4 1
xp_link 0x40000 0x40001
xm_link 0x40000 0x40003
yp_link 0x40000 0x40004
ym_link 0x40000 0x4000c
"""
# OpenSM 3.3.23's `opensm --help` engine names, the fabric each routes here, extra arguments
ENGINES = [("minhop", "irregular.net", []),
           ("updn", "irregular.net", []),
           ("dnup", "irregular.net", []),
           ("file", "irregular.net", None),        # arguments from the first run's dumps
           ("ftree", "ftree-small.net", []),
           ("lash", "irregular.net", []),
           ("dor", "mesh-3x3.net", []),
           ("torus-2QoS", "torus-4x4.net", ["--torus_config", "TORUS_CONF"]),
           ("nue", "irregular.net", []),
           ("dfsssp", "irregular.net", []),
           ("sssp", "irregular.net", [])]
CHECKS = 6
DEADLOCK_FREE = ("updn", "dnup", "ftree", "lash", "torus-2QoS", "nue", "dfsssp")

tap = h.start(plan=len(ENGINES) * CHECKS + 1 + len(DEADLOCK_FREE), timeout=2400,
              need=("smpquery", "saquery"))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: these are ibsm's engines")
scratch = h.Scratch()


def checks(name, sim, r, log):
    """CHECKS tests: routed by NAME (exit 0, no fallback), then the fabric read back."""
    text = h.read(log)
    routed = re.search(r"RTE-0003 routed by (\S+) ", text)
    tap.ok(r.rc == 0 and not r.crashed() and routed is not None and routed.group(1) == name
           and "RTE-0002" not in text,
           "%s: ibsm --once -R %s exits 0, routed by %s itself (not the minhop fallback)" % (name, name, name),
           r.describe() + "\n" + h.tail(log, 12))
    snap = sim.collect()
    rep = h.walk_routes(snap)
    for what, res in [("diags read the fabric", h.check_collected(snap)),
                      ("nodes and links as in %s" % os.path.basename(sim.netfile.path),
                       h.check_inventory(snap, sim.netfile)),
                      ("every linked port ACTIVE", h.check_ports_active(snap)),
                      ("LIDs assigned, unique, aligned", h.check_lids(snap)),
                      ("every source CA port reaches every destination LID", (rep.ok(), rep.summary()))]:
        tap.ok(res[0], "%s: %s" % (name, what), res[1])
    return snap


dumps = {}
for name, fabric, extra in ENGINES:
    net = h.fabric(fabric)
    if not os.path.isfile(net):
        for _ in range(CHECKS + (name == "file") + (name in DEADLOCK_FREE)):
            tap.ok(False, "%s: fabric %s exists" % (name, fabric), net)
        continue
    if name == "file":
        # a first run dumps its tables in OpenSM's formats, the file engine loads them
        with h.Sim(net) as sim:
            r = sim.run_sm(["--once", "-f", sim.path("updn.log"), "-R", "updn", "-D", "0x43"], timeout=120)
            for f in ("opensm-lfts.dump", "opensm-lid-matrix.dump"):
                src = os.path.join(sim.osmdir, f)
                if os.path.isfile(src):
                    shutil.copy(src, scratch.path(f))
            dumps["lfts"] = sim.collect().lfts
        extra = ["-U", scratch.path("opensm-lfts.dump"), "-M", scratch.path("opensm-lid-matrix.dump")]
    with h.Sim(net) as sim:
        args = [a if a != "TORUS_CONF" else sim.path("torus.conf") for a in extra]
        if "TORUS_CONF" in extra:
            with open(sim.path("torus.conf"), "w") as f:
                f.write(TORUS_CONF)
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log, "-R", name] + args, timeout=300)
        snap = checks(name, sim, r, log)
        if name in DEADLOCK_FREE:
            # the daemon, for the SA's PathRecord SLs; the SL2VL tables as the switches hold them
            dlog = sim.path("daemon.log")
            sm = sim.start_sm(["-f", dlog, "-s", "0", "-R", name] + args, name="ibsm",
                              env=sim.env(rmpp=True))  # the SA answers GetTable whole
            up = sm.wait_for(dlog, r"SUBNET UP", 120) and sm.wait_idle(1.0, 60) is not None
            vsnap = sim.collect()
            vrep = h.vl_credit_loops(vsnap, h.read_sl2vl(sim, vsnap), h.path_sls(sim)) if up else None
            sm.stop()
            tap.ok(up and vrep.ok() and not vrep.missing,
                   "%s: no credit loop over (link, VL): SLs from the SA, SL2VL read back" % name,
                   vrep.summary() if vrep else h.tail(dlog, 10))
        if name == "file":
            want = dumps.get("lfts") or {}
            diff = [g for g in want if want[g] != snap.lfts.get(g)]
            tap.ok(want and not diff, "file: the tables read back are those the first run (updn) dumped",
                   "%d of %d switches differ" % (len(diff), len(want)))
scratch.stop()
tap.done()
