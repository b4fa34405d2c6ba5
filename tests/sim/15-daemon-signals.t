#!/usr/bin/env python3
"""15-daemon-signals.t - ibsm as a daemon under signals and restarts. SIGHUP on an unchanged
fabric: a heavy sweep that writes no LFT block and no PortInfo (ibsm's own per-attribute Set
counters, STS-0004, before and after; the LFTs read back). SIGUSR1 after the log file was
moved: a new log file appears and receives the lines that follow. SIGTERM with -s 0 on an
idle fabric: exit 0 within a second. A restart on the same fabric: same LIDs, same LFTs, zero
LFT blocks written. -B --pid_file: the command returns 0 at once, the pid file names a
running ibsm, which the test stops by that pid."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

tap = h.start(plan=26, timeout=100)
net = h.need_fabric(tap, "ftree-small.net")

with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="ibsm")
    tap.ok(sm.wait_for(log, r"SWP-0002 SUBNET UP", 30) and du.wait_quiet(log),
           "daemon (-s 0) reaches SUBNET UP and goes idle", h.tail(log) + sm.output()[-500:])
    before = sim.collect()
    tap.check("fabric configured", h.check_routes(before))
    st0 = du.last_stats(h.read(log))

    # ---- SIGHUP, nothing changed
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"LOOP-0005.*SWP-0005 heavy sweep.*STS-0004 STATS[^\n]*\n", 10, sm.alive)
    text = du.since(log, off)
    tap.ok(m, "SIGHUP: logged (LOOP-0005), then a heavy sweep with its statistics", text[-1500:])
    st1 = du.last_stats(text)
    for key in ("lft_blocks_set", "portinfo_set"):
        tap.ok(key in st0 and st0.get(key) == st1.get(key),
               "SIGHUP on an unchanged fabric: %s unchanged (%s -> %s)" % (key, st0.get(key), st1.get(key)))
    tap.ok("SWP-0006" in text, "SIGHUP: the sweep logs 'nothing changed' (SWP-0006)", text[-1500:])
    after = sim.collect()
    tap.check("SIGHUP: no LID, port state or LFT changed", h.check_unchanged(before, after))

    # ---- SIGUSR1 after the log was moved away (logrotate)
    old = log + ".1"
    os.rename(log, old)
    old_size = du.size(old)
    sm.popen.send_signal(signal.SIGUSR1)
    m = du.wait_text(log, 0, r"LOOP-0004", 5, sm.alive)
    tap.ok(m, "SIGUSR1: a new log file appears at the old name (LOOP-0004 in it)",
           "exists: %s; old file tail:\n%s" % (os.path.exists(log), h.tail(old, 5)))
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, 0, r"LOOP-0005.*SWP-0005", 10, sm.alive)
    tap.ok(m, "SIGUSR1: the lines that follow (a SIGHUP's sweep) go to the new file", h.tail(log, 10))
    grew = h.read(old)[old_size:]
    tap.ok("LOOP-0005" not in grew, "SIGUSR1: the moved file receives no more sweep lines", grew[-800:])
    du.wait_quiet(log, 0.5, 5)

    # ---- SIGTERM on the idle fabric
    rc, secs = du.signal_and_time(sm, signal.SIGTERM, 5)
    tap.ok(rc == 0, "SIGTERM: exit status 0 (got %s)" % rc, sm.output()[-800:] + h.tail(log, 5))
    tap.ok(rc is not None and secs < 1.0, "SIGTERM: exits within 1 s (%.2f s)" % secs)
    sm.stop()
    tap.ok(not re.search(r"AddressSanitizer|runtime error", sm.output()), "no sanitizer report",
           sm.output()[-800:])

    # ---- restart on the same fabric
    log2 = sim.path("ibsm-restart.log")
    sm2 = sim.start_sm(["-f", log2, "-s", "0"], host="h1", name="ibsm2")
    ok = sm2.wait_for(log2, r"STS-0004", 30) and du.wait_quiet(log2)
    text2 = h.read(log2)
    tap.ok(ok and sm2.alive(), "restart: the second ibsm sweeps and stays up", text2[-1500:] + sm2.output()[-500:])
    again = sim.collect()
    tap.check("restart: every port keeps its LID", du.compare_lids(before, again))
    tap.check("restart: no LID, port state or LFT changed", h.check_unchanged(before, again))
    sts = du.all_stats(text2)
    tap.ok(sts and all(s.get("lft_blocks_set") == 0 for s in sts),
           "restart: zero LFT blocks written (every STS-0004 lft_blocks_set=0)",
           "STS-0004: %s" % sts)
    tap.ok(sts and all(s.get("portinfo_set") == 0 for s in sts),
           "restart: zero PortInfo Sets (every STS-0004 portinfo_set=0)", "STS-0004: %s" % sts)
    rc, secs = du.signal_and_time(sm2, signal.SIGTERM, 5)
    sm2.stop()
    tap.ok(rc == 0 and secs < 1.0, "restart: SIGTERM exits 0 within 1 s (status %s, %.2f s)" % (rc, secs))

    # ---- -B: into the background with a pid file
    log3 = sim.path("ibsm-bg.log")
    pidf = sim.path("ibsm.pid")
    r = sim.run_sm(["-B", "--pid_file", pidf, "-f", log3, "-s", "0"], host="h1", timeout=20)
    tap.ok(r.rc == 0 and not r.timed_out, "-B: the command exits 0", r.describe())
    tap.ok(r.seconds < 2.0, "-B: ... at once (%.2f s; the daemon holds no pipe of ours)" % r.seconds)
    end = time.time() + 5
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
    tap.ok(pid and du.wait_text(log3, 0, r"SWP-0002 SUBNET UP", 20, guard.running),
           "-B: the daemon brings the subnet up (its log says SUBNET UP)", h.tail(log3))
    stopped = False
    if guard is not None and guard.running():
        os.kill(pid, signal.SIGTERM)
        end = time.time() + 2
        while time.time() < end and guard.running():
            time.sleep(0.05)
        stopped = not guard.running()
    tap.ok(stopped, "-B: SIGTERM to that pid stops it within 2 s", h.tail(log3, 5))
    end = time.time() + 1
    while time.time() < end and os.path.exists(pidf):
        time.sleep(0.05)
    tap.ok(not os.path.exists(pidf), "-B: the pid file is removed when the daemon exits")
    if guard is not None:
        guard.stop()
tap.done()
