#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""bench.py - `make bench`: OpenSM and ibsm side by side on simulated XGFT fat trees.

For every fabric size and repetition, each SM gets a fresh ibsim (ibsim keeps LFTs and port
states), OpenSM and ibsm alternate (the first one swaps every repetition), and the time from
start to "SUBNET UP" in the SM's log, the SMPs sent, CPU and peak RSS at that moment are
recorded. Then the SM gets SIGHUP (by pid; --hup K times) on the unchanged fabric and the
heavy sweep that follows is timed and its SMPs counted: the no-change resweep. After each run
the trivial SMP client (bench/smprate.c) measures what the
same ibsim answers per second: the ceiling. The timed bring-ups run untraced; the SMPs the
ceiling sends again come from a separate, untimed run of the same SM on a fresh ibsim of the
same fabric under tests/tools/smpcount.so (once per fabric and SM): the recorder's cost is
charged to nobody's bring-up. Each bring-up is divided by the time its own run's ceiling
takes for as many SMPs (the same ibsim, seconds later), and the median of those is reported
beside the ratio of the medians. Then ibsm routes the fabrics offline
(`--fabric`, no MADs). Medians [min-max] and ibsm/OpenSM ratios go to stdout as markdown
and to bench/results/<date>.md and .json.

SMP counts: OpenSM's loopback console (`status`: "QP0 MADs sent"); ibsm's own
`STATS phase=<name> smps=<n> seconds=<s>` and `STATS total ...` lines, printed at exit.
Every process is started in its own session with a parent-death signal and stopped by pid
(SIGTERM, then SIGKILL) on every path.

usage: bench.py [--sizes 2048,4096,8192] [--reps 3] [--quick] [--engine minhop]
                [--offline-sizes 2048,4096,8192,16384] [--no-offline] [--no-ceiling]
                [--hup K] [--candidate ibsm|opensm] [--ibsm PATH] [--keep] [--no-save]
       bench.py --report bench/results/<date>.json      (re-render a saved run)
"""
import argparse
import ctypes
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import genfab  # noqa: E402

# hosts -> XGFT (m, w): 16-port leaves, 16-ary middle level, top level sized to fit
FABRICS = {
    2048: ((16, 16, 8), (1, 16, 16)),
    4096: ((16, 16, 16), (1, 16, 16)),
    8192: ((16, 16, 32), (1, 16, 16)),
    16384: ((16, 16, 64), (1, 16, 16)),
    # the largest subnet (bench/scale_bench.py): 45184 LIDs, needs ibsim -L 49152
    39936: ((16, 16, 156), (1, 16, 16)),
}
PHASES = ("discovery", "lids", "ports", "routing", "lft", "arm", "active")
HZ = os.sysconf("SC_CLK_TCK")
SMPCOUNT_SO = os.path.join(ROOT, "build", "tests", "tools", "smpcount.so")  # set from --ibsm
POLL_S = 0.01
# The CPU every SMP client's MAD path is kept on (--pin): OpenSM and the trivial client under
# `taskset -c`, ibsm with its own mad_cpu key (its threads that compute keep every CPU). None:
# the kernel places every thread. Under umad2sim each answer is handed from its receiver thread
# to the client's; on one CPU that is a switch, not a wake-up sent to another CPU, and all three
# clients are faster so (bench/results/pin-2026-11-28.md).
PIN = None


def pin_prefix(pin):
    """The command prefix that keeps a client on CPU pin (None: nothing)."""
    return ["taskset", "-c", str(pin)] if pin is not None else []


# ---------------------------------------------------------------- processes


class Interrupted(Exception):
    pass


def _on_signal(signum, _frame):
    raise Interrupted("signal %d" % signum)


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _child_setup():
    """In the child before exec: die with SIGTERM if bench.py dies, whatever kills it."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class Procs:
    """Every child this run started and has not reaped yet; stop_all() on every exit path."""

    def __init__(self):
        self.live = []

    def start(self, cmd, cwd, env, output, stdin=subprocess.DEVNULL):
        """Starts cmd with stdout and stderr to the file `output`."""
        with open(output, "w") as out:
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=stdin, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True,
                                 preexec_fn=_child_setup)
        self.live.append(p)
        return p

    def stop(self, p, grace=20.0):
        """SIGTERM by pid, SIGKILL after `grace` seconds; returns the exit status."""
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
                p.wait(grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.live:
            self.live.remove(p)
        return p.returncode

    def wait_rusage(self, p, timeout):
        """Reaps p with wait4 (peak RSS, CPU); stops it by pid after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                self.live.remove(p)
                return p.returncode, ru
            if time.monotonic() > deadline:
                self.stop(p)
                return None, None
            time.sleep(POLL_S)

    def stop_all(self):
        for p in list(reversed(self.live)):
            self.stop(p, grace=5.0)


PROCS = Procs()


def proc_cpu(pid):
    """utime + stime of a live process in seconds (None once it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / HZ
    except (OSError, IndexError, ValueError):
        return None


def proc_hwm_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def system_busy_s():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / HZ


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_umad2sim():
    for pkg in ("libumad2sim0", "ibsim-utils"):
        try:
            out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True).stdout
        except OSError:
            continue
        for line in out.splitlines():
            if line.endswith("/libumad2sim.so"):
                return line
    sys.exit("bench: libumad2sim.so not found (apt-get install libumad2sim0)")


class LogWatch:
    """Reads a growing log from where it stopped; tells when a string first shows up."""

    def __init__(self, path):
        self.path, self.offset, self.tail = path, 0, ""

    def seen(self, needle):
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.offset)
                new = f.read()
                self.offset = f.tell()
        except FileNotFoundError:
            return False
        text = self.tail + new
        self.tail = text[-len(needle):]
        return needle in text


def tail_of(path, n=1500):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


# ---------------------------------------------------------------- fabrics and ibsim


class Fabric:
    def __init__(self, hosts, workdir):
        m, w = FABRICS[hosts]
        self.hosts = hosts
        self.name = genfab.xgft_name(m, w)
        self.net = os.path.join(workdir, "fabrics", self.name + ".net")
        os.makedirs(os.path.dirname(self.net), exist_ok=True)
        self.size = genfab.write_xgft(self.net, m, w)
        self.label = "%d / %d" % (self.size["hosts"], self.size["switches"])


