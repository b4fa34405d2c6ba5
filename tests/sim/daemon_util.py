"""daemon_util.py - helpers shared by the daemon tests (14-18): ibsm running without --once is
judged by what the SMP counter shim saw it send (harness.SmpCounts) and by the LFTs the diags
read (which switch ports the routes cross); its log (read from an offset so each step sees
only what it caused) is a readiness signal and the place where messages are checked.
Python 3 standard library only; harness.py does the processes and the checks."""

import collections
import os
import re
import signal
import time

import harness as h

def size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def since(path, offset):
    """The text of PATH from byte OFFSET on ('' if unreadable)."""
    try:
        with open(path, errors="replace") as f:
            f.seek(offset)
            return f.read()
    except OSError:
        return ""


def wait_text(path, offset, pattern, timeout, alive=None):
    """Wait until regex PATTERN appears in PATH after OFFSET; returns the match or None.
    ALIVE: a callable; the wait ends early when it returns False. TIMEOUT is a ceiling,
    scaled by IBSM_TEST_SLOW (harness.patience)."""
    rx = re.compile(pattern, re.S)
    end = h.deadline(timeout)
    while True:
        m = rx.search(since(path, offset))
        if m or time.time() > end or (alive is not None and not alive()):
            return m or rx.search(since(path, offset))
        time.sleep(0.05)


def wait_settled(bg, path, offset, timeout=60.0, quiet=1.0):
    """After OFFSET in log PATH of the SM BG: wait until its last sweep (heavy or repair) ended
    complete - SUBNET UP (SWP-0002) or nothing changed (SWP-0006), then that sweep's summary
    (SWP-0005) - and not incomplete (SWP-0004: a heavy sweep follows a second later, a quiet
    second would be taken for the end), then until it sends nothing for QUIET seconds. Returns
    True if it settled. TIMEOUT is a ceiling (scaled by IBSM_TEST_SLOW)."""
    def settled():
        t = since(path, offset)
        ends = re.findall(r"SWP-000([246])", t)
        if not ends or ends[-1] == "4":
            return False
        return "SWP-0005" in t[max(t.rfind("SWP-0002"), t.rfind("SWP-0006")):]
    ok = bool(h.until(lambda: settled() or not bg.alive(), timeout)) and settled()
    return bg.wait_idle(quiet, timeout) is not None and ok


def lids(snap):
    """{(node guid, port): LID} of every CA port and every switch (port 0)."""
    out = {}
    for n in snap.nodes.values():
        if n.type == "SW":
            out[(n.guid, 0)] = n.lid
        else:
            for p in n.ports.values():
                out[(n.guid, p.num)] = p.lid
    return out


def compare_lids(before, after, only=None):
    """(ok, detail): every port of BEFORE (restricted to keys in ONLY if given) has the same
    LID in AFTER."""
    a, b = lids(before), lids(after)
    keys = [k for k in a if only is None or k in only]
    bad = ["%016x[%d]: %d -> %s" % (k[0], k[1], a[k], b.get(k)) for k in sorted(keys) if a[k] != b.get(k)]
    if not keys:
        return False, "no ports to compare"
    return (not bad), ("%d LIDs kept" % len(keys) if not bad else "%d LIDs changed: %s" % (len(bad), "; ".join(bad[:6])))


def link_usage(snap):
    """Counter {(switch guid, out port): number of (source CA port, destination CA LID) pairs
    whose path leaves that switch through that port}, following the LFTs as they are."""
    use = collections.Counter()
    dests = [lid for lid, own in snap.lid_owners().items() if len(own) == 1 and own[0][0] == "CA"]
    for p in snap.ca_ports():
        sw = snap.nodes.get(p.peer[0])
        if sw is None or sw.type != "SW":
            continue
        for lid in dests:
            cur, seen = sw.guid, set()
            while cur not in seen:
                seen.add(cur)
                lft = snap.lfts.get(cur, b"")
                out = lft[lid] if lid < len(lft) else h.NO_PORT
                node = snap.nodes.get(cur)
                if out in (0, h.NO_PORT) or node is None or out not in node.ports:
                    break
                use[(cur, out)] += 1
                nxt = snap.nodes.get(node.ports[out].peer[0])
                if nxt is None or nxt.type != "SW":
                    break
                cur = nxt.guid
    return use


def lft_ports_used(snap, guid):
    """The set of out ports the LFT of switch GUID uses for the LIDs that exist."""
    lft = snap.lfts.get(guid, b"")
    return {lft[lid] for lid in snap.lid_owners() if lid < len(lft)}


def poll_fabric(sim, cond, timeout, host=None):
    """Collect snapshots until COND(snap) is true or TIMEOUT seconds (a generous bound, not a
    verdict) passed since the call. Returns (the last snapshot, seconds until the good one was
    taken, or None if COND never held)."""
    t0 = time.time()
    timeout = h.patience(timeout)
    snap = None
    while True:
        ts = time.time()
        snap = sim.collect(host)
        if cond(snap):
            return snap, ts - t0
        if time.time() - t0 > timeout:
            return snap, None
        time.sleep(0.1)


def pid_alive(pid):
    """PID exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return False
    return st.rsplit(")", 1)[-1].split()[0] != "Z"


def pid_exe(pid):
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return ""


class PidGuard:
    """Stops a process we did not fork ourselves (an ibsm -B daemon) by its pid at the end of
    the test, if it still runs ibsm (guards against pid reuse). Its exit status is not ours to
    see: if it left a core in its cwd (it inherits the RLIMIT_CORE of the ibsm we started,
    harness.py "cores"), the backtraces are printed as for our own children."""

    def __init__(self, pid, exe):
        self.pid, self.exe = pid, os.path.realpath(exe)
        self.since = time.time()
        try:
            self.cwd = os.readlink("/proc/%d/cwd" % pid)
        except OSError:
            self.cwd = None
        h._live.append(self)

    def running(self):
        return pid_alive(self.pid) and os.path.realpath(pid_exe(self.pid)) == self.exe

    def stop(self):
        if self in h._live:
            h._live.remove(self)
        for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 2.0)):
            if not self.running():
                break
            try:
                os.kill(self.pid, sig)
            except OSError:
                break
            end = h.deadline(wait)
            while time.time() < end and self.running():
                time.sleep(0.05)
        if self.cwd and not self.running():
            h.print_core_report(h.core_report([self.exe], None, self.pid, self.cwd, self.since))


def signal_and_wait(bg, sig, timeout=60.0):
    """Send SIG to a Background and wait (up to TIMEOUT seconds, a generous bound, not a
    verdict) for its exit: its exit status, or None if it did not exit."""
    bg.popen.send_signal(sig)
    try:
        return bg.popen.wait(h.patience(timeout))
    except Exception:
        return None
