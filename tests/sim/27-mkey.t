#!/usr/bin/env python3
"""27-mkey.t - M_Key configured (m_key, m_key_protection_level 2, m_key_lease_period) on ibsim.
ibsim ignores M_Key (tests/unit/test_mkey.c judges the keys against SMAs that enforce them);
here the question is whether a protected subnet is run as well as an open one: it comes up
(the harness's fabric checks) and a SIGHUP sweep on the unchanged fabric rediscovers it
(counted NodeInfo Gets) and writes nothing, not one Set (the SMP counter): the M_Key fields
ibsim does not keep must not make every sweep write every port again."""
import os
import signal
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=10, timeout=300)
net = h.need_fabric(tap, "ftree-small.net")
with h.Sim(net) as sim:
    conf = sim.path("mkey.yaml")
    with open(conf, "w") as f:
        f.write("m_key: 0x1234567890abcdef\nm_key_protection_level: 2\nm_key_lease_period: 60\n"
                "sweep_interval: 0\n")
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-F", conf, "-f", log], host="h1", name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    idle = sm.wait_idle(1.0, POLL_S)
    tap.ok(up and idle is not None, "ibsm with M_Key protection comes up and goes idle", h.tail(log))
    before, _ = h.fabric_checks(tap, sim, diag_log=log, switches=True)
    c0 = sm.counts()
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    swept = du.wait_text(log, off, r"SWP-0005", POLL_S, sm.alive)
    sm.wait_idle(1.0, POLL_S)
    d = sm.counts() - c0
    tap.ok(swept and d.valid and d.gets(h.NODEINFO) > 0,
           "SIGHUP: a heavy sweep rediscovered the fabric (%d NodeInfo Gets)" % d.gets(h.NODEINFO), h.tail(log))
    tap.ok(d.sets() == 0, "SIGHUP on the unchanged fabric: not one Set (%s)" % d.summary(), d.describe_sets(before))
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0, "ibsm exits 0 on SIGTERM (status %s)" % rc, h.tail(log))
tap.done()
