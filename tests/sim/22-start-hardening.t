#!/usr/bin/env python3
"""22-start-hardening.t - how ibsm starts, judged from outside (exit statuses, stderr, file
modes, the pid file, the diags). -B reports start-up errors: the command exits 1 with the
message already on its stderr when it returns (a local port that does not exist, a pid file
that cannot be written); a stale pid file naming a live process that is not ibsm (pid 1) does
not block the start, and when the -B command returns the pid file already names the running
daemon, which brings the subnet up; a pid file naming that running ibsm does block a second
one. Files under umask 000: the log is created 0640 and the pid file 0644; `-e` on a log path
that is a symbolic link is refused naming the path, and the link's target is not truncated;
the bytes of a binary guid2lid line reach the log escaped, one line per message. The SM's own
link down at start: ibsm waits (saying once which port), --once and the daemon alike, and
brings the subnet up once the console relinks the port (the harness's fabric checks);
SIGUSR1 (a new log file) and SIGHUP do not end the wait, SIGTERM ends it at once. No verdict depends on how fast anything happened: every
condition is polled with a generous bound."""
import os
import re
import signal
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60           # generous bound for each condition
WAIT_CODE = "PORT-0001"   # "the link of <port> is down: waiting" (the message is the feature)

tap = h.start(plan=34, timeout=600)
net = h.need_fabric(tap, "tiny.net")


def run_bg_cmd(sim, args, host, errfile):
    """Run `ibsm ARGS` attached at HOST, stderr to ERRFILE; wait for the command itself (not for
    whatever it left running) and return (exit status or None, stderr as it was at that moment)."""
    with open(errfile, "w") as err:
        p = subprocess.Popen(h.sm_cmd() + args, env=sim.env(host), cwd=sim.rundir, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err, preexec_fn=h._child_setup)
        holder = h._Proc(p)
        h._live.append(holder)
        try:
            rc = p.wait(POLL_S)
        except subprocess.TimeoutExpired:
            rc = None
        text = h.read(errfile)      # what the caller saw when the command returned
        holder.stop()
        h._live.remove(holder)
    return rc, text


def pid_in(path):
    m = re.match(r"\s*(\d+)\s*$", h.read(path))
    return int(m.group(1)) if m else 0


def mode(path):
    try:
        return stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        return None


def stop_guard(guard):
    """SIGTERM to a -B daemon by its pid; True once it is gone."""
    if guard is None or not guard.running():
        return False
    os.kill(guard.pid, signal.SIGTERM)
    end = h.deadline(POLL_S)
    while time.time() < end and guard.running():
        time.sleep(0.05)
    return not guard.running()