class Sim:
    """One ibsim instance with its own socket name, sized for the fabric; no console, or with
    `console` one on a FIFO (console() writes a command to it: links are taken down so).
    A fabric with more LIDs than ibsim's switches hold by default (LinearFDBCap 30720) gets
    every switch the whole unicast range (-L 49152), unless args say otherwise."""

    count = 0
    LFT_CAP_DEFAULT = 30720
    LFT_CAP_ALL = 49152

    def __init__(self, fabric, rundir, console=False, args=(), start_limit=300):
        Sim.count += 1
        self.sock = "ibsmbench-%d-%d" % (os.getpid(), Sim.count)
        s = fabric.size
        args = list(args)
        if "-L" not in args and s["hosts"] + s["switches"] >= Sim.LFT_CAP_DEFAULT:
            args += ["-L", str(Sim.LFT_CAP_ALL)]
        cmd = ["ibsim", "-s"] + ([] if console else ["-n"]) + [
            "-N", str(s["nodes"] + 16), "-S", str(s["switches"] + 16), "-P", str(s["ports"] + 64)
        ] + list(args) + [fabric.net]
        env = dict(os.environ, IBSIM_SOCKNAME=self.sock)
        env.pop("LD_PRELOAD", None)
        self.log = os.path.join(rundir, "ibsim.log")
        self.fifo = None
        if console:
            path = os.path.join(rundir, "console.fifo")
            os.mkfifo(path)
            self.fifo = os.open(path, os.O_RDWR)  # read-write: ibsim never sees EOF
        self.proc = PROCS.start(cmd, rundir, env, self.log,
                                stdin=self.fifo if console else subprocess.DEVNULL)
        t0 = time.monotonic()
        watch, deadline = LogWatch(self.log), t0 + start_limit
        while not watch.seen("ready"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                PROCS.stop(self.proc)
                raise RuntimeError("ibsim did not start: " + tail_of(self.log))
            time.sleep(0.05)
        self.start_s = time.monotonic() - t0
        self.cpu0 = proc_cpu(self.proc.pid) or 0.0

    def client_env(self, umad2sim, rundir):
        return dict(os.environ, IBSIM_SOCKNAME=self.sock, LD_PRELOAD=umad2sim,
                    OSM_TMP_DIR=rundir, OSM_CACHE_DIR=rundir)

    def cpu(self):
        c = proc_cpu(self.proc.pid)
        return None if c is None else c - self.cpu0

    def console(self, line):
        os.write(self.fifo, (line + "\n").encode())

    def stop(self):
        PROCS.stop(self.proc)
        if self.fifo is not None:
            os.close(self.fifo)
            self.fifo = None


# ---------------------------------------------------------------- the two SMs


class OpenSM:
    """OpenSM in daemon mode: config = defaults + log flushing + state-manager banners."""

    name = "OpenSM"
    # first sweep's banners (OpenSM log facts), mapped onto ibsm's phase names
    MARKS = (("sweep", "INITIATING HEAVY SWEEP"), ("disc_end", "HEAVY SWEEP COMPLETE"),
             ("lid_start", "STARTING SM LID CONFIG"),
             ("lid_end", "LID ASSIGNMENT COMPLETE - STARTING SWITCH TABLE CONFIG"),
             ("route_end", "tables configured on all switches"),
             ("ucast_end", "SWITCHES CONFIGURED FOR UNICAST"),
             ("mcast_end", "SWITCHES CONFIGURED FOR MULTICAST"),
             ("ports_end", "LINKS PORTS CONFIGURED"), ("armed", "LINKS ARMED"),
             ("up", "-> SUBNET UP"))
    SPANS = {"discovery": ("sweep", "disc_end"), "lids": ("lid_start", "lid_end"),
             "routing": ("lid_end", "route_end"), "lft": ("route_end", "ucast_end"),
             "ports": ("mcast_end", "ports_end"), "arm": ("ports_end", "armed"),
             "active": ("armed", "up")}
    TS = re.compile(r"^\w{3} +\d+ (\d\d):(\d\d):(\d\d) (\d{6}) ")

    def __init__(self, workdir, engine, extra=(), conf_lines=""):
        self.engine, self.extra = engine, list(extra)
        self.conf = os.path.join(workdir, "opensm.conf")
        modlog = os.path.join(workdir, "opensm-modlog.conf")
        default = os.path.join(workdir, "opensm-default.conf")
        subprocess.run(["opensm", "-c", default], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, cwd=workdir, check=False)
        with open(default) as f:
            text = f.read()
        text = re.sub(r"(?m)^force_log_flush .*$", "force_log_flush TRUE", text)
        # without the line OpenSM dumps into $OSM_TMP_DIR (the run dir), not /var/log
        text = re.sub(r"(?m)^dump_files_dir .*$", "", text)
        text = re.sub(r"(?m)^per_module_logging_file .*$", "per_module_logging_file " + modlog,
                      text)
        with open(self.conf, "w") as f:
            f.write(text + conf_lines)
        with open(modlog, "w") as f:
            f.write("osm_state_mgr.c 0x07\n")
        self.console = None

    def command(self, log):
        self.console = free_tcp_port()
        return pin_prefix(PIN) + ["opensm", "-F", self.conf, "-f", log, "-s", "0", "-R", self.engine,
                "-q", "loopback", "-C", str(self.console)] + self.extra

    def at_up(self, res):
        try:
            res["smps"] = self._console_counter("QP0 MADs sent")
        except OSError as e:
            res["smps_error"] = "console: %s" % e

    # the end of a SIGHUP resweep: OpenSM logs the SUBNET UP banner after every heavy sweep
    HUP_DONE = "SUBNET UP"

    def hup_before(self, _log):
        """QP0 MADs sent so far (console), read once the SM is idle."""
        return self._console_counter("QP0 MADs sent")

    def hup_after(self, res, before, _log, _offset):
        time.sleep(0.3)       # the last replies of the sweep (as the perf harness does)
        after = self._console_counter("QP0 MADs sent")
        if before is not None and after is not None:
            res["smps"] = after - before
        res["writes"] = None  # OpenSM does not report them

    def _console_counter(self, key, timeout=10.0):
        with socket.create_connection(("127.0.0.1", self.console), timeout=timeout) as s:
            buf = b""
            for send in (None, b"status\n"):
                if send:
                    buf = b""
                    s.sendall(send)
                deadline = time.monotonic() + timeout
                while b"OpenSM $ " not in buf and time.monotonic() < deadline:
                    data = s.recv(65536)
                    if not data:
                        break
                    buf += data
            try:
                s.sendall(b"quit\n")
            except OSError:
                pass
        m = re.search(re.escape(key) + r"\s*:\s*(\d+)", buf.decode(errors="replace"))
        return int(m.group(1)) if m else None

    def after_stop(self, res, log, _out):
        marks = {}
        last = None
        with open(log, errors="replace") as f:
            for line in f:
                m = self.TS.match(line)
                if m:
                    h, mi, s, us = map(int, m.groups())
                    last = h * 3600 + mi * 60 + s + us / 1e6
                for key, text in self.MARKS:
                    if text in line and key not in marks and last is not None:
                        if key != "sweep" and "sweep" not in marks:
                            continue
                        marks[key] = last
                if "up" in marks:
                    break
        res["phases"] = {}
        for phase, (a, b) in self.SPANS.items():
            if a in marks and b in marks:
                res["phases"][phase] = {"seconds": round(marks[b] - marks[a], 3)}


STATS_PHASE = re.compile(r"STATS phase=(\w+) smps=(\d+) seconds=([0-9.]+)")
STATS_TOTAL = re.compile(r"STATS total smps=(\d+) seconds=([0-9.]+)")


def parse_stats(*paths, until=None):
    """ibsm's STATS lines from its log and its stdout/stderr: ({phase: {...}}, total or None);
    each file read only up to the first `until` (the SIGHUP line: the bring-up's numbers)."""
    phases, total = {}, None
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if until and until in text:
            text = text[:text.index(until)]
        for name, smps, sec in STATS_PHASE.findall(text):
            phases[name] = {"smps": int(smps), "seconds": float(sec)}
        for smps, sec in STATS_TOTAL.findall(text):
            total = {"smps": int(smps), "seconds": float(sec)}
    return phases, total


STS_SENT = re.compile(r"STS-0002 STATS transport sent=(\d+)")
SWP_DONE = re.compile(r"SWP-0005 heavy sweep \d+: (\d+) writes, (\d+) SMPs programming")


def read_from(path, offset=0):
    try:
        with open(path, errors="replace") as f:
            f.seek(offset)
            return f.read()
    except OSError:
        return ""


def wait_stats_logged(log, offset, timeout=10.0):
    """Text of log from offset once the last heavy sweep there (SWP-0005) has its STATS total
    line (STS-0003) after it; the text as it is after `timeout` seconds otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        text = read_from(log, offset)
        last_sweep = text.rfind("SWP-0005")
        if text.rfind("STS-0003") > last_sweep >= 0 or time.monotonic() > deadline:
            return text
        time.sleep(POLL_S)


class Ibsm:
    name = "ibsm"
    # the end of a heavy sweep; LOOP-0005 (SIGHUP) comes before it, STATS lines after it
    HUP_DONE = "SWP-0005"

    def __init__(self, binary, engine, extra):
        self.binary, self.engine, self.extra = binary, engine, extra

    def command(self, log):
        pin = ["--mad_cpu", str(PIN)] if PIN is not None else []
        return [self.binary, "-f", log, "-s", "0", "-R", self.engine] + pin + self.extra

    def at_up(self, res):
        pass

    def hup_before(self, log):
        """The transport's cumulative sent counter after the last sweep's STATS lines."""
        found = STS_SENT.findall(wait_stats_logged(log, 0))
        return int(found[-1]) if found else None

    def hup_after(self, res, before, log, offset):
        text = wait_stats_logged(log, offset)
        if "LOOP-0005" not in text:
            res["error"] = "no LOOP-0005 (SIGHUP) line"
        done = SWP_DONE.search(text)
        if done:
            res["writes"] = int(done.group(1))
            res["smps_programming"] = int(done.group(2))
        res["changed"] = "SWP-0002 SUBNET UP" in text
        found = STS_SENT.findall(text)
        if found and before is not None:
            res["smps"] = int(found[0]) - before

    def after_stop(self, res, log, out):
        phases, total = parse_stats(log, out, until="LOOP-0005")
        res["phases"] = phases
        if total:
            res["smps"] = total["smps"]
            res["stats_seconds"] = total["seconds"]
        else:
            res["smps_error"] = "no 'STATS total' line"


# ---------------------------------------------------------------- runs


def hup_sweeps(sm, p, sim, log, k, timeout):
    """After SUBNET UP: k times SIGHUP to the SM (by pid) on the unchanged fabric, each timed
    from the signal to the end of the heavy sweep it triggers; its SMPs from the SM's counter
    before and after. Returns one dict per SIGHUP ('error' in it when it failed)."""
    runs = []
    for _ in range(k):
        time.sleep(1.0)       # let the previous sweep's last replies and log lines land
        r = {}
        runs.append(r)
        try:
            before = sm.hup_before(log)
        except OSError as e:
            r["error"] = "counter before SIGHUP: %s" % e
            break
        offset = os.path.getsize(log)
        watch = LogWatch(log)
        watch.offset = offset
        cpu0, sim0 = proc_cpu(p.pid), sim.cpu()
        t0 = time.monotonic()
        p.send_signal(signal.SIGHUP)
        done = False
        while time.monotonic() - t0 < timeout and p.poll() is None:
            if watch.seen(sm.HUP_DONE):
                done = True
                break
            time.sleep(POLL_S)
        r["wall_s"] = round(time.monotonic() - t0, 3)
        cpu1, sim1 = proc_cpu(p.pid), sim.cpu()
        r["cpu_s"] = None if cpu0 is None or cpu1 is None else round(cpu1 - cpu0, 2)
        r["ibsim_cpu_s"] = None if sim0 is None or sim1 is None else round(sim1 - sim0, 2)
        if not done:
            r["error"] = ("no end of the sweep within %ds" % timeout if p.poll() is None
                          else "exited with status %s" % p.returncode)
            break
        try:
            sm.hup_after(r, before, log, offset)
        except OSError as e:
            r["error"] = "counter after SIGHUP: %s" % e
        if "error" in r:
            break
    return runs


def trace_run(sm, fabric, rundir, umad2sim, timeout):
    """An untimed bring-up of SM on a fresh ibsim of FABRIC under tests/tools/smpcount.so:
    every SMP it sends recorded (written in batches, whole once it exits) for the ceiling's
    replay (bench/smprate.c -r). Returns the trace's path, or None (no recorder, not up)."""
    if not os.path.exists(SMPCOUNT_SO):
        return None
    os.makedirs(rundir, exist_ok=True)
    trace = os.path.join(rundir, "smps.trace")
    sim = Sim(fabric, rundir)
    p = None
    up = False
    try:
        log = os.path.join(rundir, "sm.log")
        watch = LogWatch(log)
        env = sim.client_env(umad2sim, rundir)
        env.update(LD_PRELOAD="%s:%s" % (SMPCOUNT_SO, umad2sim), SMPCOUNT_TRACE=trace,
                   SMPCOUNT_TRACE_BUFFER="1")
        t0 = time.monotonic()
        p = PROCS.start(sm.command(log), rundir, env, os.path.join(rundir, "sm.out"))
        while time.monotonic() - t0 < timeout:
            if watch.seen("SUBNET UP"):
                up = True
                break
            if p.poll() is not None:
                up = watch.seen("SUBNET UP")
                break
            time.sleep(POLL_S)
        PROCS.stop(p)  # the recorder writes the rest of its trace as the SM exits
    finally:
        if p is not None:
            PROCS.stop(p)
        sim.stop()
    if up and os.path.exists(trace):
        return trace
    if os.path.exists(trace):
        os.unlink(trace)
    return None


def live_run(sm, fabric, rundir, umad2sim, timeout, smprate=None, hups=0, trace=None):
    """One bring-up on a fresh ibsim, untraced, then `hups` SIGHUP resweeps; returns the result
    dict (res['up'] False on failure). trace: the SMPs of the same SM's bring-up on the same
    fabric (trace_run) for the ceiling's replay, or None (as many NodeInfo Gets)."""
    os.makedirs(rundir, exist_ok=True)
    res = {"sm": sm.name, "hosts": fabric.hosts, "up": False}
    sim = Sim(fabric, rundir)
    p = None
    try:
        log = os.path.join(rundir, "sm.log")
        out = os.path.join(rundir, "sm.out")
        cmd = sm.command(log)
        res["cmd"] = " ".join(cmd)
        watch = LogWatch(log)
        env = sim.client_env(umad2sim, rundir)
        busy0 = system_busy_s()
        t0 = time.monotonic()
        p = PROCS.start(cmd, rundir, env, out)
        while time.monotonic() - t0 < timeout:
            if watch.seen("SUBNET UP"):
                res["up"] = True
                break
            if p.poll() is not None:
                # --once style exit: the last lines may have landed just now
                res["up"] = watch.seen("SUBNET UP")
                break
            time.sleep(POLL_S)
        wall = time.monotonic() - t0
        res["wall_s"] = round(wall, 3)
        res["cpu_s"] = proc_cpu(p.pid)
        res["rss_kib"] = proc_hwm_kib(p.pid)
        res["ibsim_cpu_s"] = sim.cpu()
        res["other_load"] = round((system_busy_s() - busy0 - (res["cpu_s"] or 0)
                                   - (res["ibsim_cpu_s"] or 0)) / max(wall, 1e-3), 2)
        if res["up"]:
            sm.at_up(res)
            if hups:
                res["hup"] = hup_sweeps(sm, p, sim, log, hups, timeout)
        else:
            res["error"] = ("timeout after %ds" % timeout if p.poll() is None
                            else "exited with status %s" % p.returncode)
        res["exit"] = PROCS.stop(p)
        sm.after_stop(res, log, out)
        if not res["up"]:
            res["log_tail"] = tail_of(log) + tail_of(out)
        if smprate and res["up"]:
            # the SM's own bring-up SMPs (recorded by trace_run) sent again, or as many
            # NodeInfo Gets without a trace, the window ibsm uses (max_wire_smps)
            trace = trace if trace and os.path.exists(trace) else None
            # the best the trivial client reaches: with the SM's placement and without
            for pin, key in (((None, "ceiling_free"),) +
                             (((PIN, "ceiling_pinned"),) if PIN is not None else ())):
                res[key] = measure_ceiling(smprate, sim, rundir, umad2sim,
                                           count=res.get("smps") or 100000, window=64,
                                           trace=trace, pin=pin)
            rates = [r for r in (res.get("ceiling_free"), res.get("ceiling_pinned")) if r]
            res["ceiling"] = max(rates) if rates else None
            res["ceiling_kind"] = "replay" if trace else "nodeinfo"
    finally:
        if p is not None:
            PROCS.stop(p)
        sim.stop()
    return res


def measure_ceiling(smprate, sim, rundir, umad2sim, count=100000, window=32, trace=None, pin=None):
    try:
        out = subprocess.run(pin_prefix(pin) + [smprate, "-n", str(count), "-w", str(window)] +
                             (["-r", trace] if trace else []), cwd=rundir,
                             capture_output=True,
                             text=True, env=sim.client_env(umad2sim, rundir), timeout=120,
                             preexec_fn=_child_setup)
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"rate=(\d+)", out.stdout)
    return int(m.group(1)) if m and out.returncode == 0 else None


