#!/usr/bin/env python3
"""16-daemon-standby.t - ibsm as a standby daemon beside OpenSM (Debian's opensm) on one ibsim,
judged by what other SMs and the diags see. OpenSM master (priority 15): ibsm (-p 0, -s 1)
answers SMInfo as STANDBY (sminfo at its port), polls the master (its SMInfo Gets, counted by
the SMP counter shim) and programs nothing (not one Set; no LID, port state or LFT changes).
OpenSM killed (SIGKILL, by pid): ibsm takes over (sminfo names it MASTER), keeps every LID,
routes every pair and points every port at itself (PortInfo SMLid). The other way round: ibsm
is master, OpenSM started second answers SMInfo as STANDBY, sends no Set, and sminfo still
names ibsm. Each condition is polled with a generous bound: no verdict depends on speed."""
import os
import signal
import time
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

SMINFO_STANDBY, SMINFO_MASTER = 2, 3
POLL_S = 60           # generous bound for each condition; the speed belongs in make bench
POLLS = 3             # standby polls of the master watched before judging "programs nothing"
tap = h.start(plan=19, timeout=600, need=("sminfo", "smpquery", "opensm"))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: this test is about ibsm's own standby")


def port_of(sim, snap, ca):
    node = sim.node(snap, ca)
    return node.ports[min(node.ports)] if node and node.ports else None


def opensm(sim, host, log, name, prio=None):
    args = ["-e", "-f", log, "-d", "2", "-s", "0"] + (["-p", str(prio)] if prio is not None else [])
    return sim.start_sm(args, host=host, cmd=[h.which("opensm")], name=name)


def wait_sminfo(sim, host, lid, want_guid, want_state):
    """Poll `sminfo` from HOST (at LID, or the master if None) until it reports WANT_GUID in
    WANT_STATE; returns (ok, text)."""
    def good():
        info, r = sim.sminfo(host, lid)
        return info is not None and info[0] == want_guid and info[2] == want_state, r.text.strip()
    ok, text = good()
    end = h.deadline(POLL_S)
    while not ok and time.time() < end:
        time.sleep(0.3)
        ok, text = good()
    return ok, text


# ---- A: OpenSM master, ibsm standby; OpenSM dies, ibsm takes over
with h.Sim(net) as sim:
    osm_log = sim.path("opensm.log")
    osm = opensm(sim, "h1", osm_log, "opensm", prio=15)
    # readiness of the other SM (not a verdict on ibsm): its log line, then its counter still
    up = osm.wait_for(osm_log, r"SUBNET UP", POLL_S) and osm.wait_idle(1.0, POLL_S) is not None
    tap.ok(up, "OpenSM (priority 15) on h1 comes up and goes idle", h.tail(osm_log) + osm.output()[-500:])
    before = sim.collect()
    tap.check("fabric configured by OpenSM", h.check_routes(before))
    osm_port, me = port_of(sim, before, "h1"), port_of(sim, before, "h5")

    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "1", "-p", "0", "--sminfo_polling_timeout", "1000", "--polling_retry_number", "3"], host="h5", name="ibsm")
    ok, text = wait_sminfo(sim, "h9", me.lid, me.guid, SMINFO_STANDBY)
    tap.ok(ok, "ibsm daemon on h5 answers SMInfo as STANDBY (sminfo %d from h9)" % me.lid,
           text + "\n" + h.tail(log) + sm.output()[-500:])
    c0 = sm.counts()
    c1, polled = sm.wait_counts(lambda c: c.gets(h.SMINFO) >= c0.gets(h.SMINFO) + POLLS, POLL_S)
    tap.ok(polled and sm.alive(), "ibsm keeps running as standby and polls the master (%d SMInfo Gets)"
           % c1.gets(h.SMINFO), c1.summary() + "\n" + sm.output()[-500:])
    mid = sim.collect()
    tap.check("standby: ibsm changed no LID, port state or LFT", h.check_unchanged(before, mid))
    tap.ok(c1.valid and c1.sets() == 0, "standby: ibsm sent not one Set SMP (SMP counter: %s)" % c1.summary(),
           c1.describe_sets(mid, sim.node(mid, "h5")))
    ok, text = wait_sminfo(sim, "h9", None, osm_port.guid, SMINFO_MASTER)
    tap.ok(ok, "standby: sminfo from h9 still names OpenSM (h1) as MASTER", text)

    osm.popen.kill()                       # SIGKILL by pid: a master that dies, no hand-over
    osm.popen.wait(POLL_S)
    osm.stop()
    ok, text = wait_sminfo(sim, "h9", None, me.guid, SMINFO_MASTER)
    tap.ok(ok, "OpenSM killed: ibsm takes over (sminfo from h9 names ibsm on h5 as MASTER)",
           text + "\n" + h.tail(log, 10))
    after, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0] and h.check_sm_lid(sim, s, "h5")[0], POLL_S)
    sm.wait_idle(1.0, 10)                  # light sweeps every second: rarely quiet, not needed
    tap.check("takeover: every port keeps the LID OpenSM gave it", du.compare_lids(before, after))
    tap.check("takeover: every pair delivered, every linked port ACTIVE",
              (lambda a, b: (a[0] and b[0], a[1] + "; " + b[1]))(h.check_routes(after),
                                                                 h.check_ports_active(after)))
    tap.check("takeover: every end port's PortInfo names ibsm as its SM (SMLid)", h.check_sm_lid(sim, after, "h5"))
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])

# ---- B: ibsm master, OpenSM started second stays standby
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "1"], host="h5", name="ibsm")
    before, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    tap.check("ibsm daemon on h5 brings the subnet up: every pair delivered", h.check_routes(before))
    me = port_of(sim, before, "h5")
    osm_port = port_of(sim, before, "h13")
    osm_log = sim.path("opensm.log")
    osm = opensm(sim, "h13", osm_log, "opensm")
    ok, text = wait_sminfo(sim, "h16", osm_port.lid, osm_port.guid, SMINFO_STANDBY)
    tap.ok(ok, "OpenSM started second on h13 answers SMInfo as STANDBY (sminfo %d from h16)" % osm_port.lid,
           text + "\n" + h.tail(osm_log) + osm.output()[-500:])
    time.sleep(3)  # an observation window (ibsm asks OpenSM's SMInfo each light sweep: never idle)
    oc = osm.counts()
    tap.ok(osm.alive() and oc.valid and oc.sets() == 0,
           "OpenSM stays standby: it sent not one Set SMP (SMP counter: %s)" % oc.summary(), h.tail(osm_log, 10))
    ok, text = wait_sminfo(sim, "h16", None, me.guid, SMINFO_MASTER)
    tap.ok(ok, "sminfo from h16 names ibsm (h5) as MASTER", text)
    ok, text = wait_sminfo(sim, "h16", me.lid, me.guid, SMINFO_MASTER)
    tap.ok(ok and sm.alive(), "ibsm stays master: its own port answers SMInfo as MASTER (sminfo %d)" % me.lid,
           text + "\n" + h.tail(log, 8))
    after = sim.collect()
    tap.check("nothing changed while OpenSM stood by", h.check_unchanged(before, after))
    osm.stop()
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])
tap.done()
