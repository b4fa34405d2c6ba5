#!/usr/bin/env python3
"""06-standby.t - two SMs on one ibsim, both ways round. OpenSM master first: ibsm --once on
another host must go standby (exit 2), send no Set SMP (the SMP counter shim watches its
umad_send) and change no LID, port state or LFT. Then ibsm master: sminfo from another host
reports ibsm's port GUID in state MASTER (3)."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

SMINFO_MASTER = 3
tap = h.start(plan=14, timeout=300, need=("sminfo", "opensm"))
net = h.need_fabric(tap, "ftree-small.net")


def port_guid(sim, snap, ca):
    node = sim.node(snap, ca)
    return node.ports[min(node.ports)] if node and node.ports else None


# ---- A: OpenSM is master, ibsm must stand by and touch nothing
with h.Sim(net) as sim:
    cas = sim.netfile.cas()
    osm_log = sim.path("opensm.log")
    osm = sim.start_sm(["-e", "-f", osm_log, "-d", "2", "-s", "0", "-p", "15"], host=cas[0],
                       cmd=[h.which("opensm")], name="opensm")
    # readiness of the other SM (not a verdict on ibsm): its log line, then its counter still
    up = osm.wait_for(osm_log, r"SUBNET UP", 60) and osm.wait_idle(1.0, 60) is not None
    tap.ok(up, "OpenSM (priority 15) on %s comes up and goes idle" % cas[0],
           h.tail(osm_log) + osm.output()[-500:])
    before = sim.collect()
    tap.check("fabric configured by OpenSM", h.check_routes(before))

    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "-p", "0"], host=cas[1], timeout=60)
    tap.ok(r.rc == 2 and not r.timed_out, "ibsm --once -p 0 on %s exits 2 (standby)" % cas[1],
           r.describe() + "\n" + h.tail(log))
    c = r.counts
    tap.ok(c.valid and c.gets(h.NODEINFO) > 0 and c.gets(h.SMINFO) > 0 and c.sets() == 0,
           "ibsm as standby read the fabric and the master's SMInfo but sent no Set (SMP counter: %s)"
           % c.summary(), c.describe_sets(before, sim.node(before, cas[1])))
    after = sim.collect()
    tap.check("ibsm changed no LID, port state or LFT", h.check_unchanged(before, after))

    master = port_guid(sim, after, cas[0])
    info, sr = sim.sminfo(cas[2])
    tap.ok(info is not None and master is not None and info[0] == master.guid and info[2] == SMINFO_MASTER,
           "sminfo from %s: OpenSM still master" % cas[2],
           "sminfo: %s; OpenSM port %s" % (sr.text.strip(), master and "0x%x" % master.guid))
    tap.ok(osm.alive(), "OpenSM still running", osm.output()[-500:])
    rc = osm.stop()
    tap.ok(rc is not None and rc >= 0, "OpenSM stops on SIGTERM (status %s)" % rc)

# ---- B: ibsm is master, sminfo from another host sees it
with h.Sim(net) as sim:
    cas = sim.netfile.cas()
    log = sim.path("ibsm-master.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host=cas[0], name="ibsm")
    snap, secs = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], 60)
    tap.check("ibsm (no --once) on %s configures the fabric: every pair delivered" % cas[0], h.check_routes(snap))
    tap.ok(sm.wait_idle(1.0, 60) is not None and sm.alive(),
           "ibsm keeps running and goes idle (its SMP counter stands still)", h.tail(log) + sm.output()[-800:])
    snap = sim.collect()
    master = port_guid(sim, snap, cas[0])
    info, sr = sim.sminfo(cas[1])
    tap.ok(info is not None and master is not None and info[0] == master.guid,
           "sminfo from %s reports ibsm's port GUID" % cas[1],
           "sminfo: %s; ibsm port %s" % (sr.text.strip(), master and "0x%x" % master.guid))
    tap.ok(info is not None and info[2] == SMINFO_MASTER, "sminfo reports state SMINFO_MASTER (3)",
           sr.text.strip())
    tap.ok(info is not None and master is not None and info[1] == master.lid,
           "sminfo's SM LID is ibsm's port LID", "%s vs %s" % (info, master and master.lid))
    alive = sm.alive()
    rc = sm.stop()
    tap.ok(alive and rc is not None and rc >= 0 and not re.search(r"AddressSanitizer|runtime error", sm.output()),
           "ibsm was still running and stops cleanly on SIGTERM (status %s)" % rc, sm.output()[-800:])
tap.done()