def offline_run(binary, engine, fabric, rundir, timeout, extra):
    os.makedirs(rundir, exist_ok=True)
    log = os.path.join(rundir, "offline.log")
    out = os.path.join(rundir, "offline.out")
    cmd = [binary, "--fabric", fabric.net, "-R", engine, "-f", log] + extra
    res = {"hosts": fabric.hosts, "cmd": " ".join(cmd)}
    t0 = time.monotonic()
    env = dict(os.environ, OSM_TMP_DIR=rundir, OSM_CACHE_DIR=rundir)
    env.pop("LD_PRELOAD", None)
    p = PROCS.start(cmd, rundir, env, out)
    status, ru = PROCS.wait_rusage(p, timeout)
    res["wall_s"] = round(time.monotonic() - t0, 3)
    phases, total = parse_stats(log, out)
    if status != 0 or "routing" not in phases:
        res["error"] = ("timeout after %ds" % timeout if status is None else
                        "exit status %s%s" % (status, "" if "routing" in phases
                                              else ", no 'STATS phase=routing' line"))
        res["log_tail"] = tail_of(log) + tail_of(out)
        return res
    res["routing_s"] = phases["routing"]["seconds"]
    res["rss_kib"] = ru.ru_maxrss
    res["cpu_s"] = round(ru.ru_utime + ru.ru_stime, 2)
    return res


