#!/usr/bin/env python3
"""10-lossy.t - ibsim drops SMPs crossing every switch (console 'Error' command).

1. 2% loss, ftree-small, --once: the fabric comes fully up through retries and back-off; the
   SMP counter shim (tests/tools/smpcount.so) must see requests go unanswered, so this part
   cannot pass on a fabric that lost nothing.
2. 20% loss, ftree-3l (48 switches, 64 hosts), --once: ibsm must still reach SUBNET UP and
   exit 0 (SMPs retried while the fabric answers others, sweeps repeated while each gets
   further), and the fabric must be whole. OpenSM 3.3.23 gives up at 10% already.
3. A daemon on ftree-3l, up without loss, then 10% loss for 30 s while SIGHUP forces a heavy
   sweep every 2 s: nothing that worked may be torn down. At three checkpoints the loss is
   lifted just long enough for the diags to read the fabric: LIDs, port states and every LFT
   equal the ones before the loss and every pair is delivered. The SMP counter must show the
   sweeps met the loss and that no LFT block or PortInfo was written while it lasted."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

LOSS_S = 30           # how long part 3 keeps the loss on
CHECKPOINTS = 3       # loss lifted this many times (evenly) to read the fabric
HUP_EVERY_S = 2.0

tap = h.start(plan=8 + 8 + 16, timeout=900)


def switch_names(net):
    return re.findall(r'^Switch\s+\d+\s+"([^"]+)"', h.read(net), re.M)


def set_loss(sim, names, rate):
    for name in names:
        sim.console('Error "%s" %d' % (name, rate))


def lost_smps(tap, r_counts, what):
    c = r_counts
    lost = c.requests() - c.responses()
    tap.ok(c.valid and lost > 0, "%s: SMPs were lost: %d of %d Gets and Sets got no answer (SMP counter)"
           % (what, lost, c.requests()), "sent: %s\nreceived: %s" % (c.summary(), c.summary(True)))


# ---- 1. light loss, --once
net = h.need_fabric(tap, "ftree-small.net")
with h.Sim(net) as sim:
    switches = switch_names(net)
    set_loss(sim, switches, 2)
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log], timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "2%: ibsm --once exits 0", r.describe() + h.tail(log))
    lost_smps(tap, r.counts, "2%")
    set_loss(sim, switches, 0)  # the diags must not be judged through the loss
    h.fabric_checks(tap, sim, diag_log=log, switches=True)

# ---- 2. heavy loss, --once
net = h.need_fabric(tap, "ftree-3l.net")
with h.Sim(net) as sim:
    switches = switch_names(net)
    set_loss(sim, switches, 20)
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log], timeout=400)
    up = re.search(r"SUBNET UP", h.read(log)) is not None
    tap.ok(r.rc == 0 and not r.crashed() and up, "20%%: ibsm --once reaches SUBNET UP and exits 0 (%.1f s)"
           % r.seconds, r.describe() + h.tail(log))
    lost_smps(tap, r.counts, "20%")
    set_loss(sim, switches, 0)
    h.fabric_checks(tap, sim, diag_log=log, switches=True)

# ---- 3. a daemon through 30 s of 10% loss
with h.Sim(net) as sim:
    switches = switch_names(net)
    log = sim.path("ibsmd.log")
    sm = sim.start_sm(["-f", log], name="ibsmd")
    up = sm.wait_for(log, r"SUBNET UP", 120)
    idle = sm.wait_idle(1.0, 120)
    tap.ok(up and idle is not None, "daemon comes up without loss and goes idle", h.tail(log))
    base, _ = h.fabric_checks(tap, sim, diag_log=log, switches=True)
    c0 = sm.counts()
    hups = 0
    lifted = 0.0
    for cp in range(CHECKPOINTS):
        set_loss(sim, switches, 10)
        end = time.time() + LOSS_S / CHECKPOINTS  # a schedule: how long the loss stays on
        while time.time() < end and sm.alive():
            sm.popen.send_signal(signal.SIGHUP)
            hups += 1
            time.sleep(HUP_EVERY_S)
        t = time.time()
        set_loss(sim, switches, 0)
        snap = sim.collect()
        lifted += time.time() - t
        tap.check("checkpoint %d (after %d s of 10%% loss): LIDs, port states and LFTs as before the loss"
                  % (cp + 1, (cp + 1) * LOSS_S // CHECKPOINTS), h.check_unchanged(base, snap))
        tap.check("checkpoint %d: every pair delivered" % (cp + 1), h.check_routes(snap))
    d = sm.counts() - c0
    lost = d.requests() - d.responses()
    tap.ok(d.valid and lost > 0 and hups >= 10,
           "the %d SIGHUP sweeps met the loss: %d of %d SMPs unanswered (checkpoints lifted it for %.1f s in all)"
           % (hups, lost, d.requests(), lifted), "since the loss began: %s" % d.summary())
    tap.ok(d.sets(h.LFT) == 0 and d.sets(h.PORTINFO) == 0,
           "nothing rewritten while the loss lasted: %d LFT blocks, %d PortInfo Sets" %
           (d.sets(h.LFT), d.sets(h.PORTINFO)), d.describe_sets(base) + "\n" + h.tail(log, 15))
    rc = du.signal_and_wait(sm, signal.SIGTERM, 60)
    tap.ok(rc == 0, "the daemon stops cleanly on SIGTERM (exit %s)" % rc, h.tail(log))
tap.done()
