#!/usr/bin/env python3
"""84-crash-evidence.t - an SM that crashes in a test leaves its backtrace in the test's output.

A crash seen once in a loaded `make check` (63-logs: the second SM died by SIGSEGV on SIGTERM)
and never again in 115 reruns is only worth something if the first run kept the evidence.
harness.py runs every SM with RLIMIT_CORE unlimited in a scratch cwd and, when one ends by a
core-dumping signal, prints `gdb -batch -ex 'thread apply all bt'` of its core and the tail of
its log as TAP '#' diagnostics on stderr, then deletes the core. The kernel dumps a core for a
SIGSEGV sent by kill() as for a fault, so the crash here is a kill:
  1-6. a daemon (harness.Background) on tiny.net, SUBNET UP, killed by SIGSEGV: it ends by
       SIGSEGV; the report names it and holds gdb's backtrace with the main thread in main()
       or GLib's main loop, and the tail of the SM's log; every line of it is a '#' line (the
       TAP stays valid); no core is left in the scratch dir;
  7-8. ibsm run to completion (harness.run, the path of --once runs), killed by SIGSEGV while
       it runs: the same report, and no core left in the private cwd run() gave it;
 9-10. the shutdown owns its signals: SIGTERM, then (the SM held by gdb at transport_quiesce,
       in sm_release, past the event loop whose GLib signal sources put SIG_DFL back) a
       logrotate SIGUSR1, a SIGHUP and a second SIGTERM: it exits 0, its log ends with
       SM-0007 exiting and the STATS at exit.
Sanitized builds keep their own disable_coredump (their report is the evidence): skipped there.
Every wait polls for its event with a generous ceiling (POLL_S)."""
import contextlib
import glob
import io
import os
import re
import signal
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 60
PLAN = 10
tap = h.start(plan=PLAN, timeout=300, need=("gdb",))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD: the report is tested on ibsm")
if not h.cores_wanted():
    tap.skip_all("a sanitized build: its runtime disables core dumps (its own report is the evidence)")
TINY = h.need_fabric(tap, "tiny.net")
BT = re.compile(r"^# #\d+\s+.*\b(main|g_main_\w+|g_main_context_\w+)\s*\(", re.M)


def cores_in(d):
    """Files under D that look like core files (any name core_pattern may give)."""
    out = []
    for root, _, files in os.walk(d):
        out += [os.path.join(root, f) for f in files if f.startswith("core")]
    return out