def side_by_side(tag, a, work, fabric, umad2sim, measure, extra=None):
    """OpenSM then ibsm (only a.only when given) on FABRIC, each on a fresh ibsim with a console:
    the SM started from its own run directory and waited for until SUBNET UP (a.timeout), then
    measure(sim, rundir, out) fills the run's dict. Both stopped by pid whatever happens. Returns
    the runs ({"sm": name, "up_s": ..., or "error": why}). extra: {"OpenSM": [...], "ibsm":
    [...]}, arguments added to that SM's command line; "OpenSM.conf": lines added to OpenSM's
    configuration file (it takes one -F)."""
    runs = []
    extra = extra or {}
    for sm in (OpenSM(work, a.engine, extra.get("OpenSM", ()), extra.get("OpenSM.conf", "")),
               Ibsm(a.ibsm, a.engine, list(extra.get("ibsm", ())))):
        if a.only and sm.name != a.only:
            continue
        sys.stderr.write("%s: %s on %s\n" % (tag, sm.name, fabric.label))
        rundir = os.path.join(work, sm.name)
        os.makedirs(rundir, exist_ok=True)
        sim = Sim(fabric, rundir, console=True)
        p = None
        out = {"sm": sm.name}
        runs.append(out)
        try:
            log = os.path.join(rundir, "sm.log")
            watch = LogWatch(log)
            t0 = time.monotonic()
            p = PROCS.start(sm.command(log), rundir, sim.client_env(umad2sim, rundir),
                            os.path.join(rundir, "sm.out"))
            while not watch.seen("SUBNET UP"):
                if p.poll() is not None or time.monotonic() - t0 > a.timeout:
                    out["error"] = "not up: " + tail_of(log, 600)
                    break
                time.sleep(0.05)
            if "error" not in out:
                out["up_s"] = round(time.monotonic() - t0, 1)
                time.sleep(2)  # the first sweep's tail (OpenSM's multicast, ibsm's light sweep)
                measure(sim, rundir, out)
        finally:
            if p is not None:
                PROCS.stop(p)
            sim.stop()
    return runs


