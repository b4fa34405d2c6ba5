#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""48-engine-missing.t - an engine that has no plugin is a failed engine, never a failed start
(issue 27, item 1), as an OpenSM site's kept opensm.conf meets it: `routing_engine dfsssp,updn`
with no dfsssp.so in any plugin directory. ibsm runs from a scratch copy whose plugin directory
holds only updn.so and minhop.so (so the test means the same whether or not the build has a
dfsssp engine). Verdicts, by the tables read back: on a 4x4 torus, where minhop's CA-to-CA
channel dependency graph has a cycle and updn's has none, the graph is acyclic: updn routed,
not the minhop fallback; and by the log: an ERROR names dfsssp and the plugin directory
searched, the routing line says what was skipped. The daemon says it again on SIGHUP. A
routing chain whose step names the missing engine skips the step (ERROR) and its fallback-to
step (updn) routes the part, its dump beside the others'."""
import os
import shutil
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

tap = h.start(plan=14, timeout=600, need=("smpquery",))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this is ibsm's own plugin search")
torus = h.need_fabric(tap, "torus-4x4.net")
mixed = h.need_fabric(tap, "chain-mixed.net")

# ibsm beside a plugins/ of its own: the loader searches IBSM_PLUGIN_PATH, --plugin-dir, then
# plugins/ beside the executable; the installed directory last (it must not hold a dfsssp.so)
scratch = h.Scratch()
bindir = scratch.path("bin")
plugdir = os.path.join(bindir, "plugins")
os.makedirs(plugdir)
shutil.copy2(h.ibsm_path(), os.path.join(bindir, "ibsm"))
for so in ("updn.so", "minhop.so", "chain.so"):
    shutil.copy2(os.path.join(h.build_dir(), "plugins", so), os.path.join(plugdir, so))
IBSM = [os.path.join(bindir, "ibsm")]


def env(sim):
    return sim.env(IBSM_PLUGIN_PATH="")


def conf(sim, lines):
    path = sim.path("opensm.conf")
    with open(path, "w") as f:
        f.write("# an OpenSM site's kept opensm.conf\n" + "".join(l + "\n" for l in lines))
    return path


def run_sm(sim, args, timeout=120):
    return sim.run(IBSM + args, env=env(sim), timeout=timeout)


# ---- 1-6: routing_engine dfsssp,updn, no dfsssp.so: updn routes, the log says why ----
with h.Sim(torus) as sim:
    log = sim.path("ibsm.log")
    cfg = conf(sim, ["routing_engine dfsssp,updn", "sweep_interval 0"])
    r = run_sm(sim, ["--once", "-F", cfg, "-f", log])
    text = h.read(log)
    tap.ok(r.rc == 0 and not r.crashed(), "dfsssp,updn without dfsssp.so: ibsm --once exits 0",
           r.describe() + h.tail(log, 12))
    err = [l for l in text.splitlines() if "ERR  CHN-0003" in l]
    tap.ok(err and "engine dfsssp cannot be used" in err[0] and plugdir in err[0] and
           "not found" in err[0] and "skipped" in err[0],
           "an ERROR names dfsssp, says it was not found in the plugin directory searched and is skipped",
           "\n".join(err) or h.tail(log, 12))
    tap.ok("RTE-0003 routed by updn" in text and "not loaded, skipped: dfsssp" in text and
           "RTE-0002" not in text,
           "the routing line: updn routed, dfsssp skipped (no minhop fallback)", h.tail(log, 12))
    snap = sim.collect()
    rep = h.walk_routes(snap)
    tap.check("every source CA port reaches every destination LID", (rep.ok(), rep.summary()))
    tap.check("every linked port ACTIVE", h.check_ports_active(snap))
    cyc = h.ca_cdg_cycle(snap)
    tap.ok(cyc is None, "CA-to-CA channel dependency graph (1 VL) acyclic: updn's tables, not "
           "minhop's (cyclic on this torus)", cyc)

# ---- 7-9: the daemon says it again on SIGHUP ----
with h.Sim(torus) as sim:
    log = sim.path("ibsm.log")
    cfg = conf(sim, ["routing_engine dfsssp,updn", "sweep_interval 0"])
    sm = sim.start_sm(["-F", cfg, "-f", log], env=env(sim), cmd=IBSM, name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 60)
    tap.ok(up and h.read(log).count("ERR  CHN-0003") == 1, "daemon: up, the ERROR once at start",
           h.tail(log, 10))
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"ERR  CHN-0003 [^\n]*engine dfsssp cannot be used", 60, alive=sm.alive)
    tap.ok(m is not None, "daemon: SIGHUP logs the ERROR again", du.since(log, off)[-800:])
    sm.wait_idle(1.0, 30)
    rc = sm.stop()
    tap.ok(rc == 0, "daemon: runs on, SIGTERM stops it with exit 0 (%s)" % rc, h.tail(log, 6))

# ---- 10-14: a routing chain step whose engine is missing: skipped, its fallback-to routes ----
PGRP = """port-group
name: tree_switches
node-name: ^t(leaf|spine)
end-port-group
port-group
name: tree_hosts
node-name: ^th[0-9]
end-port-group
port-group
name: rest_switches
subtract-rule: ALL_SWITCHES, tree_switches
end-port-group
port-group
name: rest_hosts
subtract-rule: ALL_CAS, tree_hosts
end-port-group
"""
TOPO = """topology
id: 2
sw-grp: rest_switches
hca-grp: rest_hosts
end-topology
"""
CHAIN = """unicast-step
id: 1
engine: minhop
end-unicast-step
unicast-step
id: 2
engine: dfsssp
topology: 2
end-unicast-step
unicast-step
id: 3
engine: updn
fallback-to: 2
end-unicast-step
"""
with h.Sim(mixed) as sim:
    log = sim.path("ibsm.log")
    files = {}
    for name, text in (("pgrp", PGRP), ("topo", TOPO), ("chain", CHAIN)):
        files[name] = sim.path(name + ".conf")
        with open(files[name], "w") as f:
            f.write(text)
    r = run_sm(sim, ["--once", "-f", log, "-D", "0x43", "--pgrp_policy_file", files["pgrp"],
                     "--topo_policy_file", files["topo"], "--rch_policy_file", files["chain"]])
    text = h.read(log)
    tap.ok(r.rc == 0 and not r.crashed(), "chain: a step's engine missing is no failed start (exit 0)",
           r.describe() + h.tail(log, 12))
    tap.ok(any("ERR  RCH-0001" in l and "step 2: engine dfsssp cannot be used" in l and plugdir in l
               for l in text.splitlines()),
           "chain: an ERROR at set-up names step 2, dfsssp and the plugin directory", h.tail(log, 12))
    tap.ok("step 2 (dfsssp, topology 2) skipped: its engine cannot be used" in text and
           "fallback step 3 (updn) routed step 2's part" in text,
           "chain: step 2 is skipped at the run and its fallback-to step 3 (updn) routes its part",
           h.tail(log, 12))
    tap.ok(os.path.isfile(os.path.join(sim.osmdir, "opensm-lfts.3.updn.dump")) and
           not os.path.isfile(os.path.join(sim.osmdir, "opensm-lfts.2.dfsssp.dump")),
           "chain: step 3 dumped its part, step 2 (never run) did not", str(sorted(os.listdir(sim.osmdir))))
    snap = sim.collect()
    rep = h.walk_routes(snap)
    tap.check("chain: every source CA port reaches every destination LID", (rep.ok(), rep.summary()))

scratch.stop()
tap.done()
