#!/usr/bin/env python3
"""26-handover.t - mastership handed over, judged by sminfo, the diags and the SMP counter.

A. ibsm master on h1 (priority 0); a second ibsm on h5 with -p 15 starts: it must be master
   (sminfo from h9 names it, state MASTER) and h1's port answers STANDBY; the fabric stays
   whole (every pair delivered, LIDs kept) and every end port names h5 as its SM (SMLid); the
   old master sends not one Set once it stood by. Then the new master stops (SIGTERM): the old
   one takes over again (sminfo names h1).
B. The same with OpenSM 3.3.23 as the first master: ibsm -p 15 on h5 becomes master, OpenSM's
   port answers STANDBY, the fabric stays whole and names h5.
C. The other way round: ibsm master, OpenSM -p 15 started second: OpenSM's port answers
   MASTER (OpenSM sends no ACKNOWLEDGE; ibsm steps down on its answer) and ibsm's STANDBY,
   and ibsm sends no Set after stepping down.
Conditions are polled with a generous bound; the seconds are reported, never judged."""
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

SMINFO_STANDBY, SMINFO_MASTER = 2, 3
POLL_S = 60
# the standby's master polls: 3 unanswered in a row and it takes over; a sanitized master on a
# loaded machine may answer late, never not at all (scaled by IBSM_TEST_SLOW)
POLL_MS = str(int(h.patience(1000)))
tap = h.start(plan=20, timeout=600, need=("sminfo", "smpquery", "opensm"))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: this test is about ibsm's own handover")


def port_of(sim, snap, ca):
    node = sim.node(snap, ca)
    return node.ports[min(node.ports)]


def opensm(sim, host, log, name, prio):
    return sim.start_sm(["-e", "-f", log, "-d", "2", "-p", str(prio)], host=host,
                        cmd=[h.which("opensm")], name=name)


def wait_sminfo(sim, host, lid, want_guid, want_state):
    """Poll `sminfo` from HOST (at LID, or the master if None) until it reports WANT_GUID in
    WANT_STATE; returns (ok, seconds, text)."""
    t0 = time.time()
    while True:
        info, r = sim.sminfo(host, lid)
        ok = info is not None and info[0] == want_guid and info[2] == want_state
        if ok or time.time() - t0 > h.patience(POLL_S):
            return ok, time.time() - t0, r.text.strip()
        time.sleep(0.2)


def whole(sim, before, sm_host, what):
    """Every pair delivered, every LID of BEFORE kept, every end port naming SM_HOST (3 tests)."""
    after, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0] and h.check_sm_lid(sim, s, sm_host)[0],
                              POLL_S)
    tap.check("%s: every pair delivered" % what, h.check_routes(after))
    tap.check("%s: every LID kept" % what, du.compare_lids(before, after))
    tap.check("%s: every end port names %s as its SM (SMLid)" % (what, sm_host), h.check_sm_lid(sim, after, sm_host))
    return after


# ---- A: ibsm hands over to a better ibsm, and takes over again when it leaves
with h.Sim(net) as sim:
    log1, log2 = sim.path("ibsm1.log"), sim.path("ibsm2.log")
    sm1 = sim.start_sm(["-f", log1, "-p", "0", "--sminfo_polling_timeout", POLL_MS, "--polling_retry_number", "3"], host="h1", name="ibsm1")
    before, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    tap.check("ibsm (priority 0) on h1 brings the subnet up", h.check_routes(before))
    p1, p5 = port_of(sim, before, "h1"), port_of(sim, before, "h5")
    sm2 = sim.start_sm(["-f", log2, "-p", "15"], host="h5", name="ibsm2")
    ok, secs, text = wait_sminfo(sim, "h9", None, p5.guid, SMINFO_MASTER)
    tap.ok(ok, "ibsm -p 15 on h5 is master: sminfo from h9 names it (%.1f s after its start)" % secs,
           text + "\n" + h.tail(log1, 8) + h.tail(log2, 8))
    ok, _, text = wait_sminfo(sim, "h9", p1.lid, p1.guid, SMINFO_STANDBY)
    tap.ok(ok, "the first ibsm's port answers SMInfo as STANDBY (sminfo %d)" % p1.lid, text)
    c0 = sm1.counts()
    whole(sim, before, "h5", "after the handover")
    sm1.wait_idle(1.0, 10)
    d = sm1.counts() - c0
    tap.ok(d.valid and d.sets() == 0, "the old master sent not one Set while standing by (%s)" % d.summary(),
           d.describe_sets())
    rc = du.signal_and_wait(sm2, signal.SIGTERM)
    sm2.stop()
    ok, secs, text = wait_sminfo(sim, "h9", None, p1.guid, SMINFO_MASTER)
    tap.ok(ok and rc == 0, "the new master stopped (exit %s): h1 is master again (%.1f s)" % (rc, secs),
           text + "\n" + h.tail(log1, 8))
    sm1.stop()