with h.Sim(net) as sim:
    # ---- -B: start-up errors reach the caller
    pidf = sim.path("ibsm.pid")
    rc, err = run_bg_cmd(sim, ["-B", "-f", sim.path("bad-g.log"), "--pid_file", pidf, "-g", "0x1234"],
                         "h1", sim.path("bad-g.err"))
    tap.ok(rc == 1, "-B -g 0x1234 (no such local port): the command exits 1 (got %s)" % rc, err[-800:])
    tap.ok("0x0000000000001234" in err, "-B -g 0x1234: the message naming the GUID is on stderr when the "
           "command returns", err[-800:])
    tap.ok(not os.path.exists(pidf), "-B -g 0x1234: no pid file is left behind")

    notdir = sim.path("plain-file")
    with open(notdir, "w") as f:
        f.write("x\n")
    badpid = os.path.join(notdir, "ibsm.pid")
    rc, err = run_bg_cmd(sim, ["-B", "-f", sim.path("bad-pid.log"), "--pid_file", badpid], "h1",
                         sim.path("bad-pid.err"))
    tap.ok(rc == 1, "-B with an unwritable pid file: the command exits 1 (got %s)" % rc, err[-800:])
    tap.ok("SM-0012" in err and badpid in err, "-B with an unwritable pid file: SM-0012 naming it is on "
           "stderr when the command returns", err[-800:])

    # ---- -B under umask 000, over a stale pid file naming pid 1 (alive, not ibsm)
    with open(pidf, "w") as f:
        f.write("1\n")
    log = sim.path("bg.log")
    old_umask = os.umask(0)
    try:
        rc, err = run_bg_cmd(sim, ["-B", "-f", log, "--pid_file", pidf, "-s", "0"], "h1", sim.path("bg.err"))
    finally:
        os.umask(old_umask)
    pid = pid_in(pidf)          # read at once: -B returns only when the daemon runs
    guard = du.PidGuard(pid, h.ibsm_path()) if pid > 1 else None
    tap.ok(rc == 0, "-B over a pid file naming pid 1 (not an ibsm): the command exits 0 (got %s)" % rc,
           err[-800:] + h.tail(log, 5))
    tap.ok(guard is not None and guard.running(), "-B: when the command returns, the pid file already names "
           "a running ibsm (%r, %s)" % (h.read(pidf)[:20], du.pid_exe(pid) if pid else "-"), h.tail(log, 5))
    tap.is_(mode(log), 0o640, "umask 000: the log file is created 0640")
    tap.is_(mode(pidf), 0o644, "umask 000: the pid file is 0644")
    snap, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0] and h.check_ports_active(s)[0], POLL_S)
    tap.check("-B: the daemon brings the subnet up: every pair delivered", h.check_routes(snap))

    # a pid file naming that running ibsm blocks a second one (on another host)
    rc, err = run_bg_cmd(sim, ["-B", "-f", sim.path("second.log"), "--pid_file", pidf, "-s", "0"], "h2",
                         sim.path("second.err"))
    tap.ok(rc == 1 and pidf in err and str(pid) in err, "a pid file naming a running ibsm blocks a second "
           "-B: exit 1, the message names the file and the pid (got %s)" % rc, err[-800:])
    tap.ok(guard is not None and guard.running() and pid_in(pidf) == pid,
           "the running daemon and its pid file are untouched")
    tap.ok(stop_guard(guard), "SIGTERM to that pid stops the daemon", h.tail(log, 5))
    if guard is not None:
        guard.stop()

    # ---- -e on a log path that is a symbolic link: refused, the target not truncated
    target = sim.path("precious.txt")
    with open(target, "w") as f:
        f.write("keep me\n")
    link = sim.path("link.log")
    os.symlink(target, link)
    r = sim.run_sm(["--once", "-e", "-f", link], host="h1", timeout=POLL_S)
    tap.ok(r.rc == 1 and not r.crashed(), "-e -f SYMLINK: exit 1", r.describe())
    tap.ok(link in r.err and "symbolic link" in r.err, "-e -f SYMLINK: the message names the path and says "
           "it is a symbolic link", r.err[-800:])
    tap.is_(h.read(target), "keep me\n", "-e -f SYMLINK: the link's target is not truncated")

    # ---- a binary guid2lid line reaches the log escaped
    g2l = os.path.join(sim.osmdir, "guid2lid")
    with open(g2l, "wb") as f:
        f.write(b"0x\x01\x1b[2J\xff\xfe junk\rmore\n")
    blog = sim.path("binary.log")
    r = sim.run_sm(["--once", "-f", blog], host="h1", timeout=POLL_S)
    with open(blog, "rb") as f:
        raw = f.read()
    line = next((l for l in raw.split(b"\n") if b"LID-0002" in l), b"")
    tap.ok(r.rc == 0 and line, "a binary guid2lid line is logged (LID-0002) and --once exits 0", r.describe())
    bad = sorted({b for b in raw if (b < 0x20 and b != 0x0a) or b >= 0x7f})
    tap.ok(not bad, "the log holds no control byte and no byte >= 0x7f (found %s)" %
           ", ".join("0x%02x" % b for b in bad[:8]), repr(line[-120:]))
    tap.ok(b"\\x01\\x1b[2J\\xff\\xfe junk\\x0dmore" in line, "the line shows the bytes as \\xNN, on one line",
           repr(line[-160:]))

