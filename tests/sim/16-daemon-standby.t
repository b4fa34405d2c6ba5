#!/usr/bin/env python3
"""16-daemon-standby.t - ibsm as a standby daemon beside OpenSM on one ibsim. OpenSM master
(priority 15): ibsm (-p 0, -s 1) logs STANDBY and programs nothing (no LID, port state or
LFT changes, its Set counters stay 0) while it polls the master. OpenSM killed (SIGKILL, by
pid): ibsm says the master stopped answering, takes over within a few seconds, keeps every
LID and routes every pair; sminfo then names ibsm as master. The other way round: ibsm is
master, OpenSM started second stays STANDBY and sminfo still names ibsm."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

SMINFO_MASTER = 3
TAKEOVER_S = 8.0      # 3 missed polls at 1 s plus a heavy sweep, with slack for a busy machine
PART_A, PART_B = 12, 7
tap = h.start(plan=PART_A + PART_B, timeout=110, need=("sminfo",))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: this test is about ibsm's own standby")
if not h.which("opensm"):
    tap.skip_all("opensm not installed (make deps-bench)")


def port_of(sim, snap, ca):
    node = sim.node(snap, ca)
    return node.ports[min(node.ports)] if node and node.ports else None


def opensm(sim, host, log, name, prio=None):
    args = ["-e", "-f", log, "-d", "2", "-s", "0"] + (["-p", str(prio)] if prio is not None else [])
    return sim.start_sm(args, host=host, cmd=[h.which("opensm")], name=name)


# ---- A: OpenSM master, ibsm standby; OpenSM dies, ibsm takes over
with h.Sim(net) as sim:
    osm_log = sim.path("opensm.log")
    osm = opensm(sim, "h1", osm_log, "opensm", prio=15)
    tap.ok(osm.wait_for(osm_log, r"SUBNET UP", 30), "OpenSM (priority 15) on h1 reaches SUBNET UP",
           h.tail(osm_log) + osm.output()[-500:])
    before = sim.collect()
    tap.check("fabric configured by OpenSM", h.check_routes(before))

    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "1", "-p", "0"], host="h5", name="ibsm")
    tap.ok(sm.wait_for(log, r"SMI-0003 STANDBY", 15), "ibsm daemon on h5 logs STANDBY (SMI-0003)",
           h.tail(log) + sm.output()[-500:])
    time.sleep(3.0)       # several standby polls and light-sweep periods
    mid = sim.collect()
    tap.ok(sm.alive(), "ibsm keeps running as standby", sm.output()[-500:])
    tap.check("standby: ibsm changed no LID, port state or LFT", h.check_unchanged(before, mid))
    sts = du.all_stats(h.read(log))
    tap.ok(sts and all(s.get("lft_blocks_set") == 0 and s.get("portinfo_set") == 0 for s in sts)
           and "LOOP-0008" not in h.read(log),
           "standby: ibsm wrote nothing (STS-0004 lft_blocks_set=0 portinfo_set=0) and did not take over",
           "STS-0004: %s\n%s" % (sts, h.tail(log, 8)))

    off = du.size(log)
    t0 = time.time()
    osm.popen.kill()                       # SIGKILL by pid: a master that dies, no hand-over
    osm.popen.wait(5)
    osm.stop()
    m = du.wait_text(log, off, r"LOOP-0008[^\n]*stopped answering.*SWP-0002 SUBNET UP", TAKEOVER_S + 5, sm.alive)
    secs = time.time() - t0
    tap.ok(m, "OpenSM killed: ibsm logs LOOP-0008 (master stopped answering) and SUBNET UP",
           du.since(log, off)[-1500:])
    tap.ok(m and secs <= TAKEOVER_S, "... within %.0f s (%.1f s)" % (TAKEOVER_S, secs))
    du.wait_quiet(log, 0.5, 5)
    after = sim.collect()
    tap.check("takeover: every port keeps the LID OpenSM gave it", du.compare_lids(before, after))
    tap.check("takeover: every pair delivered, every linked port ACTIVE",
              (lambda a, b: (a[0] and b[0], a[1] + "; " + b[1]))(h.check_routes(after),
                                                                 h.check_ports_active(after)))
    me = port_of(sim, after, "h5")
    info, sr = sim.sminfo("h9")
    tap.ok(info is not None and me is not None and info[0] == me.guid and info[2] == SMINFO_MASTER,
           "takeover: sminfo from h9 names ibsm (h5) as MASTER",
           "sminfo: %s; ibsm port %s" % (sr.text.strip(), me and "0x%x" % me.guid))
    rc, _ = du.signal_and_time(sm, signal.SIGTERM, 5)
    sm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])

# ---- B: ibsm master, OpenSM started second stays standby
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "1"], host="h5", name="ibsm")
    tap.ok(sm.wait_for(log, r"SWP-0002 SUBNET UP", 30) and du.wait_quiet(log, 0.5),
           "ibsm daemon on h5 reaches SUBNET UP", h.tail(log) + sm.output()[-500:])
    before = sim.collect()
    me = port_of(sim, before, "h5")
    osm_log = sim.path("opensm.log")
    osm = opensm(sim, "h13", osm_log, "opensm")
    tap.ok(osm.wait_for(osm_log, r"Entering STANDBY state", 20),
           "OpenSM started second on h13 enters STANDBY", h.tail(osm_log) + osm.output()[-500:])
    time.sleep(2.0)
    text = h.read(osm_log)
    tap.ok(osm.alive() and not re.search(r"Entering MASTER state|SUBNET UP", text),
           "OpenSM stays standby (never MASTER, never SUBNET UP)", text[-1500:])
    info, sr = sim.sminfo("h16")
    tap.ok(info is not None and me is not None and info[0] == me.guid and info[2] == SMINFO_MASTER,
           "sminfo from h16 names ibsm (h5) as MASTER",
           "sminfo: %s; ibsm port %s" % (sr.text.strip(), me and "0x%x" % me.guid))
    after = sim.collect()
    tap.check("nothing changed while OpenSM stood by", h.check_unchanged(before, after))
    tap.ok(sm.alive() and "SMI-0003" not in h.read(log), "ibsm stays master (no STANDBY in its log)",
           h.tail(log, 8))
    osm.stop()
    rc, _ = du.signal_and_time(sm, signal.SIGTERM, 5)
    sm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])
tap.done()
