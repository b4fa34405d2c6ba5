#!/usr/bin/env python3
"""15-daemon-signals.t - ibsm as a daemon under signals and restarts, judged from the wire (the
SMP counter shim, tests/tools/smpcount.so, counts what ibsm sends) and by the diags. SIGHUP on
an unchanged fabric: a new discovery (every node's NodeInfo read again) that writes no LFT
block, no PortInfo, no Set at all; the tables read back are unchanged. SIGUSR1 after the log
file was moved: a new log file appears and receives the lines that follow (the log file is the
feature here). SIGTERM with -s 0 on an idle fabric: exit 0. A restart on the same fabric: a
full discovery, then not one Set: same LIDs, same LFTs. -B --pid_file on a fresh fabric: the
command returns 0 while the daemon runs on (it holds no pipe of ours), the pid file names a
running ibsm, that daemon brings the subnet up (every pair delivered), and SIGTERM to that pid
stops it and removes the pid file. SIGHUP and SIGUSR1 sent the moment ibsm opens its log do
not kill it. No verdict depends on how fast anything happened."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60           # generous bound for each condition; the speed belongs in make bench
tap = h.start(plan=26, timeout=600)
net = h.need_fabric(tap, "ftree-small.net")


def rediscovered(since, n_nodes):
    """A counter condition: NodeInfo read from every node since the reading SINCE."""
    return lambda c: (c - since).gets(h.NODEINFO) >= n_nodes


with h.Sim(net) as sim:
    n_nodes = len(sim.netfile.nodes)
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)      # readiness only
    c0 = sm.wait_idle(1.0, POLL_S)
    tap.ok(up and c0 is not None, "daemon (-s 0) comes up and goes idle (its SMP counter stands still)",
           h.tail(log) + sm.output()[-500:])
    c0 = c0 or sm.counts()
    before = sim.collect()
    tap.check("fabric configured", h.check_routes(before))
    host = sim.node(before, "h1")

    # ---- SIGHUP, nothing changed
    sm.popen.send_signal(signal.SIGHUP)
    c1, swept = sm.wait_counts(rediscovered(c0, n_nodes), POLL_S)
    c1 = sm.wait_idle(1.0, POLL_S) or sm.counts()
    d = c1 - c0
    tap.ok(swept, "SIGHUP: a new discovery (NodeInfo of all %d nodes read again: %d)"
           % (n_nodes, d.gets(h.NODEINFO)), d.summary() + "\n" + h.tail(log, 10))
    tap.ok(swept and d.sets(h.LFT) == 0, "SIGHUP on an unchanged fabric: no LFT block written (%d)"
           % d.sets(h.LFT), d.describe_sets(before, host, h.LFT))
    tap.ok(swept and d.sets(h.PORTINFO) == 0, "SIGHUP on an unchanged fabric: no PortInfo Set (%d)"
           % d.sets(h.PORTINFO), d.describe_sets(before, host, h.PORTINFO))
    tap.ok(swept and d.sets() == 0, "SIGHUP on an unchanged fabric: no Set SMP of any attribute (%d)"
           % d.sets(), d.describe_sets(before, host))
    after = sim.collect()
    tap.check("SIGHUP: no LID, port state or LFT changed", h.check_unchanged(before, after))

    # ---- SIGUSR1 after the log was moved away (logrotate): the log file is the feature here
    old = log + ".1"
    os.rename(log, old)
    old_size = du.size(old)
    sm.popen.send_signal(signal.SIGUSR1)
    m = du.wait_text(log, 0, r"LOOP-0004", POLL_S, sm.alive)
    tap.ok(m, "SIGUSR1: a new log file appears at the old name (LOOP-0004 in it)",
           "exists: %s; old file tail:\n%s" % (os.path.exists(log), h.tail(old, 5)))
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, 0, r"LOOP-0005.*SWP-0005", POLL_S, sm.alive)
    tap.ok(m, "SIGUSR1: the lines that follow (a SIGHUP's sweep) go to the new file", h.tail(log, 10))
    grew = h.read(old)[old_size:]
    tap.ok("LOOP-0005" not in grew, "SIGUSR1: the moved file receives no more sweep lines", grew[-800:])
    sm.wait_idle(1.0, POLL_S)

    # ---- SIGTERM on the idle fabric
    rc = du.signal_and_wait(sm, signal.SIGTERM, POLL_S)
    tap.ok(rc == 0, "SIGTERM: exit status 0 (got %s)" % rc, sm.output()[-800:] + h.tail(log, 5))
    sm.stop()
    tap.ok(not re.search(r"AddressSanitizer|runtime error", sm.output()), "no sanitizer report",
           sm.output()[-800:])

    # ---- restart on the same fabric
    log2 = sim.path("ibsm-restart.log")
    sm2 = sim.start_sm(["-f", log2, "-s", "0"], host="h1", name="ibsm2")
    z = h.SmpCounts()
    z.valid = True
    _, swept = sm2.wait_counts(rediscovered(z, n_nodes), POLL_S)
    c2 = sm2.wait_idle(1.0, POLL_S) or sm2.counts()
    tap.ok(swept and sm2.alive(), "restart: the second ibsm discovers the fabric (NodeInfo of all %d nodes) "
           "and stays up" % n_nodes, c2.summary() + "\n" + h.tail(log2) + sm2.output()[-500:])
    again = sim.collect()
    tap.check("restart: every port keeps its LID", du.compare_lids(before, again))
    tap.check("restart: no LID, port state or LFT changed", h.check_unchanged(before, again))
    tap.ok(swept and c2.sets(h.LFT) == 0, "restart: zero LFT blocks written (SMP counter: %d)" % c2.sets(h.LFT),
           c2.describe_sets(again, host, h.LFT))
    tap.ok(swept and c2.sets(h.PORTINFO) == 0, "restart: zero PortInfo Sets (SMP counter: %d)"
           % c2.sets(h.PORTINFO), c2.describe_sets(again, host, h.PORTINFO))
    tap.ok(swept and c2.sets() == 0, "restart: no Set SMP of any attribute (SMP counter: %d)" % c2.sets(),
           c2.describe_sets(again, host))
    rc = du.signal_and_wait(sm2, signal.SIGTERM, POLL_S)
    sm2.stop()
    tap.ok(rc == 0, "restart: SIGTERM, exit status 0 (got %s)" % rc, sm2.output()[-800:])

# ---- -B: into the background with a pid file, on a fabric no SM has touched
with h.Sim(net) as sim:
    log3 = sim.path("ibsm-bg.log")
    pidf = sim.path("ibsm.pid")
    # run() waits for our pipes to close: it returns while the daemon runs only if the daemon
    # holds none of them; a daemon that kept one would make it time out
    r = sim.run_sm(["-B", "--pid_file", pidf, "-f", log3, "-s", "0"], host="h1", timeout=POLL_S)
    tap.ok(r.rc == 0 and not r.timed_out, "-B: the command exits 0 and returns (the daemon holds no pipe of ours)",
           r.describe())
    end = h.deadline(POLL_S)
    pid = 0
    while time.time() < end and not pid:
        m = re.match(r"\s*(\d+)\s*$", h.read(pidf))
        pid = int(m.group(1)) if m else 0
        if not pid:
            time.sleep(0.05)
    guard = du.PidGuard(pid, h.ibsm_path()) if pid else None
    tap.ok(pid > 0, "-B: the pid file %s names a pid (%r)" % (os.path.basename(pidf), h.read(pidf)[:40]))
    tap.ok(guard is not None and guard.running(),
           "-B: that pid is a running ibsm (%s)" % (du.pid_exe(pid) if pid else "-"))
    snap, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0] and h.check_ports_active(s)[0], POLL_S)
    tap.check("-B: the daemon brings the subnet up: every pair delivered", h.check_routes(snap))
    stopped = False
    if guard is not None and guard.running():
        os.kill(pid, signal.SIGTERM)
        end = h.deadline(POLL_S)
        while time.time() < end and guard.running():
            time.sleep(0.05)
        stopped = not guard.running()
    tap.ok(stopped, "-B: SIGTERM to that pid stops it", h.tail(log3, 5))
    end = h.deadline(POLL_S)
    while time.time() < end and os.path.exists(pidf):
        time.sleep(0.05)
    tap.ok(not os.path.exists(pidf), "-B: the pid file is removed when the daemon exits")
    if guard is not None:
        guard.stop()

# SIGHUP (and SIGUSR1) the moment ibsm's log file appears, before it has done anything else: it
# must live on (a restart followed at once by a reload killed it: the handler was set only
# after the options and the log; before main() runs, ld.so's few milliseconds, nothing can help)
with h.Sim(net) as sim:
    log = sim.path("early.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="early", count=False)
    end = h.deadline(POLL_S)
    while time.time() < end and not os.path.exists(log) and sm.alive():
        pass                                   # spin: the window is a millisecond wide
    os.kill(sm.pid, signal.SIGHUP)
    os.kill(sm.pid, signal.SIGUSR1)
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    tap.ok(up and sm.alive(), "SIGHUP and SIGUSR1 as the log file appears: the SM lives on and brings the subnet up",
           "exit %s; %s" % (sm.popen.poll(), h.tail(log, 5)))
    sm.stop()
tap.done()