# ---- the SM's own link down at start, on a fabric no SM has touched
with h.Sim(net) as sim:
    sim.console('Unlink "h1"[1]')
    # --once: waits, says so once, and brings the subnet up when the link comes back
    olog = sim.path("once.log")
    sm = sim.start_sm(["--once", "-f", olog], host="h1", name="once")
    waiting = sm.wait_for(olog, WAIT_CODE, POLL_S)
    tap.ok(waiting and sm.alive(), "--once, link down: ibsm waits (alive, %s logged)" % WAIT_CODE,
           h.tail(olog, 5) + sm.output()[-500:])
    tap.ok(re.search(WAIT_CODE + r".*ibsim0.*port 1", h.read(olog)), "the wait names the port (ibsim0 port 1)",
           h.tail(olog, 5))
    time.sleep(3)       # an observation window: the wait is logged once, not once per poll
    n = h.read(olog).count(WAIT_CODE)
    tap.ok(sm.alive() and n == 1, "after 3 s still waiting, the wait logged once (%d)" % n, h.tail(olog, 8))
    sim.console('ReLink "h1"[1]')
    try:
        rc = sm.popen.wait(POLL_S)
    except subprocess.TimeoutExpired:
        rc = None
    tap.ok(rc == 0, "--once: the link relinked, the sweep runs and ibsm exits 0 (got %s)" % rc,
           h.tail(olog, 10) + sm.output()[-500:])
    sm.stop()
    h.fabric_checks(tap, sim, diag_log=olog)              # 5 tests

    # the daemon: waits too, and brings the subnet up when the link comes back
    sim.console('Unlink "h1"[1]')
    alog = sim.path("daemon-relink.log")
    sm = sim.start_sm(["-f", alog, "-s", "0"], host="h1", name="daemon-relink")
    waiting = sm.wait_for(alog, WAIT_CODE, POLL_S)
    # logrotate's SIGUSR1 and a reload's SIGHUP while waiting must not kill it
    os.rename(alog, alog + ".1")
    sm.popen.send_signal(signal.SIGUSR1)
    reopened = du.wait_text(alog, 0, r"SM-0013", POLL_S, sm.alive)
    tap.ok(waiting and reopened and sm.alive(), "SIGUSR1 while waiting: still waiting, a new log file at the "
           "old name (SM-0013 in it)", h.tail(alog + ".1", 5) + sm.output()[-500:])
    sm.popen.send_signal(signal.SIGHUP)
    hup = du.wait_text(alog, 0, r"SM-0015", POLL_S, sm.alive)
    tap.ok(hup and sm.alive(), "SIGHUP while waiting: still waiting (SM-0015 logged)", h.tail(alog, 5) +
           sm.output()[-500:])
    sim.console('ReLink "h1"[1]')
    snap, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0] and h.check_ports_active(s)[0], POLL_S)
    tap.ok(waiting and h.check_routes(snap)[0] and h.check_ports_active(snap)[0],
           "daemon started with its link down: relinked, every pair delivered and every linked port ACTIVE",
           h.check_routes(snap)[1] + "\n" + h.check_ports_active(snap)[1] + "\n" + h.tail(alog, 8))
    rc = du.signal_and_wait(sm, signal.SIGTERM, POLL_S)
    tap.ok(rc == 0, "that daemon: SIGTERM, exit status 0 (got %s)" % rc, sm.output()[-500:])
    sm.stop()

    # the daemon: waiting, SIGTERM stops it at once
    sim.console('Unlink "h1"[1]')
    dlog = sim.path("daemon.log")
    sm = sim.start_sm(["-f", dlog, "-s", "0"], host="h1", name="daemon")
    waiting = sm.wait_for(dlog, WAIT_CODE, POLL_S)
    t0 = time.time()
    rc = du.signal_and_wait(sm, signal.SIGTERM, POLL_S)
    took = time.time() - t0
    tap.ok(waiting and rc == 0, "daemon waiting for its link: SIGTERM, exit status 0 (got %s, %.1f s)"
           % (rc, took), h.tail(dlog, 5) + sm.output()[-500:])
    tap.ok(waiting and rc is not None and took < 10, "SIGTERM ends the wait without waiting for the link "
           "(%.1f s, bound 10 s)" % took)
    sm.stop()
    sim.console('ReLink "h1"[1]')
tap.done()