def section_args(description, hosts, argv, add=None):
    """The arguments every side-by-side section of `make bench` takes (fabric size, the ibsm
    binary, engine, bring-up limit, --only, --keep, --no-save), plus add(ap)'s own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--hosts", type=int, default=hosts, choices=sorted(FABRICS))
    ap.add_argument("--ibsm", default=os.path.join(ROOT, "build", "ibsm"))
    ap.add_argument("--engine", default="minhop")
    ap.add_argument("--timeout", type=int, default=900, help="bring-up limit per SM (s)")
    ap.add_argument("--only", choices=("OpenSM", "ibsm"), help="run one SM (no ratios)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-save", action="store_true")
    if add:
        add(ap)
    return ap.parse_args(argv)


def run_section(tag, a, prepare, markdown_fn):
    """One section: a scratch dir and the fabric, prepare(work, fabric, umad2sim, meta) ->
    (measure, extra) or None when it cannot run, OpenSM and ibsm side by side, the markdown on
    stdout and in bench/results/TAG-<date>.*; every process stopped, the scratch dir removed
    (unless --keep). Returns the exit status."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _on_signal)
    umad2sim = find_umad2sim()
    work = tempfile.mkdtemp(prefix="ibsm-%s." % tag)
    try:
        fabric = Fabric(a.hosts, work)
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "fabric": fabric.label +
                " hosts/switches", "machine": "%d cores" % os.cpu_count(),
                "maxlid": fabric.size["hosts"] + fabric.size["switches"]}
        got = prepare(work, fabric, umad2sim, meta)
        if not got:
            return 1
        measure, extra = got
        runs = side_by_side(tag, a, work, fabric, umad2sim, measure, extra)
        text = markdown_fn(meta, runs)
        sys.stdout.write(text)
        if not a.no_save:
            save_results(tag, text, meta, runs)
    finally:
        PROCS.stop_all()
        if a.keep:
            sys.stderr.write("%s: kept %s\n" % (tag, work))
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def save_results(tag, text, meta, runs):
    """bench/results/TAG-<date>.md (text) and .json (meta and runs); a second run the same day
    gets TAG-<date>-<HHMMSS>, never the first one's files."""
    d = os.path.join(HERE, "results")
    os.makedirs(d, exist_ok=True)
    now = datetime.datetime.now()
    stem = os.path.join(d, "%s-%s" % (tag, now.date().isoformat()))
    if os.path.exists(stem + ".md") or os.path.exists(stem + ".json"):
        stem += now.strftime("-%H%M%S")
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)