def captured(fn):
    """(FN's return value, what it printed on stderr)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        v = fn()
    return v, buf.getvalue()


def all_diag(text):
    return bool(text.strip()) and all(l.startswith("# ") for l in text.splitlines())


with h.Sim(TINY, host="h1") as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="ibsm")
    up = sm.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    tap.ok(up, "ibsm came up on tiny.net (SUBNET UP)", h.tail(log))
    os.kill(sm.pid, signal.SIGSEGV)
    try:
        rc = sm.popen.wait(h.patience(POLL_S))
    except Exception:
        rc = None
    tap.is_(rc, -signal.SIGSEGV, "killed by SIGSEGV: it ends by SIGSEGV")
    _, err = captured(sm.stop)
    tap.ok("was killed by SIGSEGV" in err and "thread apply all bt" in err and BT.search(err),
           "the report names SIGSEGV and holds gdb's backtrace of every thread (main or g_main_* in it)",
           err[-3000:] or "(nothing printed)")
    tap.ok(re.search(r"^# last lines of %s:$" % re.escape(log), err, re.M) and
           re.search(r"^# .*SWP-0002 SUBNET UP", err, re.M),
           "the report holds the tail of the SM's log", err[-1500:])
    tap.ok(all_diag(err), "every line of the report is a TAP '#' diagnostic",
           "\n".join(l for l in err.splitlines() if not l.startswith("# "))[:1500])
    left = cores_in(sim.dir)
    tap.ok(not left, "no core is left in the scratch dir", " ".join(left))

    # harness.run(): ibsm as a --once run would be (to completion), killed while it runs
    log2 = sim.path("run.log")
    seen = {}

    def killer():
        """Waits for the SM run() started (our child running ibsm, its log up), then SIGSEGV."""
        def child():
            for st in glob.glob("/proc/[0-9]*/stat"):
                try:
                    with open(st) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    pid = int(st.split("/")[2])
                    if int(fields[1]) == os.getpid() and \
                            os.path.realpath(os.readlink("/proc/%d/exe" % pid)) == os.path.realpath(h.ibsm_path()):
                        return pid
                except (OSError, ValueError, IndexError):
                    continue
            return None
        pid = h.until(lambda: child() if "SWP-0002 SUBNET UP" in h.read(log2) else None, POLL_S)
        if pid:
            seen["pid"] = pid
            os.kill(pid, signal.SIGSEGV)

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    r, err2 = captured(lambda: sim.run_sm(["-f", log2, "-s", "0"], host="h1", timeout=POLL_S * 2))
    th.join(h.patience(POLL_S))
    tap.ok(seen.get("pid") and r.rc == -signal.SIGSEGV and "was killed by SIGSEGV" in err2 and
           BT.search(err2) and all_diag(err2),
           "harness.run(): ibsm killed by SIGSEGV while it runs: the same report ('#' lines, "
           "a backtrace with main or g_main_*)", r.describe() + "\n" + err2[-2500:])
    left = cores_in(sim.dir) + glob.glob(os.path.join(sim.rundir, "core*"))
    tap.ok(not left, "no core is left behind by run() either", " ".join(left))

# the shutdown owns its signals: the SM held at transport_quiesce (sm_release) by gdb while
# logrotate's SIGUSR1, a SIGHUP and a second SIGTERM arrive
with h.Sim(TINY, host="h1") as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="held")
    up = sm.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    gdb_out = sim.path("gdb.out")
    pid = sm.pid
    sigs = "kill -USR1 %d; kill -HUP %d; kill -TERM %d" % (pid, pid, pid)
    gdb = h.Background([h.which("gdb"), "-batch", "-nx", "-p", str(pid)] +
                       sum((["-ex", "handle %s nostop noprint pass" % x] for x in
                            ("SIGTERM", "SIGUSR1", "SIGHUP", "SIGPIPE")), []) +
                       ["-ex", "break transport_quiesce", "-ex", "continue",
                        "-ex", "shell " + sigs, "-ex", "continue"],
                       dict(os.environ), sim.dir, gdb_out)

    def traced():
        st = h.read("/proc/%d/status" % pid)
        m = re.search(r"^TracerPid:\s+(\d+)", st, re.M)
        return m and int(m.group(1)) != 0 and "Breakpoint 1" in h.read(gdb_out)
    attached = h.until(lambda: traced() or "ptrace:" in h.read(gdb_out) or not gdb.alive(), POLL_S) and traced()
    if not attached and "ptrace: Operation not permitted" in h.read(gdb_out):
        gdb.stop()
        tap.skip("the shutdown owns its signals", "gdb may not attach here (ptrace: Operation not "
                 "permitted; /proc/sys/kernel/yama/ptrace_scope)", 2)
        tap.done()
    if attached:
        sm.popen.send_signal(signal.SIGTERM)
    try:
        rc = sm.popen.wait(h.patience(POLL_S))
    except Exception:
        rc = None
    held = "Breakpoint 1, " in h.read(gdb_out) or "transport_quiesce" in h.read(gdb_out)
    gdb.stop()
    tap.ok(up and attached and held and rc == 0,
           "SIGUSR1, SIGHUP and a second SIGTERM in the shutdown (held at transport_quiesce): "
           "exit %s" % rc, h.read(gdb_out)[-1500:] + h.tail(log))
    text = h.read(log)
    tap.ok(re.search(r"SM-0007 exiting", text) and re.search(r"STS-0003 STATS total", text),
           "the log ends as a shutdown does: SM-0007 exiting after the STATS", h.tail(log, 8))
    sm.stop()
tap.done()