# ---- B: OpenSM first, ibsm -p 15 second
with h.Sim(net) as sim:
    osm_log, log = sim.path("opensm.log"), sim.path("ibsm.log")
    osm = opensm(sim, "h1", osm_log, "opensm", 0)
    up = osm.wait_for(osm_log, r"SUBNET UP", POLL_S)
    before, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    tap.ok(up and h.check_routes(before)[0], "OpenSM (priority 0) on h1 brings the subnet up", h.tail(osm_log))
    p1, p5 = port_of(sim, before, "h1"), port_of(sim, before, "h5")
    sm = sim.start_sm(["-f", log, "-p", "15"], host="h5", name="ibsm")
    ok, secs, text = wait_sminfo(sim, "h9", None, p5.guid, SMINFO_MASTER)
    tap.ok(ok, "ibsm -p 15 on h5 is master: sminfo from h9 names it (%.1f s after its start)" % secs,
           text + "\n" + h.tail(osm_log, 8) + h.tail(log, 8))
    ok, _, text = wait_sminfo(sim, "h9", p1.lid, p1.guid, SMINFO_STANDBY)
    tap.ok(ok, "OpenSM's port answers SMInfo as STANDBY (sminfo %d)" % p1.lid, text)
    whole(sim, before, "h5", "after OpenSM's handover")
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    osm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])

# ---- C: ibsm first, OpenSM -p 15 second
with h.Sim(net) as sim:
    log, osm_log = sim.path("ibsm.log"), sim.path("opensm.log")
    sm = sim.start_sm(["-f", log, "-p", "0", "--sminfo_polling_timeout", POLL_MS, "--polling_retry_number", "3"],
                      host="h1", name="ibsm")
    before, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    tap.check("ibsm (priority 0) on h1 brings the subnet up", h.check_routes(before))
    p1, p5 = port_of(sim, before, "h1"), port_of(sim, before, "h5")
    osm = opensm(sim, "h5", osm_log, "opensm", 15)
    ok, secs, text = wait_sminfo(sim, "h9", p5.lid, p5.guid, SMINFO_MASTER)
    tap.ok(ok, "OpenSM -p 15 on h5 answers SMInfo as MASTER (%.1f s after its start)" % secs,
           text + "\n" + h.tail(log, 8) + h.tail(osm_log, 8))
    ok, _, text = wait_sminfo(sim, "h9", p1.lid, p1.guid, SMINFO_STANDBY)
    tap.ok(ok, "ibsm's port answers SMInfo as STANDBY (sminfo %d)" % p1.lid, text + "\n" + h.tail(log, 8))
    c0 = sm.counts()
    # the window is its master polls (one a second), counted, not timed
    sm.wait_counts(lambda c: (c - c0).gets(h.SMINFO) >= 3, POLL_S)
    d = sm.counts() - c0
    tap.ok(d.valid and d.sets() == 0 and d.gets(h.SMINFO) >= 2,
           "ibsm stands by: not one Set, it polls the master (%s)" % d.summary(), d.describe_sets())
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    osm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])
tap.done()