def build_client(builddir, name):
    """Compiles bench/NAME.c (a libibumad client: smprate, sa_load) into BUILD/bench/NAME when
    it is missing or stale; None when it cannot be built (the caller says what is skipped)."""
    src = os.path.join(HERE, name + ".c")
    exe = os.path.join(builddir, "bench", name)
    deps = [src, os.path.join(ROOT, "tests", "tools", "smp_trace.h")]
    if os.path.exists(exe) and all(os.path.getmtime(exe) >= os.path.getmtime(d) for d in deps if os.path.exists(d)):
        return exe
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libibumad"],
                           capture_output=True, text=True).stdout.split() or ["-libumad"]
    r = subprocess.run([os.environ.get("CC", "cc"), "-std=gnu11", "-O2", "-Wall", "-Wextra",
                        "-Werror", "-o", exe, src] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("bench: cannot build %s:\n%s" % (src, r.stderr))
        return None
    return exe


# ---------------------------------------------------------------- statistics and report


def spread(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def fmt_spread(s, fmt="%.2f"):
    """median [min-max]; just the median when the spread does not show at this precision."""
    if not s:
        return "-"
    med, lo, hi = fmt % s["median"], fmt % s["min"], fmt % s["max"]
    return med if lo == hi else "%s [%s-%s]" % (med, lo, hi)


def ratio(a, b):
    if not a or not b or not b["median"]:
        return None
    return a["median"] / b["median"]


def fmt_ratio(r):
    return "-" if r is None else "%.2f" % r


def fmt_k(n):
    if n is None:
        return "-"
    if n < 1000:
        return "%d" % n
    return "%.1fk" % (n / 1000) if n < 1e6 else "%.2fM" % (n / 1e6)


def phase_names(live):
    """ibsm's phase names in PHASES order, then any others the SMs reported, as first seen."""
    names = list(PHASES)
    for r in live:
        names += [ph for ph in r.get("phases", {}) if ph not in names]
    return names


def summarize_hups(runs):
    """The SIGHUP resweeps of these runs (all of them pooled), None when there were none."""
    hups = [h for r in runs for h in r.get("hup", [])]
    if not hups:
        return None
    ok = [h for h in hups if "error" not in h]
    return {"ok": len(ok), "failed": len(hups) - len(ok),
            "unchanged": len([h for h in ok if h.get("changed") is False]),
            "changed": len([h for h in ok if h.get("changed")]),
            "wall_s": spread([h["wall_s"] for h in ok]),
            "smps": spread([h.get("smps") for h in ok]),
            "writes": spread([h.get("writes") for h in ok]),
            "cpu_s": spread([h.get("cpu_s") for h in ok])}


def summarize(live, sizes, sm_names):
    summary = {}
    for hosts in sizes:
        per = {}
        for name in sm_names:
            runs = [r for r in live if r["hosts"] == hosts and r["sm"] == name and r["up"]]
            phases = {}
            for ph in phase_names(runs):
                phases[ph] = {
                    "seconds": spread([r.get("phases", {}).get(ph, {}).get("seconds")
                                       for r in runs]),
                    "smps": spread([r.get("phases", {}).get(ph, {}).get("smps") for r in runs])}
            per[name] = {
                "ok": len(runs),
                "failed": len([r for r in live if r["hosts"] == hosts and r["sm"] == name
                               and not r["up"]]),
                "wall_s": spread([r["wall_s"] for r in runs]),
                "smps": spread([r.get("smps") for r in runs]),
                "cpu_s": spread([r.get("cpu_s") for r in runs]),
                "rss_mib": spread([r["rss_kib"] / 1024 if r.get("rss_kib") else None
                                   for r in runs]),
                "ibsim_cpu_s": spread([r.get("ibsim_cpu_s") for r in runs]),
                "other_load": spread([r.get("other_load") for r in runs]),
                "phases": phases,
                "hup": summarize_hups(runs),
                # each bring-up against the ceiling measured on its own ibsim right after it
                # (that SM's own SMPs replayed), then the median: the "same run"
                "vs_own_ceiling": spread([r["wall_s"] * r["ceiling"] / r["smps"] for r in runs
                                          if r.get("ceiling") and r.get("smps")]),
            }
        per["ceiling_smps_per_s"] = spread([r.get("ceiling") for r in live
                                            if r["hosts"] == hosts and r.get("ceiling")])
        for key in ("ceiling_free", "ceiling_pinned"):
            per[key] = spread([r.get(key) for r in live if r["hosts"] == hosts and r.get(key)])
        summary[hosts] = per
    return summary


# OpenSM 3.3.23's routing phase as measured earlier on this kind of machine (minhop / ftree
# alike within noise): shown only where this run measured nothing live.
OPENSM_ROUTING_BASELINE = {2048: "0.3-0.4*", 4096: "1.1-1.6*", 8192: "6-9*", 16384: "58.7*"}


def opensm_routing(summary, sm_a, hosts, engine):
    per = summary.get(hosts) if summary else None
    if per and sm_a in per:
        ph = per[sm_a].get("phases", {}).get("routing")
        if ph and ph.get("seconds") and ph["seconds"].get("median") is not None:
            return fmt_spread(ph["seconds"], "%.3f")
    return OPENSM_ROUTING_BASELINE.get(hosts, "-")


def markdown_hups(w, labels, summary, sm_a, sm_b):
    w("## No-change heavy sweep (SIGHUP)\n")
    w("After SUBNET UP the SM gets SIGHUP (re-read the configuration, heavy sweep) on the "
      "unchanged fabric; time from the signal to the end of that sweep (OpenSM: its next "
      "SUBNET UP banner; ibsm: SWP-0005), its SMPs from the SM's counter before and after "
      "(OpenSM: console 'QP0 MADs sent'; ibsm: STATS transport sent=), writes as ibsm's "
      "SWP-0005 line reports them. 'nothing changed': sweeps the SM itself called no-change "
      "(ibsm's SWP-0006; OpenSM does not say).\n")
    w("| hosts / switches | SM | time (s) | SMPs | writes | CPU (s) | nothing changed "
      "| ok/failed |")
    w("|---|---|---|---|---|---|---|---|")
    for hosts, per in summary.items():
        a, b = per[sm_a].get("hup"), per[sm_b].get("hup")
        if not a and not b:
            continue
        label = labels[hosts]
        for name, h in ((sm_a, a), (sm_b, b)):
            if not h:
                w("| %s | %s | - | - | - | - | - | 0/0 |" % (label, name))
            else:
                known = h["unchanged"] + h["changed"]
                w("| %s | %s | %s | %s | %s | %s | %s | %d/%d |" % (
                    label, name, fmt_spread(h["wall_s"]),
                    fmt_k(h["smps"]["median"]) if h["smps"] else "-",
                    fmt_k(h["writes"]["median"]) if h["writes"] else "-",
                    fmt_spread(h["cpu_s"]),
                    "%d/%d" % (h["unchanged"], known) if known else "-",
                    h["ok"], h["failed"]))
            label = ""
        if a and b:
            w("| | **%s/%s** | **%s** | **%s** | | **%s** | | |" % (
                sm_b, sm_a, fmt_ratio(ratio(b["wall_s"], a["wall_s"])),
                fmt_ratio(ratio(b["smps"], a["smps"])), fmt_ratio(ratio(b["cpu_s"], a["cpu_s"]))))
    w("")


def markdown(meta, labels, summary, offline, sm_a, sm_b):
    """The report; labels: hosts -> "hosts / switches"."""
    out = []
    w = out.append
    w("# ibsm bench %s\n" % meta["date"])
    w("%s vs %s, engine %s, %d repetition(s) per SM and fabric, a fresh ibsim per run. "
      "Values: median [min-max]. Machine: %d cores, load average %s at start%s. "
      "'others' = cores the rest of the machine kept busy during the run (noise).%s\n"
      % (sm_a, sm_b, meta["engine"], meta["reps"], meta["cores"], meta["loadavg"],
         "; candidate column runs OpenSM (harness check)" if meta["candidate"] == "opensm"
         else "",
         " The timed bring-ups run untraced; the SMP ceiling's replay comes from a separate, "
         "untimed run of each SM under tests/tools/smpcount.so on a fresh ibsim of the same "
         "fabric (once per fabric and SM)." if meta.get("trace_run") == "separate" else
         " The timed bring-ups ran under tests/tools/smpcount.so (the ceiling's trace): the "
         "recorder's cost is in their times." if summary else ""))
    if summary and meta.get("pin") is not None:
        w("Every SMP client's MAD path on CPU %d (`--pin`): OpenSM and the trivial client under "
          "`taskset -c %d` (all their threads), ibsm with `--mad_cpu %d` (its event loop and "
          "umad2sim's receiver; the threads that compute keep every CPU). ibsim unpinned.\n"
          % (meta["pin"], meta["pin"], meta["pin"]))
    if summary:
        w("## Bring-up: start to SUBNET UP\n")
        w("| hosts / switches | SM | time (s) | SMPs | SMPs/s | CPU (s) | peak RSS (MiB) "
          "| ibsim CPU (s) | others (cores) | ok/failed |")
        w("|---|---|---|---|---|---|---|---|---|---|")
        for hosts, per in summary.items():
            label = labels[hosts]
            for name in (sm_a, sm_b):
                s = per[name]
                rate = (s["smps"]["median"] / s["wall_s"]["median"]
                        if s["smps"] and s["wall_s"] else None)
                w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |" % (
                    label, name, fmt_spread(s["wall_s"]),
                    fmt_k(s["smps"]["median"]) if s["smps"] else "-",
                    fmt_k(rate), fmt_spread(s["cpu_s"]), fmt_spread(s["rss_mib"], "%.0f"),
                    fmt_spread(s["ibsim_cpu_s"]), fmt_spread(s["other_load"]),
                    s["ok"], s["failed"]))
                label = ""
            a, b = per[sm_a], per[sm_b]
            w("| | **%s/%s** | **%s** | **%s** | | **%s** | **%s** | %s | | |" % (
                sm_b, sm_a, fmt_ratio(ratio(b["wall_s"], a["wall_s"])),
                fmt_ratio(ratio(b["smps"], a["smps"])), fmt_ratio(ratio(b["cpu_s"], a["cpu_s"])),
                fmt_ratio(ratio(b["rss_mib"], a["rss_mib"])),
                fmt_ratio(ratio(b["ibsim_cpu_s"], a["ibsim_cpu_s"]))))
        w("")
        if any(per[name].get("hup") for per in summary.values() for name in (sm_a, sm_b)):
            markdown_hups(w, labels, summary, sm_a, sm_b)
        w("## Phases (seconds; SMPs where the SM reports them)\n")
        w("OpenSM's phases come from its state-manager banners (routing = LID assignment "
          "complete to 'tables configured', which includes queueing the LFT blocks; lft = "
          "until 'SWITCHES CONFIGURED FOR UNICAST'); ibsm's from its STATS lines.\n")
        w("| hosts | phase | %s (s) | %s (s) | %s SMPs |" % (sm_a, sm_b, sm_b))
        w("|---|---|---|---|---|")
        for hosts, per in summary.items():
            label = str(hosts)
            none = {"seconds": None, "smps": None}
            names = PHASES + tuple(per[sm_b]["phases"]) + tuple(per[sm_a]["phases"])
            for ph in dict.fromkeys(names):
                pa = per[sm_a]["phases"].get(ph, none)
                pb = per[sm_b]["phases"].get(ph, none)
                if not any(x and x["max"] for x in (pa["seconds"], pb["seconds"], pb["smps"])):
                    continue
                w("| %s | %s | %s | %s | %s |" % (
                    label, ph, fmt_spread(pa["seconds"], "%.3f"), fmt_spread(pb["seconds"], "%.3f"),
                    fmt_k(pb["smps"]["median"]) if pb["smps"] else "-"))
                label = ""
        w("")
        if any(per["ceiling_smps_per_s"] for per in summary.values()):
            w("## SMP ceiling (trivial client bench/smprate.c -r: the SMP requests of the SM's "
              "bring-up, as tests/tools/smpcount.so recorded them %s, sent again with 64 in "
              "flight on each timed run's ibsim after the SM stopped; the better of the client "
              "pinned as the SMs and unpinned)\n" % (
                  "in a separate, untimed traced run of the same SM on a fresh ibsim of the same "
                  "fabric (once per fabric and SM; the timed bring-ups run untraced)"
                  if meta.get("trace_run") == "separate" else "during the timed run"))
            w("| hosts | SMPs/s | pinned | unpinned | %s SMPs at that rate (s) | %s SMPs at that "
              "rate (s) | %s bring-up / that time | %s bring-up / its own run's ceiling time "
              "(per run, median) |" % (sm_a, sm_b, sm_b, sm_b))
            w("|---|---|---|---|---|---|---|---|")
            for hosts, per in summary.items():
                c = per["ceiling_smps_per_s"]
                if not c:
                    continue
                floor = []
                for name in (sm_a, sm_b):
                    s = per[name]["smps"]
                    floor.append(s["median"] / c["median"] if s else None)
                t = per[sm_b]["wall_s"]
                vs_ceiling = "%.2f" % (t["median"] / floor[1]) if floor[1] and t else "-"
                own = per[sm_b].get("vs_own_ceiling")
                w("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                    hosts, fmt_spread(c, "%.0f"), fmt_spread(per.get("ceiling_pinned"), "%.0f"),
                    fmt_spread(per.get("ceiling_free"), "%.0f"),
                    "%.2f" % floor[0] if floor[0] else "-", "%.2f" % floor[1] if floor[1] else "-",
                    vs_ceiling, fmt_spread(own) if own else "-"))
            w("")
    if offline:
        # offline: {engine: {hosts: runs}} (older result files: {hosts: runs}, minhop)
        if offline and all(isinstance(v, list) for v in offline.values()):
            offline = {meta.get("engine", "minhop"): offline}
        for engine, per_size in offline.items():
            w("## ibsm offline routing, engine %s (`--fabric`, no MADs)\n" % engine)
            w("OpenSM's routing phase beside it: measured in this run's live bring-ups where "
              "there were any (engine %s), else OpenSM 3.3.23's recorded baseline on this machine "
              "kind (marked *).\n" % meta["engine"])
            w("| hosts / switches | routing phase (s) | OpenSM routing phase (s) | total wall (s) "
              "| CPU (s) | peak RSS (MiB) | ok/failed |")
            w("|---|---|---|---|---|---|---|")
            for hosts, runs in per_size.items():
                hosts = int(hosts)
                ok = [r for r in runs if "error" not in r]
                w("| %s | %s | %s | %s | %s | %s | %d/%d |" % (
                    labels.get(hosts, str(hosts)), fmt_spread(spread([r["routing_s"] for r in ok]), "%.3f"),
                    opensm_routing(summary, sm_a, hosts, engine),
                    fmt_spread(spread([r["wall_s"] for r in ok])),
                    fmt_spread(spread([r["cpu_s"] for r in ok])),
                    fmt_spread(spread([r["rss_kib"] / 1024 for r in ok]), "%.0f"),
                    len(ok), len(runs) - len(ok)))
            w("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main


FAT_TREE_ENGINES = ("minhop", "updn", "ftree")


def offline_engines(a):
    """--offline-engines, or every fat-tree engine built beside the ibsm binary."""
    if a.offline_engines:
        return [e for e in a.offline_engines.split(",") if e]
    plugdir = os.path.join(os.path.dirname(os.path.abspath(a.ibsm)), "plugins")
    found = [e for e in FAT_TREE_ENGINES if os.path.exists(os.path.join(plugdir, e + ".so"))]
    return found or [a.engine]


def int_list(text):
    try:
        v = [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated host counts expected")
    bad = [x for x in v if x not in FABRICS]
    if bad:
        raise argparse.ArgumentTypeError("unknown size %s (known: %s)" % (
            bad[0], ",".join(map(str, FABRICS))))
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(description="OpenSM vs ibsm bring-up on simulated fat trees")
    ap.add_argument("--sizes", type=int_list, default=[2048, 4096, 8192],
                    help="host counts for the live runs (default 2048,4096,8192)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per SM and size (3)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 2048 hosts, 1 repetition, offline 2048 only")
    ap.add_argument("--engine", default="minhop", help="routing engine for both SMs (minhop)")
    ap.add_argument("--offline-sizes", type=int_list, default=[2048, 4096, 8192, 16384])
    ap.add_argument("--no-live", action="store_true", help="skip the ibsim runs")
    ap.add_argument("--no-offline", action="store_true", help="skip ibsm --fabric routing")
    ap.add_argument("--offline-engines", default="",
                    help="engines for the offline runs (default: minhop, updn, ftree where built)")
    ap.add_argument("--hup", type=int, default=None, metavar="K",
                    help="SIGHUP resweeps timed after each live bring-up (1; 0 with --quick)")
    ap.add_argument("--no-ceiling", action="store_true", help="skip the trivial SMP client")
    ap.add_argument("--pin", default="auto", metavar="CPU|auto|none",
                    help="keep every SM's MAD path (and the trivial client) on this CPU: OpenSM "
                    "under taskset -c, ibsm --mad_cpu; auto: the last CPU this bench may use "
                    "when it may use two or more (default); none: unpinned")
    ap.add_argument("--candidate", choices=("ibsm", "opensm"), default="ibsm",
                    help="'opensm' runs OpenSM in the ibsm column too (checks the harness)")
    ap.add_argument("--ibsm", default=os.path.join(ROOT, "build", "ibsm"),
                    help="ibsm binary (default build/ibsm)")
    ap.add_argument("--ibsm-args", default="", help="extra ibsm arguments, space separated")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per bring-up (300)")
    ap.add_argument("--results", default=os.path.join(HERE, "results"),
                    help="directory for <date>.md and .json (bench/results)")
    ap.add_argument("--no-save", action="store_true", help="print only, write no results")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    ap.add_argument("--report", metavar="JSON",
                    help="only print the markdown report of an earlier run's .json")
    a = ap.parse_args(argv)
    a.ibsm = os.path.abspath(a.ibsm)      # the SMs run with the run directory as cwd
    if a.quick:
        a.sizes, a.reps, a.offline_sizes = [2048], 1, [2048]
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    if a.hup is None:
        a.hup = 0 if a.quick else 1
    if a.hup < 0:
        ap.error("--hup must be 0 or more")
    mine = sorted(os.sched_getaffinity(0))
    if a.pin == "none":
        a.pin = None
    elif a.pin == "auto":
        a.pin = mine[-1] if len(mine) > 1 else None
    else:
        try:
            a.pin = int(a.pin)
        except ValueError:
            ap.error("--pin: a CPU number, auto or none")
        if a.pin not in mine:
            ap.error("--pin %d: not a CPU this bench may use (%s)" % (a.pin, mine))
    if a.pin is not None and not shutil.which("taskset"):
        ap.error("--pin needs taskset (util-linux); --pin none runs unpinned")
    return a


def report_from_json(path):
    """Re-renders a saved run (e.g. after a change of the report format)."""
    with open(path) as f:
        saved = json.load(f)
    meta, live = saved["meta"], saved["live"]
    labels = {int(h): "%d / %d" % (v["hosts"], v["switches"]) for h, v in saved["fabrics"].items()}
    offline = saved["offline"]  # markdown() reads both the old and the per-engine shape
    names = list(dict.fromkeys(["OpenSM"] + [r["sm"] for r in live]))
    sm_b = names[1] if len(names) > 1 else "ibsm"
    sizes = list(dict.fromkeys(r["hosts"] for r in live))
    return markdown(meta, labels, summarize(live, sizes, ["OpenSM", sm_b]), offline, "OpenSM", sm_b)


def main(argv):
    a = parse_args(argv)
    if a.report:
        sys.stdout.write(report_from_json(a.report))
        return 0
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _on_signal)
    global PIN
    PIN = a.pin
    use_ibsm = a.candidate == "ibsm"
    if use_ibsm and not os.access(a.ibsm, os.X_OK):
        sys.exit("bench: %s not found or not executable (run make all, or --candidate opensm)"
                 % a.ibsm)
    for tool in ("ibsim",) + (("opensm",) if not a.no_live else ()):
        if not shutil.which(tool):
            sys.exit("bench: %s not found (make deps-bench)" % tool)
    umad2sim = find_umad2sim()
    work = tempfile.mkdtemp(prefix="ibsm-bench.")
    started = datetime.datetime.now()
    meta = {"date": started.strftime("%Y-%m-%d %H:%M:%S"), "trace_run": "separate",
            "engine": a.engine, "reps": a.reps, "candidate": a.candidate,
            "cores": os.cpu_count(), "loadavg": "%.2f" % os.getloadavg()[0],
            "argv": argv, "ibsm": a.ibsm if use_ibsm else None, "pin": a.pin}
    try:
        meta["git"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True).stdout.strip() or None
    except OSError:
        meta["git"] = None
    live, offline, failures = [], {}, 0
    fabrics = {}
    sm_b = "ibsm" if use_ibsm else "OpenSM(b)"
    try:
        sizes_needed = sorted(set(([] if a.no_live else a.sizes) +
                                  ([] if a.no_offline or not use_ibsm else a.offline_sizes)))
        for hosts in sizes_needed:
            fabrics[hosts] = Fabric(hosts, work)
        opensm = OpenSM(work, a.engine) if not a.no_live else None
        if use_ibsm:
            candidate = Ibsm(a.ibsm, a.engine, a.ibsm_args.split())
        else:
            candidate = OpenSM(work, a.engine)
            candidate.name = sm_b
        smprate = None if a.no_ceiling or a.no_live else build_client(os.path.dirname(a.ibsm), "smprate")
        global SMPCOUNT_SO
        SMPCOUNT_SO = os.path.join(os.path.dirname(a.ibsm), "tests", "tools", "smpcount.so")
        if not a.no_live:
            for hosts in a.sizes:
                fab = fabrics[hosts]
                # the replay's SMPs: one untimed traced bring-up per SM on this fabric
                traces = {}
                for sm in ((opensm, candidate) if smprate else ()):
                    key = sm.name.replace("(", "").replace(")", "")
                    sys.stderr.write("bench: %s on %s hosts, traced (untimed) ... " % (sm.name, fab.label))
                    sys.stderr.flush()
                    try:
                        traces[sm.name] = trace_run(sm, fab, os.path.join(
                            work, "live", "%d-%s-trace" % (hosts, key)), umad2sim, a.timeout)
                    except (OSError, RuntimeError) as e:
                        traces[sm.name] = None
                        sys.stderr.write("(%s) " % e)
                    sys.stderr.write("%s\n" % ("recorded" if traces[sm.name] else
                                               "no trace: the ceiling sends NodeInfo Gets"))
                for rep in range(a.reps):
                    order = (opensm, candidate) if rep % 2 == 0 else (candidate, opensm)
                    for sm in order:
                        rundir = os.path.join(work, "live", "%d-%s-%d" % (
                            hosts, sm.name.replace("(", "").replace(")", ""), rep + 1))
                        sys.stderr.write("bench: %s on %s hosts, rep %d/%d ... " % (
                            sm.name, fab.label, rep + 1, a.reps))
                        sys.stderr.flush()
                        try:
                            r = live_run(sm, fab, rundir, umad2sim, a.timeout, smprate,
                                         a.hup, traces.get(sm.name))
                        except (OSError, RuntimeError) as e:
                            r = {"sm": sm.name, "hosts": hosts, "up": False, "error": str(e)}
                        r["rep"] = rep + 1
                        live.append(r)
                        if r["up"]:
                            sys.stderr.write("%.2f s, %s SMPs%s%s\n" % (
                                r["wall_s"], fmt_k(r.get("smps")), "".join(
                                    ", SIGHUP sweep %.2f s, %s SMPs, %s writes" % (
                                        h["wall_s"], fmt_k(h.get("smps")), fmt_k(h.get("writes")))
                                    for h in r.get("hup", []) if "error" not in h),
                                ", ceiling %s/s" % fmt_k(r["ceiling"]) if r.get("ceiling")
                                else ""))
                            bad = [h for h in r.get("hup", []) if "error" in h]
                            if bad:
                                failures += 1
                                sys.stderr.write("bench: SIGHUP sweep FAILED (%s)\n%s\n" % (
                                    bad[0]["error"], tail_of(os.path.join(rundir, "sm.log"),
                                                             800)))
                        else:
                            failures += 1
                            sys.stderr.write("FAILED (%s)\n%s\n" % (r.get("error"),
                                                                    r.get("log_tail", "")[-800:]))
                for path in traces.values():
                    if path and os.path.exists(path):
                        os.unlink(path)  # ~300 MB at 8192 hosts each
        if use_ibsm and not a.no_offline:
            for engine in offline_engines(a):
                offline[engine] = {}
                for hosts in a.offline_sizes:
                    runs = offline[engine][hosts] = []
                    for rep in range(a.reps):
                        sys.stderr.write("bench: ibsm --fabric %s hosts -R %s, rep %d/%d ... " % (
                            fabrics[hosts].label, engine, rep + 1, a.reps))
                        sys.stderr.flush()
                        r = offline_run(a.ibsm, engine, fabrics[hosts],
                                        os.path.join(work, "offline", "%s-%d-%d" % (engine, hosts, rep + 1)),
                                        a.timeout, a.ibsm_args.split())
                        runs.append(r)
                        if "error" in r:
                            failures += 1
                            sys.stderr.write("FAILED (%s)\n%s\n" % (r["error"], r["log_tail"][-800:]))
                        else:
                            sys.stderr.write("routing %.3f s, wall %.2f s\n" % (r["routing_s"],
                                                                                r["wall_s"]))
    except Interrupted as e:
        sys.stderr.write("\nbench: interrupted (%s), stopping\n" % e)
        failures += 1
    finally:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)      # cleanup is bounded; let it finish
        PROCS.stop_all()
        if a.keep:
            sys.stderr.write("bench: scratch kept in %s\n" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)

    summary = summarize(live, [h for h in a.sizes if not a.no_live and h in fabrics],
                        ["OpenSM", sm_b])
    base = None
    if not a.no_save:
        # the figures first: a report that fails to render does not lose the run
        os.makedirs(a.results, exist_ok=True)
        stamp = started.strftime("%Y-%m-%d-%H%M%S") + ("-quick" if a.quick else "")
        base = os.path.join(a.results, stamp)
        with open(base + ".json", "w") as f:
            json.dump({"meta": meta, "fabrics": {h: {"name": f.name, **f.size}
                                                 for h, f in fabrics.items()},
                       "summary": summary, "live": live, "offline": offline}, f, indent=1)
    report = markdown(meta, {h: f.label for h, f in fabrics.items()}, summary, offline,
                      "OpenSM", sm_b)
    sys.stdout.write(report)
    if base:
        with open(base + ".md", "w") as f:
            f.write(report)
        sys.stderr.write("bench: wrote %s.md and .json\n" % base)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
