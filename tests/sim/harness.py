"""harness.py - the simulated-fabric test bed of ibsm's tests/sim/*.t scripts.

The SM is judged from outside, never with its own view: a private ibsim per test, the SM and
the diags attached through libumad2sim.so, then port states, LIDs and a walk of every switch's
LFT for every (source CA port, destination LID) pair, shift-permutation link loads and up/down
turns of those LFTs; what the SM sends is counted on its way to the wire by the SMP counter
shim (tests/tools/smpcount.c, SmpCounts below). Python 3 standard library only. Every process
started here is stopped by its pid, also on an exception, SIGTERM/SIGINT/SIGHUP or the
per-test alarm.

Environment knobs (for development only; `make sim` needs none of them):
  IBSM_BUILD        build directory holding ibsm and tests/tools/{smpcount,rmpp}.so (default <repo>/build)
  IBSM_SM_CMD       command line used instead of <build>/ibsm, e.g. "opensm -e -d 2",
                    to validate the tests themselves against a known-good SM
  IBSM_SIM_FABRICS  directory used instead of <repo>/tests/fabrics
  IBSM_SIM_KEEP=1   keep the scratch directories (their paths are printed as TAP notes), and
                    the core file of an SM that crashed (see "cores" below)
  IBSM_TEST_SLOW=F  multiply every ceiling of a wait (and the per-test alarm) by F (default 1;
                    tests/sanitized/sim.t sets 3): ceilings only catch a hang, see
                    doc/testing.md "Waiting in tests"
"""

import atexit
import collections
import ctypes
import glob
import os
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NO_PORT = 255

# ----------------------------------------------------------------------------- waiting
# A test waits for an event (a log line, a file, a counter, an answer), never for a fixed
# time; the bound of every wait is a ceiling that only catches a hang, multiplied by
# IBSM_TEST_SLOW on a slow or loaded machine (the sanitized run sets it).


def _slow_factor():
    try:
        f = float(os.environ.get("IBSM_TEST_SLOW") or 1)
    except ValueError:
        f = 1.0
    return max(f, 1.0)


SLOW = _slow_factor()


def patience(seconds):
    """SECONDS (a ceiling of a wait) scaled by IBSM_TEST_SLOW."""
    return None if seconds is None else seconds * SLOW


def deadline(seconds):
    """time.time() at which a wait of ceiling SECONDS (scaled by IBSM_TEST_SLOW) gives up."""
    return time.time() + patience(seconds)


def until(cond, timeout=60.0, step=0.1):
    """Poll COND() until it returns something true or the ceiling TIMEOUT (scaled) passed;
    returns COND's last value (COND is called once more at the end)."""
    end = deadline(timeout)
    while True:
        v = cond()
        if v or time.time() > end:
            return v
        time.sleep(step)

# ----------------------------------------------------------------------------- paths


def build_dir():
    return os.environ.get("IBSM_BUILD") or os.path.join(REPO, "build")


def ibsm_path():
    return os.path.join(build_dir(), "ibsm")


def smpcount_path():
    """The SMP counter shim (tests/tools/smpcount.c), built by `make all`."""
    return os.path.join(build_dir(), "tests", "tools", "smpcount.so")


def rmpp_path():
    """The RMPP library (tests/tools/rmpp.c: the kernel's RMPP, which umad2sim lacks), built
    by `make all`."""
    return os.path.join(build_dir(), "tests", "tools", "rmpp.so")


def sm_override():
    """True when IBSM_SM_CMD replaces ibsm (tests then skip what only ibsm can do)."""
    return bool(os.environ.get("IBSM_SM_CMD"))


def sm_cmd():
    """The SM command as an argv prefix: IBSM_SM_CMD if set, else <build>/ibsm."""
    if sm_override():
        return shlex.split(os.environ["IBSM_SM_CMD"])
    return [ibsm_path()]


def fabric(name):
    """Path of a fabric of the project (tests/fabrics/NAME)."""
    d = os.environ.get("IBSM_SIM_FABRICS") or os.path.join(REPO, "tests", "fabrics")
    return os.path.join(d, name)


def find_umad2sim():
    """libumad2sim.so from the libumad2sim0 package, or None."""
    try:
        out = subprocess.run(["dpkg", "-L", "libumad2sim0"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    for line in out.splitlines():
        if line.endswith("/libumad2sim.so") and os.path.isfile(line):
            return line
    for root in ("/usr/lib", "/usr/local/lib"):
        for d, _, files in os.walk(root):
            if "libumad2sim.so" in files:
                return os.path.join(d, "libumad2sim.so")
    return None


def which(tool):
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin")


def missing_prerequisites(extra=()):
    """Names of the missing external tools (ibsim, umad2sim, diags, EXTRA), [] if none."""
    miss = [t for t in ("ibsim", "ibnetdiscover", "iblinkinfo", "dump_fts", "smpdump") + tuple(extra)
            if not which(t)]
    if not find_umad2sim():
        miss.append("libumad2sim.so")
    return miss


def tail(path, n=20):
    """Last N lines of a file, '' if it cannot be read (for diagnostics)."""
    try:
        with open(path, errors="replace") as f:
            return "".join(collections.deque(f, n))
    except OSError:
        return ""


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""

# ----------------------------------------------------------------------------- processes

_PR_SET_PDEATHSIG = 1
_live = []            # objects with .stop(), started and not yet stopped, oldest first
_cleaning = False


def _child_setup():
    """In the child: own session (a ^C at the terminal does not reach it) and SIGTERM when
    the test script dies, even by SIGKILL."""
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def cleanup():
    """Stop everything still running, newest first. Idempotent."""
    global _cleaning
    if _cleaning:
        return
    _cleaning = True
    try:
        while _live:
            obj = _live.pop()
            try:
                obj.stop()
            except Exception as e:       # keep stopping the others
                print("# cleanup: %s" % e, file=sys.stderr)
    finally:
        _cleaning = False


def _on_signal(signum, frame):
    cleanup()
    if signum == signal.SIGALRM:
        # a failure of this test alone, not "Bail out!": under prove -j2 a bail-out ends the
        # whole run and leaves the test running beside this one orphaned
        print("not ok - test timed out (its alarm rang): this test stops here")
        sys.stdout.flush()
        os._exit(255)
    os._exit(128 + signum)


atexit.register(cleanup)
for _s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
    signal.signal(_s, _on_signal)


def stop_pid(popen, term_wait=5.0):
    """Stop one process we started: SIGTERM, then SIGKILL after TERM_WAIT (scaled) seconds;
    returns its exit status."""
    term_wait = patience(term_wait)
    if popen.poll() is None:
        try:
            popen.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            popen.wait(term_wait)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
    return popen.returncode


# ----------------------------------------------------------------------------- cores
# A crash that happens once in a hundred runs must leave evidence the first time: every SM the
# tests start (run() and Background when argv[0] is the SM, see is_sm_argv) runs with
# RLIMIT_CORE unlimited in a scratch cwd; when it ends by a signal that dumps core, its core
# (found by /proc/sys/kernel/core_pattern) is read with `gdb -batch -ex 'thread apply all bt'`,
# the backtraces and the tail of its log are printed to stderr as TAP '#' diagnostics, and the
# core is deleted (kept with IBSM_SIM_KEEP=1). Sanitized builds (IBSM_SANITIZED, set by
# tests/sanitized/sim.t) keep their runtime's disable_coredump: their report is the evidence.

CORE_SIGNALS = frozenset((signal.SIGQUIT, signal.SIGILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGBUS,
                          signal.SIGFPE, signal.SIGSEGV, signal.SIGSYS, signal.SIGXCPU, signal.SIGXFSZ))


def cores_wanted():
    """True unless the SM is a sanitized build (it disables its own core dumps)."""
    return not os.environ.get("IBSM_SANITIZED")


def is_sm_argv(argv):
    """ARGV runs the SM: <build>/ibsm, IBSM_SM_CMD's program or any program named ibsm."""
    if not argv:
        return False
    exe = argv[0]
    if os.path.basename(exe) == "ibsm":
        return True
    try:
        return os.path.realpath(exe) == os.path.realpath(sm_cmd()[0])
    except (OSError, IndexError):
        return False


def _sm_child_setup():
    """_child_setup, and core files without a size limit (the cwd is a scratch dir)."""
    _child_setup()
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    except (OSError, ValueError):
        pass


def child_setup_for(argv):
    """The preexec_fn for a child running ARGV."""
    return _sm_child_setup if cores_wanted() and is_sm_argv(argv) else _child_setup


def _core_glob(pid):
    """(directory or None for the cwd, glob) of the core a process of PID dumps by
    core_pattern, or (None, None) when the kernel hands cores to a program ('|...')."""
    pattern = read("/proc/sys/kernel/core_pattern").strip() or "core"
    if pattern.startswith("|"):
        return None, None
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "%" and i + 1 < len(pattern):
            spec = pattern[i + 1]
            out.append("%" if spec == "%" else str(pid) if spec == "p" else "*")
            i += 2
            continue
        out.append(glob.escape(c))
        i += 1
    g = "".join(out)
    if "%p" not in pattern and read("/proc/sys/kernel/core_uses_pid").strip() == "1":
        g += ".%d" % pid
    d, name = os.path.split(g)
    return (d or None), name


def find_core(pid, cwd, since):
    """Path of the core file process PID (whose cwd was CWD) dumped at or after time SINCE,
    or None; the newest when several match."""
    d, name = _core_glob(pid)
    if name is None:
        return None
    d = d if d and os.path.isabs(d) else os.path.join(cwd or os.getcwd(), d or "")
    found = []
    for path in glob.glob(os.path.join(glob.escape(d), name)):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if os.path.isfile(path) and st.st_mtime >= since - 1:
            found.append((st.st_mtime, path))
    return max(found)[1] if found else None


def _log_of(argv):
    """The log file named by -f/--log_file in ARGV (None for stderr, '-', or none)."""
    for i, a in enumerate(argv[:-1]):
        if a in ("-f", "--log_file", "--log-file"):
            return None if argv[i + 1] == "-" else argv[i + 1]
    return None


def core_report(argv, rc, pid, cwd, since, output_tail="", log=None):
    """When RC (a Popen returncode) says the SM of ARGV (pid PID, cwd CWD, started at time
    SINCE) ended by a core-dumping signal: the report (gdb's backtrace of every thread of its
    core, the tail of its log LOG, or of -f's file, and OUTPUT_TAIL) as text; the core is then
    deleted unless IBSM_SIM_KEEP is set. '' when RC is no such signal. RC None: the status is
    not ours to know (a daemon that is not our child): a report only if a core is found."""
    if rc is None:
        core = find_core(pid, cwd, since) if cores_wanted() else None
        if core is None:
            return ""
        name = "a signal (it left a core)"
    elif rc >= 0 or -rc not in CORE_SIGNALS:
        return ""
    else:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "signal %d" % -rc
        core = find_core(pid, cwd, since) if cores_wanted() else None
    lines = ["%s (pid %d) was killed by %s" % (" ".join(argv)[:300], pid, name)]
    gdb = which("gdb")
    if not cores_wanted():
        lines.append("no core: a sanitized build (its runtime's disable_coredump); its report is above")
    elif core is None:
        lines.append("no core file found (core_pattern %r, cwd %s): no backtrace" %
                     (read("/proc/sys/kernel/core_pattern").strip(), cwd))
    elif not gdb:
        lines.append("core %s (%d bytes) but no gdb installed: no backtrace" % (core, os.path.getsize(core)))
    else:
        exe = which(argv[0]) if "/" not in argv[0] else argv[0]
        try:
            p = subprocess.run([gdb, "-batch", "-nx", "-ex", "set pagination off",
                                "-ex", "thread apply all bt", exe or argv[0], core],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               text=True, errors="replace", timeout=patience(120))
            bt = p.stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            bt = "gdb failed: %s" % e
        keep = [l for l in bt.splitlines() if l.strip() and not l.startswith((
            "[New LWP", "[Thread debugging", "Using host libthread_db", "warning: Section `.reg-xstate"))]
        lines.append("gdb -batch -ex 'thread apply all bt' %s %s:" % (exe, core))
        lines += keep[:400] + (["... (%d more lines)" % (len(keep) - 400)] if len(keep) > 400 else [])
    log = log or _log_of(argv)
    if log and not os.path.isabs(log) and cwd:
        log = os.path.join(cwd, log)
    if log:
        lines.append("last lines of %s:" % log)
        lines += tail(log, 30).splitlines()
    if output_tail:
        lines.append("last lines of its output:")
        lines += output_tail.splitlines()[-30:]
    if core:
        if os.environ.get("IBSM_SIM_KEEP"):
            lines.append("core kept: %s" % core)
        else:
            try:
                os.unlink(core)
            except OSError:
                pass
    return "\n".join(lines)


def print_core_report(text):
    """TEXT as TAP diagnostics ('# ' lines) on stderr."""
    if not text:
        return
    sys.stdout.flush()
    for line in text.splitlines():
        print("# " + line, file=sys.stderr)
    sys.stderr.flush()


class Result:
    """Outcome of a finished command: rc (negative = killed by that signal), out, err."""

    def __init__(self, argv, rc, out, err, timed_out=False, seconds=0.0):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.timed_out, self.seconds = timed_out, seconds

    @property
    def text(self):
        return self.out + self.err

    def crashed(self):
        """Killed by a signal (not by our timeout), or a sanitizer report."""
        return (self.rc < 0 and not self.timed_out) or \
            bool(re.search(r"AddressSanitizer|runtime error:|Segmentation fault|core dumped", self.text))

    def describe(self):
        how = "timed out" if self.timed_out else ("signal %d" % -self.rc if self.rc < 0 else "rc %d" % self.rc)
        return "%s: %s in %.1fs\n%s" % (" ".join(self.argv), how, self.seconds,
                                        (self.out + self.err)[-1500:])


def run(argv, env=None, cwd=None, timeout=60, stdin_text=None):
    """Run a command to completion (stopped by pid after TIMEOUT seconds, scaled by
    IBSM_TEST_SLOW: a ceiling that only catches a hang)."""
    timeout = patience(timeout)
    t0 = time.time()
    setup = child_setup_for(argv)
    own_cwd = None
    if setup is _sm_child_setup and cwd is None:
        own_cwd = cwd = tempfile.mkdtemp(prefix="ibsm-run.")  # its core lands there, not in ours
    try:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                             text=True, errors="replace", preexec_fn=setup)
    except OSError as e:
        if own_cwd:
            shutil.rmtree(own_cwd, ignore_errors=True)
        return Result(argv, 127, "", "%s: %s\n" % (argv[0], e), seconds=time.time() - t0)
    holder = _Proc(p)
    _live.append(holder)
    timed_out = False
    try:
        out, err = p.communicate(stdin_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_pid(p)
        out, err = p.communicate()
    finally:
        if holder in _live:
            _live.remove(holder)
    if setup is _sm_child_setup or is_sm_argv(argv):
        print_core_report(core_report(argv, p.returncode, p.pid, cwd, t0, (out or "") + (err or "")))
    if own_cwd:
        shutil.rmtree(own_cwd, ignore_errors=True)
    return Result(argv, p.returncode, out, err, timed_out, time.time() - t0)


class _Proc:
    def __init__(self, popen):
        self.popen = popen

    def stop(self):
        return stop_pid(self.popen)


class Background:
    """A process running in the background (an SM): output to a file, stopped by pid."""

    def __init__(self, argv, env, cwd, outfile, count_file=None):
        self.argv, self.outfile, self.count_file = argv, outfile, count_file
        self.cwd = cwd or os.getcwd()
        self.started = time.time()
        self.crash_report = None   # the core report, once its end was seen (core_report)
        self._out = open(outfile, "w")
        self.popen = subprocess.Popen(argv, env=env, cwd=cwd, stdout=self._out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, preexec_fn=child_setup_for(argv))
        self.pid = self.popen.pid
        _live.append(self)

    def alive(self):
        return self.popen.poll() is None

    def stop(self):
        """SIGTERM (then SIGKILL); returns the exit status (negative: killed by that signal)."""
        rc = stop_pid(self.popen)
        self._out.close()
        if self in _live:
            _live.remove(self)
        self.report_crash()
        return rc

    def report_crash(self):
        """Once the process has ended: if an SM ended by a core-dumping signal, print its core's
        backtraces and the tail of its log (core_report); once. Returns the report ('' none)."""
        if self.crash_report is None and self.popen.poll() is not None:
            self.crash_report = ""
            if is_sm_argv(self.argv):
                self.crash_report = core_report(self.argv, self.popen.returncode, self.pid, self.cwd,
                                                self.started, tail(self.outfile, 30))
                print_core_report(self.crash_report)
        return self.crash_report or ""

    def output(self):
        return read(self.outfile)

    def counts(self):
        """What the SMP counter saw this process send and receive so far (SmpCounts)."""
        return SmpCounts.read(self.count_file)

    def wait_counts(self, cond, timeout=60.0):
        """Poll the counter until COND(counts) is true while the process runs; returns the
        last counts read and whether COND held."""
        end = deadline(timeout)
        while True:
            c = self.counts()
            if cond(c):
                return c, True
            if not self.alive() or time.time() > end:
                c = self.counts()
                return c, bool(cond(c))
            time.sleep(0.1)

    def wait_idle(self, quiet=1.0, timeout=60.0):
        """Wait until the process has sent no MAD for QUIET seconds (the counter stands
        still); returns the counts then, or None if it never went quiet (TIMEOUT scaled by
        IBSM_TEST_SLOW, QUIET not: wait_counts_idle)."""
        return wait_counts_idle(self.counts, quiet, timeout, self.alive)

    def wait_for(self, path, pattern, timeout=30.0):
        """Wait until regex PATTERN appears in file PATH (or our output if PATH is None)
        while the process runs. Returns True if it appeared."""
        rx = re.compile(pattern)
        end = deadline(timeout)
        while True:
            if rx.search(read(path or self.outfile)):
                return True
            if not self.alive() or time.time() > end:
                return bool(rx.search(read(path or self.outfile)))
            time.sleep(0.05)

# ----------------------------------------------------------------------------- net files


NODE_RE = re.compile(r'^\s*(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"([^"]*)")?')
LINK_RE = re.compile(r'^\s*\[(\d+)\]\s*(?:\([0-9a-fA-Fx]+\))?\s*"([^"]+)"\s*\[(\d+)\]')


class NetFile:
    """An ibsim net file: nodes (name -> (type 'SW'/'CA'/'RT', nports)), links, CA names in
    file order. ibsim's NodeDescription is the quoted comment after a node's name if there
    is one (`Hca 2 "h1" # "h1 dual-port"`), else the name: desc maps name -> it."""

    def __init__(self, path):
        self.path = path
        self.nodes = collections.OrderedDict()
        self.desc = {}
        self.links = set()              # frozenset({(name, port), (name, port)})
        cur = None
        with open(path) as f:
            for line in f:
                m = NODE_RE.match(line)
                if m:
                    typ = {"Switch": "SW", "Rt": "RT"}.get(m.group(1), "CA")
                    cur = m.group(3)
                    self.nodes[cur] = (typ, int(m.group(2)))
                    self.desc[cur] = m.group(4) if m.group(4) is not None else cur
                    continue
                line = line.split("#", 1)[0]
                m = LINK_RE.match(line)
                if m and cur is not None:
                    self.links.add(frozenset([(cur, int(m.group(1))), (m.group(2), int(m.group(3)))]))

    def cas(self):
        return [n for n, (t, _) in self.nodes.items() if t == "CA"]

    def switches(self):
        return [n for n, (t, _) in self.nodes.items() if t == "SW"]

    def sizes(self):
        """(nodes, switches, all ports incl. switch port 0, CA ports)"""
        sw = sum(1 for t, _ in self.nodes.values() if t == "SW")
        ports = sum(n + 1 if t == "SW" else n for t, n in self.nodes.values())
        caports = sum(n for t, n in self.nodes.values() if t != "SW")
        return len(self.nodes), sw, ports, caports

# ----------------------------------------------------------------------------- the simulator


_sim_count = 0


class Sim:
    """A private ibsim on one net file, in its own scratch directory.

        with Sim(fabric("tiny.net")) as sim:
            r = sim.run_sm(["--once", "-f", sim.path("ibsm.log")])
            snap = sim.collect()
    """

    def __init__(self, net, lmc=3, host=None, ready_timeout=30.0):
        global _sim_count
        self.net = os.path.abspath(net)
        self.netfile = NetFile(self.net)
        self.proc = None
        self.umad2sim = find_umad2sim()
        if not self.umad2sim:
            raise RuntimeError("libumad2sim.so not found (apt-get install libumad2sim0)")
        if not which("ibsim"):
            raise RuntimeError("ibsim not found (apt-get install ibsim-utils)")
        cas = self.netfile.cas()
        self.host = host or (cas[0] if cas else "")
        _sim_count += 1
        self.dir = tempfile.mkdtemp(prefix="ibsm-sim.")
        self.rundir = self.path("run")          # cwd of every client (./sys-<pid>/ lands here)
        self.osmdir = self.path("osm")
        os.makedirs(self.rundir)
        os.makedirs(self.osmdir)
        self.sockname = "ibsm-sim-%d-%d" % (os.getpid(), _sim_count)
        self._mark = 0
        self._counts = 0
        nodes, sw, ports, caports = self.netfile.sizes()
        need = (sw + caports + 1) * (1 << lmc) * 2
        lcap = min(max((need + 1023) // 1024 * 1024, 1024), 49152)
        self.ibsim_argv = [which("ibsim"), "-s", "-N", str(nodes + 1), "-S", str(sw + 1),
                           "-P", str(ports + 8), "-L", str(lcap), self.net]
        fifo = self.path("console.fifo")
        os.mkfifo(fifo)
        # read-write: ibsim never sees EOF on its console (it would spin), writers never block
        self._fifo_fd = os.open(fifo, os.O_RDWR)
        self._log = open(self.path("console.log"), "w")
        self._err = open(self.path("ibsim.err"), "w")
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env["IBSIM_SOCKNAME"] = self.sockname
        _live.append(self)
        self.proc = subprocess.Popen(self.ibsim_argv, cwd=self.rundir, env=env, stdin=self._fifo_fd,
                                     stdout=self._log, stderr=self._err,
                                     preexec_fn=_child_setup)
        end = deadline(ready_timeout)
        while "Network simulator ready" not in read(self.path("console.log")):
            if self.proc.poll() is not None:
                msg = read(self.path("console.log"))[-800:] + read(self.path("ibsim.err"))[-800:]
                self.stop()
                raise RuntimeError("ibsim exited during start-up (rc %s): %s" % (self.proc.returncode, msg))
            if time.time() > end:
                self.stop()
                raise RuntimeError("ibsim not ready after %.0fs" % ready_timeout)
            time.sleep(0.05)
        self.console("Attached")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def path(self, name):
        return os.path.join(self.dir, name)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def console(self, cmd, timeout=15.0):
        """Send one ibsim console command and return what it printed."""
        if not self.alive():
            raise RuntimeError("ibsim is not running")
        self._mark += 1
        mark = "#ibsm-sim-mark-%d" % self._mark
        logp = self.path("console.log")
        start = os.path.getsize(logp)
        os.write(self._fifo_fd, ("%s\n%s\n" % (cmd, mark)).encode())
        end = deadline(timeout)
        while True:
            with open(logp, errors="replace") as f:
                f.seek(start)
                text = f.read()
            if mark in text:
                text = text.split(mark, 1)[0]
                lines = [l.replace("sim> ", "").rstrip() for l in text.splitlines()]
                return "\n".join(l for l in lines if l and l != "sim>")
            if not self.alive():
                raise RuntimeError("ibsim died; see %s" % logp)
            if time.time() > end:
                raise RuntimeError("no answer from the ibsim console to %r" % cmd)
            time.sleep(0.02)

    def trace_start(self):
        """From now on ibsim dumps every MAD a client sends it (console `Verbose 3`): the
        simulator's own account, to check the SMP counter against (trace_counts())."""
        self.console("Verbose 3")
        self._trace_from = os.path.getsize(self.path("console.log"))

    def trace_counts(self, stop=True):
        """Stop the dump (go on dumping with STOP false: a count so far, to poll); Counter
        {(class, method, attr)} of the MADs ibsim received since trace_start(), read from its
        '--- packet ---' dumps (16 lines of 8 16-bit words)."""
        self.console("Verbose 0" if stop else "Verbose 3")
        with open(self.path("console.log"), errors="replace") as f:
            f.seek(self._trace_from)
            text = f.read()
        counts = collections.Counter()
        for block in text.split("--- packet ---")[1:]:
            words = []
            for line in block.splitlines():
                if re.match(r"^\s*([0-9a-f]{4}\s+){7}[0-9a-f]{4}\s*$", line):
                    words += line.split()
                elif words:
                    break
            if len(words) >= 9:
                counts[(int(words[0], 16) & 0xff, int(words[1], 16) & 0xff, int(words[8], 16))] += 1
        return counts

    def stop(self):
        """Stop ibsim (console Quit, then SIGTERM/SIGKILL by pid), remove the scratch dir."""
        if self in _live:
            _live.remove(self)
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.write(self._fifo_fd, b"Quit\n")
                self.proc.wait(patience(2))
            except (OSError, subprocess.TimeoutExpired):
                pass
            stop_pid(self.proc)
        if getattr(self, "_fifo_fd", None) is not None:
            os.close(self._fifo_fd)
            self._fifo_fd = None
        for f in (getattr(self, "_log", None), getattr(self, "_err", None)):
            if f:
                f.close()
        if os.environ.get("IBSM_SIM_KEEP"):
            print("# kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---------------------------------------------------------------- clients

    def env(self, host=None, rmpp=False, **extra):
        """Environment of a client attached at HOST (a CA name; default the first CA). RMPP:
        the RMPP library is preloaded before libumad2sim (with_rmpp)."""
        env = dict(os.environ)
        env.update(IBSIM_SOCKNAME=self.sockname, SIM_HOST=host or self.host,
                   LD_PRELOAD=self.umad2sim, OSM_TMP_DIR=self.osmdir, OSM_CACHE_DIR=self.osmdir)
        env.update({k: str(v) for k, v in extra.items()})
        return with_rmpp(env) if rmpp else env

    def run(self, argv, host=None, timeout=60, env=None):
        """Run a client (a diag, the SM) attached to this fabric, from the scratch dir."""
        exe = which(argv[0]) if "/" not in argv[0] else argv[0]
        return run([exe or argv[0]] + list(argv[1:]), env=env or self.env(host), cwd=self.rundir,
                   timeout=timeout)

    def query(self, argv, host=None, timeout=60, env=None, ok=None):
        """Run a read-only diag (smpquery, saquery, ...) until it succeeds (OK(result), else
        rc 0), at most 5 times: on a loaded machine a diag's own MAD timeout can expire before
        the simulator answers, and a read that failed once says nothing about the fabric. The
        last Result is returned either way."""
        for _ in range(5):
            r = self.run(argv, host=host, timeout=timeout, env=env)
            if (ok(r) if ok else r.rc == 0):
                break
        return r

    def count_file(self, name):
        """A new SMPCOUNT_FILE path in the scratch dir (NAME-N.smpcount)."""
        self._counts += 1
        return self.path("%s-%d.smpcount" % (name, self._counts))

    def run_sm(self, args, timeout=60, host=None, env=None, count=True):
        """Run the SM (ibsm, or IBSM_SM_CMD) with ARGS to completion; returns a Result whose
        .counts is what the SMP counter saw it send and receive (None with COUNT false)."""
        env = env or self.env(host)
        path = None
        if count:
            path = self.count_file("run")
            env = with_counter(env, path)
        r = self.run(sm_cmd() + list(args), host=host, timeout=timeout, env=env)
        r.count_file = path
        r.counts = SmpCounts.read(path) if path else None
        return r

    def start_sm(self, args, host=None, env=None, cmd=None, name="sm", count=True):
        """Start the SM (or CMD, an argv prefix) in the background; returns a Background.
        With COUNT (the default) the SMP counter shim is preloaded before libumad2sim:
        Background.counts() reads what it has sent and received."""
        argv = (cmd or sm_cmd()) + list(args)
        env = env or self.env(host)
        path = None
        if count:
            path = self.count_file(name)
            env = with_counter(env, path)
        return Background(argv, env, self.rundir, self.path("%s.out" % name), path)

    def start_sa_sm(self, sm_name, host, log):
        """OpenSM ("opensm") or ibsm on HOST, logging to LOG, with the RMPP test library: an SA
        that answers tables whole (the SA tests put the two side by side)."""
        env = self.env(host, rmpp=True)
        if sm_name == "opensm":
            return self.start_sm(["-e", "-f", log, "-d", "2", "-s", "0"], host=host, name="opensm",
                                 cmd=[which("opensm")], count=False, env=env)
        return self.start_sm(["-f", log], host=host, name="ibsm", env=env)

    def collect(self, host=None):
        """Read the fabric with infiniband-diags; returns a Snapshot."""
        return Snapshot.collect(self, host)

    def node(self, snap, name):
        """The snapshot's node for net-file node NAME (matched by its NodeDescription)."""
        return snap.by_desc(self.netfile.desc.get(name, name))

    def sminfo(self, host=None, lid=None):
        """`sminfo` from HOST: (guid, lid, state) of the master SM (or of the SM port at LID,
        which answers for itself: state 2 STANDBY, 3 MASTER), or None; and the Result."""
        r = self.run(["sminfo"] + ([str(lid)] if lid else []), host=host, timeout=20)
        m = re.search(r'sm lid (\d+) sm guid (0x[0-9a-fA-F]+).*?state (\d+)', r.out)
        if r.rc != 0 or not m:
            return None, r
        return (int(m.group(2), 16), int(m.group(1)), int(m.group(3))), r

# ----------------------------------------------------------------------------- SMP counter
# tests/tools/smpcount.so, preloaded before libumad2sim.so, counts every MAD the SM hands to
# libibumad (umad_send) and every one it receives (umad_recv) in a file (SMPCOUNT_FILE) that
# is readable at any time: the tests judge what an SM wrote from the wire, not from its log.

CLASS_SM_LID, CLASS_SM_DR = 0x01, 0x81
SM_CLASSES = (CLASS_SM_LID, CLASS_SM_DR)
GET, SET, GETRESP, TRAP, TRAPREPRESS = 0x01, 0x02, 0x81, 0x05, 0x07
METHOD_NAMES = {GET: "Get", SET: "Set", GETRESP: "GetResp", TRAP: "Trap", TRAPREPRESS: "TrapRepress"}
NOTICE, NODEDESC, NODEINFO, SWITCHINFO, GUIDINFO, PORTINFO, PKEYTABLE, SL2VL, VLARB, LFT, RFT, MFT, \
    SMINFO = 0x02, 0x10, 0x11, 0x12, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x20
ATTR_NAMES = {NOTICE: "Notice", NODEDESC: "NodeDescription", NODEINFO: "NodeInfo",
              SWITCHINFO: "SwitchInfo", GUIDINFO: "GUIDInfo", PORTINFO: "PortInfo",
              PKEYTABLE: "P_KeyTable", SL2VL: "SLtoVLMappingTable", VLARB: "VLArbitrationTable",
              LFT: "LinearForwardingTable", RFT: "RandomForwardingTable",
              MFT: "MulticastForwardingTable", SMINFO: "SMInfo"}
_SMPCOUNT_MAGIC = b"SMPCNT1\n"


def with_rmpp(env):
    """ENV with the RMPP library (tests/tools/rmpp.c) preloaded before libumad2sim: SA answers
    longer than one MAD (GetTable) reach the client whole, as through the kernel."""
    env = dict(env)
    env["LD_PRELOAD"] = " ".join(x for x in (rmpp_path(), env.get("LD_PRELOAD", "")) if x)
    return env


def with_counter(env, path):
    """ENV with the SMP counter preloaded before libumad2sim and counting into PATH."""
    env = dict(env)
    env["LD_PRELOAD"] = " ".join(x for x in (smpcount_path(), env.get("LD_PRELOAD", "")) if x)
    env["SMPCOUNT_FILE"] = path
    return env


def attr_name(attr):
    return ATTR_NAMES.get(attr, "0x%04x" % attr)


def method_name(method):
    return METHOD_NAMES.get(method, "0x%02x" % method)


class SmpCounts:
    """One reading of an SMPCOUNT_FILE (see tests/tools/smpcount.c for the layout).

    sent, received: Counter {(class, method, attr): MADs}; details: Counter {(class, method,
    attr, attribute modifier, target): MADs sent} for every sent MAD that is not a Get of an
    SM class (Sets, GetResp, TrapRepress...); target is ('dr', (0, p1, p2, ...)) for a
    directed route (initial path, port 0 first, as dump_fts writes it), ('lid', LID) for a
    LID-routed MAD (a DR path with DrSLID/DrDLID set carries them after the path).
    send_failed, recv_bad_status, undecodable, overflow: the header's error counters.
    valid is False when the file is missing (the SM never started) or not a counter file."""

    def __init__(self):
        self.valid = False
        self.sent = collections.Counter()
        self.received = collections.Counter()
        self.details = collections.Counter()
        self.send_failed = self.recv_bad_status = self.undecodable = self.overflow = 0

    @classmethod
    def read(cls, path):
        c = cls()
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (OSError, TypeError):
            return c
        if len(data) < 64 or data[:8] != _SMPCOUNT_MAGIC:
            return c
        (version, hsize, ntot, tsize, ndet, dsize, c.send_failed, c.recv_bad_status, c.undecodable,
         c.overflow) = struct.unpack_from("<6I4Q", data, 8)
        if version != 1 or tsize != 16 or dsize != 96 or len(data) < hsize + ntot * tsize + ndet * dsize:
            return c
        c.valid = True
        for i in range(ntot):
            key, count = struct.unpack_from("<QQ", data, hsize + i * tsize)
            if key and count:
                k = ((key >> 24) & 0xff, (key >> 16) & 0xff, key & 0xffff)
                (c.received if (key >> 32) & 1 else c.sent)[k] += count
        base = hsize + ntot * tsize
        for i in range(ndet):
            off = base + i * dsize
            state, count = struct.unpack_from("<QQ", data, off)
            if state != 2 or not count:
                continue
            mclass, method, attr, mod, lid, hops, flags, slid, dlid = struct.unpack_from("<BBHIHBBHH", data, off + 16)
            if flags & 1:
                path = tuple(data[off + 32:off + 32 + hops + 1])
                target = ("dr", path) if (slid, dlid) == (0xffff, 0xffff) else ("dr", path, slid, dlid)
            else:
                target = ("lid", lid)
            c.details[(mclass, method, attr, mod, target)] += count
        return c

    def __sub__(self, before):
        """What was counted since BEFORE (an earlier reading of the same file)."""
        d = SmpCounts()
        d.valid = self.valid and before.valid
        d.sent = self.sent - before.sent
        d.received = self.received - before.received
        d.details = self.details - before.details
        for k in ("send_failed", "recv_bad_status", "undecodable", "overflow"):
            setattr(d, k, getattr(self, k) - getattr(before, k))
        return d

    def count(self, method=None, attr=None, received=False, classes=SM_CLASSES):
        """MADs of SM classes (LID-routed and directed route) sent (or RECEIVED) with that
        method and attribute (None: any)."""
        table = self.received if received else self.sent
        return sum(n for (c, m, a), n in table.items()
                   if c in classes and (method is None or m == method) and (attr is None or a == attr))

    def gets(self, attr=None):
        return self.count(GET, attr)

    def sets(self, attr=None):
        return self.count(SET, attr)

    def requests(self):
        """Gets and Sets sent (each expects one GetResp)."""
        return self.gets() + self.sets()

    def responses(self):
        """GetResp received (answers to our Gets and Sets)."""
        return self.count(GETRESP, received=True)

    def total_sent(self):
        return sum(self.sent.values())

    def set_details(self, attr=None, method=SET):
        """[(attr, modifier, target, count)] of the Sets (or METHOD) sent, sorted."""
        return sorted((a, mod, t, n) for (c, m, a, mod, t), n in self.details.items()
                      if c in SM_CLASSES and m == method and (attr is None or a == attr))

    def summary(self, received=False):
        """'Get NodeInfo 33, Set PortInfo 72, ...' (SM classes first, then the others)."""
        table = self.received if received else self.sent
        if not self.valid:
            return "no counter file"
        merged = collections.Counter()         # LID-routed and directed-route SMPs together
        for (c, m, a), n in table.items():
            merged[(c not in SM_CLASSES, c if c not in SM_CLASSES else 0, m, a)] += n
        parts = ["%s %s%s %d" % (method_name(m), attr_name(a), " (class 0x%02x)" % c if other else "", n)
                 for (other, c, m, a), n in sorted(merged.items())]
        return ", ".join(parts) if parts else "nothing"

    def describe_sets(self, snap=None, host_node=None, attr=None, limit=8):
        """Sets named by their target: 'LinearForwardingTable block 0 of leaf1 (0,1,5)'..."""
        out = []
        for a, mod, target, n in self.set_details(attr):
            name = ""
            if snap is not None:
                node = snap.resolve_target(target, host_node)
                name = " of %s" % node.name() if node is not None else ""
            what = "block %d" % mod if a == LFT else "modifier 0x%x" % mod
            out.append("%s %s%s (%s) x%d" % (attr_name(a), what, name, format_target(target), n))
        return _examples(out, limit)


def format_target(target):
    if target[0] == "lid":
        return "LID %d" % target[1]
    s = "DR " + ",".join(str(p) for p in target[1])
    return s if len(target) == 2 else s + " slid %d dlid %d" % target[2:]


def wait_counts_idle(read_counts, quiet=1.0, timeout=60.0, alive=None):
    """Poll READ_COUNTS() until the number of MADs sent and received has not changed for QUIET
    seconds; returns that reading, or None after TIMEOUT (scaled by IBSM_TEST_SLOW) or when
    ALIVE() turns false. QUIET is not scaled: periodic light sweeps would never leave a longer
    quiet; where a quiet second could be a pause inside a sweep, wait for the sweep's log line
    first (daemon_util.wait_settled)."""
    end = deadline(timeout)
    last = read_counts()
    still = time.time()
    while time.time() < end:
        time.sleep(0.1)
        c = read_counts()
        if (c.sent, c.received) != (last.sent, last.received):
            last, still = c, time.time()
        elif time.time() - still >= quiet:
            return c
        if alive is not None and not alive():
            return None
    return None


# ----------------------------------------------------------------------------- diag snapshot


TOPO_NODE_RE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"\s*(?:#\s*"(.*?)"(.*))?$')
TOPO_PORT_RE = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\]'
                          r'(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$')
LINK_INFO_RE = re.compile(r'^(0x[0-9a-fA-F]+)\s+".*?"\s+(\d+)\s+(\d+)\[.*?\]\s+==\((.*?)\)==>')


class Node:
    def __init__(self, typ, guid, desc, nports):
        self.type, self.guid, self.desc, self.nports = typ, guid, desc, nports
        self.lid = 0          # switches: LID of port 0
        self.lmc = 0
        self.ports = {}       # num -> Port (linked ports only, as ibnetdiscover lists them)

    def name(self):
        return self.desc or "%s-%016x" % (self.type, self.guid)


class Port:
    def __init__(self, node, num, guid):
        self.node, self.num, self.guid = node, num, guid
        self.peer = None      # (node guid, port number)
        self.lid = 0          # CA ports only; a switch's LID is on its node
        self.lmc = 0
        self.state = None     # 'Active', 'Initialize', 'Armed', 'Down', ...
        self.phys = None

    def name(self):
        return "%s[%d]" % (self.node.name(), self.num)


class Snapshot:
    """What infiniband-diags see: nodes, links, LIDs, port states, every switch's LFT."""

    def __init__(self):
        self.nodes = {}       # node guid -> Node
        self.lfts = {}        # switch guid -> bytearray, out port per LID (NO_PORT = none)
        self.lft_top = {}     # switch guid -> LinearFDBTop as dump_fts shows it
        self.raw = {}         # tool -> its output (for diagnostics)
        self.errors = []      # tools that failed

    @classmethod
    def collect(cls, sim, host=None):
        s = cls()
        cache = os.path.join(sim.dir, "ibnd-%d.cache" % time.monotonic_ns())
        r = sim.run(["ibnetdiscover", "--cache", cache], host=host, timeout=60)
        s.raw["ibnetdiscover"] = r.out
        if r.rc != 0:
            s.errors.append(r.describe())
        s.parse_topology(r.out)
        r = sim.run(["iblinkinfo", "--load-cache", cache, "-l"], host=host, timeout=60)
        s.raw["iblinkinfo"] = r.out
        if r.rc != 0:
            s.errors.append(r.describe())
        s.parse_linkinfo(r.out)
        r = sim.run(["dump_fts", "-n", "-a"], host=host, timeout=60)
        s.raw["dump_fts"] = r.out
        if r.rc != 0:
            s.errors.append(r.describe())
        paths = s.parse_lfts(r.out)
        s.fix_top_blocks(sim, host, paths)
        try:
            os.unlink(cache)
        except OSError:
            pass
        return s

    # ------------------------------------------------------------ parsing

    def parse_topology(self, text):
        cur = None
        for line in text.splitlines():
            line = line.rstrip()
            m = TOPO_NODE_RE.match(line)
            if m:
                typ, nports, _, guid, desc, rest = m.groups()
                cur = Node({"Switch": "SW", "Ca": "CA", "Rt": "RT"}[typ], int(guid, 16), desc, int(nports))
                if typ == "Switch" and rest:
                    mm = re.search(r'port 0 lid (\d+) lmc (\d+)', rest)
                    if mm:
                        cur.lid, cur.lmc = int(mm.group(1)), int(mm.group(2))
                self.nodes[cur.guid] = cur
                continue
            m = TOPO_PORT_RE.match(line)
            if m and cur is not None:
                num, pguid, _, rguid, rport, _, comment = m.groups()
                p = Port(cur, int(num), int(pguid, 16) if pguid else cur.guid)
                p.peer = (int(rguid, 16), int(rport))
                if cur.type != "SW" and comment:
                    mm = re.match(r'\s*lid (\d+) lmc (\d+)', comment)
                    if mm:
                        p.lid, p.lmc = int(mm.group(1)), int(mm.group(2))
                cur.ports[p.num] = p
            elif not line.strip():
                cur = None

    def parse_linkinfo(self, text):
        """iblinkinfo -l: one line per port, '<port guid> "desc" lid port[..] ==( .. State/ Phys)==>'"""
        byguid = {}
        for n in self.nodes.values():
            for p in n.ports.values():
                byguid[(p.guid, p.num)] = p
        for line in text.splitlines():
            m = LINK_INFO_RE.match(line)
            if not m:
                continue
            mm = re.search(r'(\w+)/\s*(\w+)\s*$', m.group(4))
            p = byguid.get((int(m.group(1), 16), int(m.group(3))))
            if p is not None and mm:
                p.state, p.phys = mm.group(1), mm.group(2)

    def parse_lfts(self, text):
        """dump_fts -n -a -> self.lfts; returns {switch guid: DR path} for fix_top_blocks."""
        paths = {}
        cur = None
        for line in text.splitlines():
            if line.startswith("Unicast lids"):
                g = int(re.search(r'guid (0x[0-9a-fA-F]+)', line).group(1), 16)
                mt = re.search(r'\[0x([0-9a-fA-F]+)-0x([0-9a-fA-F]+)\]', line)
                md = re.search(r'DR path slid \d+; dlid \d+; ([0-9,]+)', line)
                top = int(mt.group(2), 16) if mt else 0
                cur = bytearray([NO_PORT]) * (top + 1)
                self.lfts[g] = cur
                self.lft_top[g] = top
                if md:
                    paths[g] = md.group(1)
                continue
            if cur is not None and line.startswith("0x"):
                f = line.split()
                if len(f) >= 2 and f[1].isdigit():
                    lid = int(f[0], 16)
                    if lid >= len(cur):
                        cur.extend(bytearray([NO_PORT]) * (lid + 1 - len(cur)))
                    cur[lid] = min(int(f[1]), NO_PORT)
        return paths

    def fix_top_blocks(self, sim, host, paths):
        """dump_fts reads LFT blocks [0, top/64) rounded down, so when LinearFDBTop is a
        multiple of 64 the entry of LID top is never shown: read that block with smpdump."""
        for g, top in self.lft_top.items():
            if top == 0 or top % 64 or g not in paths:
                continue
            r = sim.run(["smpdump", "-D", paths[g], "0x19", str(top // 64)], host=host, timeout=30)
            words = "".join(re.findall(r'\b[0-9a-fA-F]{4}\b', "\n".join(
                l for l in r.out.splitlines() if not l.startswith("SMP"))))
            if r.rc != 0 or len(words) < 2:
                self.errors.append(r.describe())
                continue
            self.lfts[g][top] = int(words[0:2], 16)

    # ------------------------------------------------------------ views

    def by_desc(self, desc):
        for n in self.nodes.values():
            if n.desc == desc:
                return n
        return None

    def switches(self):
        return [n for g, n in sorted(self.nodes.items()) if n.type == "SW"]

    def ca_ports(self):
        return [p for g, n in sorted(self.nodes.items()) if n.type != "SW" for _, p in sorted(n.ports.items())]

    def port(self, guid, num):
        n = self.nodes.get(guid)
        return n.ports.get(num) if n else None

    def resolve_target(self, target, start):
        """The node an SMP reaches: TARGET as SmpCounts gives it (('dr', path...) followed
        from node START, the SM's own node; ('lid', LID) looked up); None if unknown."""
        if target[0] == "lid":
            owners = self.lid_owners().get(target[1])
            return owners[0][1] if owners else None
        if len(target) > 2 or start is None:
            return None               # LID-routed part first: not followed here
        cur = start
        for p in target[1][1:]:
            port = cur.ports.get(p)
            cur = self.nodes.get(port.peer[0]) if port is not None else None
            if cur is None:
                return None
        return cur

    def links(self):
        """frozenset({(node guid, port), (node guid, port)}) for every link seen."""
        out = set()
        for n in self.nodes.values():
            for p in n.ports.values():
                out.add(frozenset([(n.guid, p.num), p.peer]))
        return out

    def lid_owners(self):
        """{lid: port} over all 2^LMC LIDs of CA ports and the LID of every switch (port 0
        of a switch is represented by the switch's first port object or None)."""
        own = {}
        for n in self.nodes.values():
            if n.type == "SW":
                if n.lid:
                    own.setdefault(n.lid, []).append(("SW", n, 0))
            else:
                for p in n.ports.values():
                    if p.lid:
                        for lid in range(p.lid, p.lid + (1 << p.lmc)):
                            own.setdefault(lid, []).append(("CA", n, p.num))
        return own

    def state(self):
        """Comparable state: LID, LMC and port state of every port, every LFT (for
        before/after checks)."""
        lids = {}
        for n in self.nodes.values():
            if n.type == "SW":
                lids[(n.guid, 0)] = (n.lid, n.lmc)
            for p in n.ports.values():
                lids[(n.guid, p.num)] = (p.lid, p.lmc, p.state) if n.type != "SW" else (p.state,)
        lfts = {g: bytes(t).rstrip(bytes([NO_PORT])) for g, t in self.lfts.items()}
        return lids, lfts

# ----------------------------------------------------------------------------- checks
# Each returns (ok, detail): detail is a short human text, shown as a TAP diagnostic.


def _examples(items, n=5):
    items = list(items)
    s = "; ".join(str(x) for x in items[:n])
    return s + (" (+%d more)" % (len(items) - n) if len(items) > n else "")


def check_collected(snap):
    if not snap.nodes:
        return False, "ibnetdiscover found no nodes: " + _examples(snap.errors, 2)
    if snap.errors:
        return False, "diag tools failed: " + _examples(snap.errors, 2)
    return True, "%d nodes" % len(snap.nodes)


def check_inventory(snap, net):
    """The diags see exactly the nodes (by NodeDescription) and links of the net file."""
    bad = []
    seen = {}
    for n in snap.nodes.values():
        seen[n.desc] = n
    byname = {net.desc[name]: name for name in net.nodes}
    for name, (typ, nports) in net.nodes.items():
        n = seen.get(net.desc[name])
        if n is None:
            bad.append("%s missing" % name)
        elif n.type != typ or n.nports != nports:
            bad.append("%s is %s with %d ports, file says %s with %d" % (name, n.type, n.nports, typ, nports))
    extra = [d for d in seen if d not in byname]
    if extra:
        bad.append("not in the file: %s" % _examples(extra, 3))
    have = set()
    for link in snap.links():
        ends = []
        for g, num in link:
            node = snap.nodes.get(g)
            ends.append((byname.get(node.desc, node.desc) if node else "%016x" % g, num))
        have.add(frozenset(ends))
    for link in net.links - have:
        bad.append("link %s missing" % " - ".join("%s[%d]" % e for e in sorted(link)))
    for link in have - net.links:
        bad.append("link %s not in the file" % " - ".join("%s[%d]" % e for e in sorted(link)))
    detail = "%d nodes, %d links" % (len(snap.nodes), len(have))
    return (not bad), (detail if not bad else "%d differences: %s" % (len(bad), _examples(bad)))


def check_ports_active(snap):
    """Every port with a link is ACTIVE, on both ends."""
    bad, total = [], 0
    for link in snap.links():
        for g, num in link:
            p = snap.port(g, num)
            total += 1
            if p is None:
                bad.append("%016x[%d] (not listed)" % (g, num))
            elif p.state != "Active":
                bad.append("%s %s" % (p.name(), p.state))
    return (not bad), ("%d linked ports ACTIVE" % total if not bad else
                       "%d of %d linked ports not ACTIVE: %s" % (len(bad), total, _examples(sorted(set(bad)))))


def check_lids(snap, lmc=None):
    """Every CA port and switch has a unicast LID, no LID is used twice (counting all 2^LMC
    LIDs of a CA port), CA base LIDs are aligned to 2^LMC, switches have LMC 0; with LMC
    given, every CA port has exactly that LMC."""
    bad = []
    owners = {}
    for n in sorted(snap.nodes.values(), key=lambda n: n.guid):
        ents = [(n.name(), n.lid, n.lmc, True)] if n.type == "SW" else \
            [(p.name(), p.lid, p.lmc, False) for _, p in sorted(n.ports.items())]
        for name, lid, plmc, is_sw in ents:
            if lid == 0 or lid >= 0xC000:
                bad.append("%s has no unicast LID (%d)" % (name, lid))
                continue
            if is_sw and plmc != 0:
                bad.append("switch %s has LMC %d" % (name, plmc))
            if not is_sw and lmc is not None and plmc != lmc:
                bad.append("%s has LMC %d, want %d" % (name, plmc, lmc))
            if not is_sw and lid % (1 << plmc):
                bad.append("%s LID %d not aligned to LMC %d" % (name, lid, plmc))
            for l in range(lid, lid + (1 if is_sw else 1 << plmc)):
                if l in owners:
                    bad.append("LID %d of %s and %s" % (l, owners[l], name))
                owners[l] = name
    return (not bad), ("%d LIDs, unique" % len(owners) if not bad else
                       "%d problems: %s" % (len(bad), _examples(bad)))


LOOP, WRONG, NO_ENTRY, NO_LINK, DOWN, TOO_LONG = "loop", "wrong delivery", "no LFT entry", \
    "out port without link", "port not ACTIVE", "over 64 hops"


class RouteReport:
    def __init__(self):
        self.pairs = 0
        self.delivered = 0
        self.failed = collections.Counter()        # kind -> pairs
        self.examples = collections.defaultdict(list)
        self.max_hops = 0
        self.hops = collections.Counter()          # links traversed -> pairs
        self.dest_lids = 0
        self.sources = 0
        self.per_lid = {}                          # destination LID -> [pairs, delivered]
        self.max_shortest = 0                      # longest shortest path of a delivered pair
        self.non_minimal = 0                       # delivered pairs longer than their shortest path

    def ok(self):
        return self.pairs > 0 and self.delivered == self.pairs

    def summary(self):
        s = "%d dest LIDs x %d source CA ports: %d pairs, %d delivered, max %d hops " \
            "(longest shortest path %d, %d pairs non-minimal)" % (
                self.dest_lids, self.sources, self.pairs, self.delivered, self.max_hops,
                self.max_shortest, self.non_minimal)
        for kind, cnt in sorted(self.failed.items()):
            s += "; %s %d (e.g. %s)" % (kind, cnt, _examples(self.examples[kind], 2))
        return s


def walk_routes(snap):
    """Follow the LFTs for every destination LID (all 2^LMC LIDs of every CA port and every
    switch LID) from every CA port attached to a switch. A pair is delivered, loops, ends in
    a black hole (no entry, out port without a link, a link not ACTIVE) or reaches the wrong
    port. Hops count links, CA port to destination port. Returns a RouteReport."""
    rep = RouteReport()
    sources = []                       # (CA port, its switch guid, switch port)
    for p in snap.ca_ports():
        sw = snap.nodes.get(p.peer[0])
        if sw is not None and sw.type == "SW":
            sources.append((p, sw.guid, p.peer[1]))
    rep.sources = len(sources)

    def active(port):
        peer = snap.port(*port.peer)
        return port.state == "Active" and peer is not None and peer.state == "Active"

    # switch-to-switch distances over ACTIVE links, for the shortest possible path of a pair
    adj = collections.defaultdict(set)
    for n in snap.switches():
        for p in n.ports.values():
            peer = snap.nodes.get(p.peer[0])
            if peer is not None and peer.type == "SW" and active(p):
                adj[n.guid].add(peer.guid)
    dist_cache = {}

    def distances(g):
        if g not in dist_cache:
            d = {g: 0}
            queue = collections.deque([g])
            while queue:
                v = queue.popleft()
                for w in adj[v]:
                    if w not in d:
                        d[w] = d[v] + 1
                        queue.append(w)
            dist_cache[g] = d
        return dist_cache[g]

    for lid, owners in sorted(snap.lid_owners().items()):
        if len(owners) != 1:
            continue                   # duplicate LIDs fail check_lids; no single right answer
        kind, dnode, dport = owners[0]
        rep.dest_lids += 1
        counts = rep.per_lid.setdefault(lid, [0, 0])
        dest_sw = dnode.guid if kind == "SW" else None
        if kind == "CA":
            peer = snap.nodes.get(dnode.ports[dport].peer[0])
            dest_sw = peer.guid if peer is not None and peer.type == "SW" else None
        dist = distances(dest_sw) if dest_sw is not None else {}
        memo = {}                      # switch guid -> (hops to the destination port, None) or (None, failure)

        def from_switch(g):
            path, seen = [], set()
            cur, res = g, None
            while True:
                if cur in memo:
                    res = memo[cur]
                    break
                if cur in seen:
                    res = (None, LOOP)
                    break
                if len(path) > 64:
                    res = (None, TOO_LONG)
                    break
                seen.add(cur)
                path.append(cur)
                lft = snap.lfts.get(cur, b"")
                out = lft[lid] if lid < len(lft) else NO_PORT
                node = snap.nodes[cur]
                if out == 0:
                    res = (0, None) if (kind == "SW" and dnode.guid == cur) else \
                        (None, "%s (to %s port 0)" % (WRONG, node.name()))
                    path.pop()
                    memo[cur] = res
                    break
                if out == NO_PORT:
                    res = (None, NO_ENTRY)
                    path.pop()
                    memo[cur] = res
                    break
                p = node.ports.get(out)
                if p is None:
                    res = (None, NO_LINK)
                    path.pop()
                    memo[cur] = res
                    break
                if not active(p):
                    res = (None, DOWN)
                    path.pop()
                    memo[cur] = res
                    break
                peer = snap.nodes.get(p.peer[0])
                if peer is None or peer.type != "SW":
                    ok = kind == "CA" and peer is not None and peer.guid == dnode.guid and p.peer[1] == dport
                    res = (1, None) if ok else (None, WRONG)
                    path.pop()
                    memo[cur] = res
                    break
                cur = peer.guid
            # unwind: each switch on the path is one more link away
            for s in reversed(path):
                if res[0] is not None:
                    res = (res[0] + 1, None)
                memo[s] = res
            return memo[g]

        for p, swg, swport in sources:
            if kind == "CA" and p.node.guid == dnode.guid and p.num == dport:
                continue               # a port does not route to itself
            rep.pairs += 1
            counts[0] += 1
            if not active(p):
                failure = DOWN
                hops = None
            else:
                hops, failure = from_switch(swg)
            if failure is None:
                hops += 1              # the CA port's own link to its switch
                rep.delivered += 1
                counts[1] += 1
                rep.hops[hops] += 1
                rep.max_hops = max(rep.max_hops, hops)
                if swg in dist:
                    shortest = dist[swg] + (2 if kind == "CA" else 1)
                    rep.max_shortest = max(rep.max_shortest, shortest)
                    if hops > shortest:
                        rep.non_minimal += 1
            else:
                base = failure.split(" (")[0]
                rep.failed[base] += 1
                if len(rep.examples[base]) < 3:
                    rep.examples[base].append("%s -> LID %d (%s %s)" % (p.name(), lid, kind, dnode.name()))
    return rep


def check_routes(snap, rep=None, minimal=False):
    """Every (source CA port, destination LID) pair delivered, no route longer than the
    longest shortest path of the fabric (its diameter between ports); with MINIMAL, every
    route a shortest path. REP: a walk_routes() result to reuse."""
    rep = rep or walk_routes(snap)
    ok = rep.ok() and rep.max_hops <= rep.max_shortest and not (minimal and rep.non_minimal)
    detail = rep.summary()
    if rep.max_hops > rep.max_shortest:
        detail += "; routes longer than the longest shortest path"
    return ok, detail


def route_links(snap, src, lid, limit=64):
    """The directed switch-to-node links (switch guid, out port) a packet from SRC (a CA port,
    or a switch Node) to LID crosses, following the LFTs; (links, delivered). The CA port's
    own link is not listed."""
    links = []
    if isinstance(src, Node):
        cur = src.guid
    else:
        peer = snap.nodes.get(src.peer[0]) if src.peer else None
        cur = peer.guid if peer is not None and peer.type == "SW" else None
    while cur is not None and len(links) < limit:
        node = snap.nodes[cur]
        lft = snap.lfts.get(cur, b"")
        out = lft[lid] if lid < len(lft) else NO_PORT
        port = node.ports.get(out)
        if out == 0:
            return links, node.lid == lid
        if out == NO_PORT or port is None:
            return links, False
        links.append((cur, out))
        nxt = snap.nodes.get(port.peer[0])
        if nxt is None:
            return links, False
        if nxt.type != "SW":
            dst = nxt.ports.get(port.peer[1])
            return links, dst is not None and dst.lid <= lid < dst.lid + (1 << dst.lmc)
        cur = nxt.guid
    return links, False


class ShiftReport:
    """Link load of the shift permutations: worst (the highest number of routes any directed
    link carries in any shift), per_shift {shift: its highest load}, example (a text naming
    the worst link), undelivered (pairs whose route was not delivered), n (CA ports)."""

    def __init__(self):
        self.worst, self.per_shift, self.example, self.undelivered, self.n = 0, {}, "", 0, 0

    def summary(self):
        if not self.n:
            return "no CA ports"
        hist = collections.Counter(self.per_shift.values())
        return "%d CA ports, shifts 1..%d: worst link load %d (%s); shifts by their worst load: %s%s" % (
            self.n, self.n - 1, self.worst, self.example,
            ", ".join("%d: %d" % kv for kv in sorted(hist.items())),
            "; %d routes not delivered" % self.undelivered if self.undelivered else "")


def shift_loads(snap, order=None):
    """Every shift permutation of the CA ports (ORDER, default: sorted by port GUID; None
    entries are holes: slots without a port, which neither send nor receive): port i
    sends to port (i + s) mod N at its base LID, s = 1..N-1; the load of a directed link is the
    number of those N routes crossing it (switch out ports, followed through the LFTs read
    back). On a full non-blocking fat tree a good routing keeps every load at 1."""
    ports = order if order is not None else sorted(snap.ca_ports(), key=lambda p: (p.guid, p.num))
    rep = ShiftReport()
    rep.n = n = len(ports)
    cache = {}
    for s in range(1, n):
        load = collections.Counter()
        for i, src in enumerate(ports):
            dst = ports[(i + s) % n]
            if src is None or dst is None:
                continue               # a hole of ORDER (a slot without a CA port)
            if not (src.lid and src.peer and dst.lid):
                rep.undelivered += 1
                continue
            key = (src.guid, src.num, dst.lid)
            if key not in cache:
                cache[key] = route_links(snap, src, dst.lid)
            links, ok = cache[key]
            if not ok:
                rep.undelivered += 1
            load.update(links)
        top = max(load.values()) if load else 0
        rep.per_shift[s] = top
        if top > rep.worst:
            (g, port), _ = load.most_common(1)[0]
            rep.worst = top
            rep.example = "shift %d: %s port %d carries %d routes" % (s, snap.nodes[g].name(), port, top)
    return rep


def check_shift(snap, want, order=None):
    """(ok, detail): every route of every shift permutation delivered and the worst link load
    at most WANT."""
    rep = shift_loads(snap, order)
    return (rep.n > 1 and rep.worst <= want and not rep.undelivered), rep.summary()


def switch_ranks(snap, roots):
    """{switch guid: distance from the nearest of ROOTS (switch guids)} over switch links."""
    rank = {g: 0 for g in roots if g in snap.nodes}
    queue = collections.deque(rank)
    while queue:
        g = queue.popleft()
        for p in snap.nodes[g].ports.values():
            peer = snap.nodes.get(p.peer[0])
            if peer is not None and peer.type == "SW" and peer.guid not in rank:
                rank[peer.guid] = rank[g] + 1
                queue.append(peer.guid)
    return rank


def updown_turns(snap, links, rank):
    """The rank directions of the switch-to-switch hops of LINKS (from route_links):
    a string of 'u' (toward a root: lower rank, or the same rank and a lower GUID) and 'd'."""
    out = []
    for g, port in links:
        peer = snap.nodes[g].ports[port].peer[0]
        if snap.nodes.get(peer) is None or snap.nodes[peer].type != "SW":
            continue
        out.append("u" if _is_up(rank, g, peer) else "d")
    return "".join(out)


def _is_up(rank, a, b):
    """The hop from switch A to switch B goes up: toward a root (lower rank), or on the same
    rank toward the lower GUID."""
    return (rank.get(b, 1 << 30), b) < (rank.get(a, 1 << 30), a)


def updown_reachable(snap, rank, src):
    """The switches reachable from switch SRC by an up*down* path (never up after down)."""
    seen = {(src, 0)}
    queue = collections.deque(seen)
    while queue:
        g, down = queue.popleft()
        for p in snap.nodes[g].ports.values():
            w = snap.nodes.get(p.peer[0])
            if w is None or w.type != "SW" or p.state not in (None, "Active"):
                continue
            up = _is_up(rank, g, w.guid)
            if down and up:
                continue
            st = (w.guid, 0 if up and not down else 1)
            if st not in seen:
                seen.add(st)
                queue.append(st)
    return {g for g, _ in seen}


class UpDownReport:
    """Up/down turns of the routes read back, for a given set of root switches.
    ca_turns: CA-to-CA routes (every LID of every CA port, from every CA port) that go down
    and then up; sw_turns: switch-to-switch-LID routes that do; sw_needed: switch pairs with
    no up*/down* path at all (only those may need such a turn); pairs: routes looked at."""

    def __init__(self):
        self.ca_turns, self.sw_turns, self.sw_needed = [], set(), set()
        self.pairs = 0

    def summary(self):
        extra = self.sw_turns - self.sw_needed
        return "%d routes: %d CA-to-CA routes turn up after down%s; %d switch-LID routes do, %d switch " \
            "pairs have no up/down path%s" % (
                self.pairs, len(self.ca_turns), " (e.g. %s)" % _examples(self.ca_turns, 2) if self.ca_turns else "",
                len(self.sw_turns), len(self.sw_needed),
                "; %d of them where an up/down path exists (e.g. %s)" % (len(extra), _examples(sorted(extra), 2))
                if extra else "")


def updown_report(snap, roots):
    """The UpDownReport of SNAP with ROOTS (switch GUIDs; ranks by distance from them)."""
    rank = switch_ranks(snap, roots)
    rep = UpDownReport()
    owners = snap.lid_owners()
    ca_lids = [l for l, o in owners.items() if len(o) == 1 and o[0][0] == "CA"]
    for src in snap.ca_ports():
        for lid in ca_lids:
            o = owners[lid][0]
            if o[1].guid == src.node.guid and o[2] == src.num:
                continue
            links, _ = route_links(snap, src, lid)
            rep.pairs += 1
            if "du" in updown_turns(snap, links, rank):
                rep.ca_turns.append("%s -> LID %d" % (src.name(), lid))
    switches = snap.switches()
    for s in switches:
        reach = updown_reachable(snap, rank, s.guid)
        for d in switches:
            if d is s or not d.lid:
                continue
            links, _ = route_links(snap, s, d.lid)
            rep.pairs += 1
            if d.guid not in reach:
                rep.sw_needed.add((s.name(), d.name()))
            if "du" in updown_turns(snap, links, rank):
                rep.sw_turns.add((s.name(), d.name()))
    return rep


def ca_cdg_cycle(snap):
    """Channel dependency graph of every CA port to every LID of every CA port, following the
    LFTs. Channels are directed links (node guid, out port). Returns None when acyclic, else a
    short text naming a cycle; also a text when a route cannot be followed."""
    owners = snap.lid_owners()
    ca_lids = sorted(l for l, o in owners.items() if len(o) == 1 and o[0][0] == "CA")
    deps = {}
    for src in snap.ca_ports():
        if src.peer is None:
            continue
        for lid in ca_lids:
            if owners[lid][0][1].guid == src.node.guid and owners[lid][0][2] == src.num:
                continue
            chan = (src.node.guid, src.num)
            guid, _ = src.peer
            for _ in range(64):
                node = snap.nodes.get(guid)
                if node is None or node.type != "SW":
                    break
                lft = snap.lfts.get(guid)
                out = lft[lid] if lft is not None and lid < len(lft) else NO_PORT
                port = node.ports.get(out)
                if port is None or port.peer is None:
                    return "LID %d from %s: no route at %s" % (lid, src.name(), node.name())
                nxt = (guid, out)
                deps.setdefault(chan, set()).add(nxt)
                chan = nxt
                guid = port.peer[0]
            else:
                return "LID %d from %s: loop" % (lid, src.name())
    cyc = find_cycle(deps)
    if cyc is None:
        return None
    return "cycle: " + " -> ".join("%s[%d]" % (snap.nodes[c[0]].name(), c[1]) for c in cyc)


def find_cycle(deps):
    """One cycle (its first 12 channels, in order) of the dependency graph DEPS ({channel: set
    of channels}), or None when it is acyclic."""
    color, parent = {}, {}
    for start in deps:
        if start in color:
            continue
        stack = [(start, iter(deps.get(start, ())))]
        color[start] = 1
        while stack:
            v, it = stack[-1]
            w = next(it, None)
            if w is None:
                color[v] = 2
                stack.pop()
                continue
            if color.get(w) == 1:
                cyc, x = [w], v
                while x != w and len(cyc) < 12:
                    cyc.append(x)
                    x = parent[x]
                return list(reversed(cyc))
            if w not in color:
                color[w] = 1
                parent[w] = v
                stack.append((w, iter(deps.get(w, ()))))
    return None


def read_sl2vl(sim, snap, host=None):
    """{switch guid: {(in, out): [16 VLs]}} of every switch output port with a link, as the
    switches hold them (smpquery sl2vl LID OUT: every input port's table towards OUT)."""
    out = {}
    for sw in snap.switches():
        tab = {}
        for p in sorted(sw.ports):
            if sw.ports[p].peer is None:
                continue
            r = sim.run(["smpquery", "sl2vl", str(sw.lid), str(p)], host=host, timeout=20)
            for m in re.finditer(r"ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})", r.out):
                tab[(int(m.group(1)), int(m.group(2)))] = [int(x) for x in m.group(3).split("|") if x.strip()]
        out[sw.guid] = tab
    return out


def path_sls(sim, host=None):
    """{(SLID, DLID): SL} of every PathRecord the SA gives (one GetTable: saquery -p with the
    RMPP library; needs a running SM started with it too: start_sm(env=sim.env(rmpp=True)))."""
    r = sim.run(["saquery", "-p"], host=host, timeout=60, env=sim.env(host, rmpp=True))
    got = {}
    for rec in r.out.split("PathRecord dump:")[1:]:
        f = dict(re.findall(r"(\w+)\.+(\S+)", rec))
        try:
            got[(int(f["slid"], 0), int(f["dlid"], 0))] = int(f["sl"], 0)
        except (KeyError, ValueError):
            continue
    return got


class VlReport:
    """The (link, VL) channel dependency graph of every CA port to every LID of every CA port:
    routes (pairs walked), vls (VLs used), missing (pairs the SA gave no SL for: SL 0 taken),
    cycle (a text naming one cycle, or None), error (a route that cannot be followed)."""

    def __init__(self):
        self.routes, self.vls, self.missing, self.cycle, self.error = 0, set(), 0, None, None

    def ok(self):
        return self.routes > 0 and self.cycle is None and self.error is None

    def summary(self):
        return "%d CA-to-CA routes over VLs %s (%d without a PathRecord SL: SL 0)%s" % (
            self.routes, ",".join(map(str, sorted(self.vls))) or "none", self.missing,
            "; " + (self.error or self.cycle) if (self.error or self.cycle) else ": no credit loop")


def vl_credit_loops(snap, sl2vl, sls):
    """VlReport of SNAP's tables with the SL of each route from SLS ({(SLID, DLID): SL}, e.g.
    path_sls) and the VL of each hop from SL2VL (read_sl2vl; a missing table: VL = SL): the
    credit-loop check of doc/chains.md from outside, as routing/deadlock.c does inside."""
    rep = VlReport()
    owners = snap.lid_owners()
    ca_lids = sorted(l for l, o in owners.items() if len(o) == 1 and o[0][0] == "CA")
    deps = {}
    for src in snap.ca_ports():
        if src.peer is None or not src.lid:
            continue
        for lid in ca_lids:
            if owners[lid][0][1].guid == src.node.guid and owners[lid][0][2] == src.num:
                continue
            rep.routes += 1
            sl = sls.get((src.lid, lid))
            if sl is None:
                rep.missing += 1
                sl = 0
            guid, inp = src.peer
            prev = None
            for _ in range(64):
                node = snap.nodes.get(guid)
                if node is None or node.type != "SW":
                    break
                lft = snap.lfts.get(guid, b"")
                out = lft[lid] if lid < len(lft) else NO_PORT
                port = node.ports.get(out)
                if port is None or port.peer is None:
                    rep.error = "%s -> LID %d: no route at %s" % (src.name(), lid, node.name())
                    return rep
                vl = sl2vl.get(guid, {}).get((inp, out), list(range(16)))[sl]
                rep.vls.add(vl)
                chan = (guid, out, vl)
                if prev is not None:
                    deps.setdefault(prev, set()).add(chan)
                prev = chan
                guid, inp = port.peer
            else:
                rep.error = "%s -> LID %d: loop" % (src.name(), lid)
                return rep
    cyc = find_cycle(deps)
    if cyc is not None:
        rep.cycle = "cycle: " + " -> ".join("%s[%d] VL %d" % (snap.nodes[g].name(), p, v) for g, p, v in cyc)
    return rep


def check_switch_routes(snap):
    """Every switch reaches every LID of every CA port through the LFTs, over ACTIVE links:
    the way its traps and its answers to LID-routed SMPs go back to an SM or a diag."""
    bad, n = [], 0
    for sw in snap.switches():
        for p in snap.ca_ports():
            for lid in range(p.lid, p.lid + (1 << p.lmc)) if p.lid else ():
                n += 1
                links, ok = route_links(snap, sw, lid)
                if ok:
                    ok = all(snap.nodes[g].ports[o].state == "Active" for g, o in links)
                if not ok:
                    bad.append("%s -> LID %d (%s)" % (sw.name(), lid, p.name()))
    return (n > 0 and not bad), ("%d switch-to-CA-LID routes delivered" % n if not bad else
                                 "%d of %d switch-to-CA-LID routes not delivered: %s" % (len(bad), n, _examples(bad)))


def check_unchanged(before, after):
    """LIDs, LMCs, port states and LFTs equal in two snapshots."""
    lb, fb = before.state()
    la, fa = after.state()
    bad = []
    for k in sorted(set(lb) | set(la)):
        if lb.get(k) != la.get(k):
            bad.append("port %016x[%d] LID/LMC/state %s -> %s" % (k[0], k[1], lb.get(k), la.get(k)))
    for g in sorted(set(fb) | set(fa)):
        x, y = fb.get(g), fa.get(g)
        if x != y:
            n = max(len(x or b""), len(y or b""))
            diff = [l for l in range(n) if (x[l] if x and l < len(x) else NO_PORT) !=
                    (y[l] if y and l < len(y) else NO_PORT)]
            bad.append("LFT of %016x: %d entries changed (LID %s)" % (g, len(diff), diff[:4]))
    return (not bad), ("no LID, port state or LFT changed" if not bad else
                       "%d changes: %s" % (len(bad), _examples(bad)))

def sm_port(sim, snap, host=None):
    """The port the SM on HOST (default the sim's host) is bound to: its first port."""
    node = sim.node(snap, host or sim.host)
    return node.ports[min(node.ports)] if node is not None and node.ports else None


def read_portinfo(sim, targets, host=None):
    """{(lid, port): {field: text}} from `smpquery portinfo LID PORT` for each (lid, port) of
    TARGETS (port None: the CA port the LID belongs to), four at a time; None where it failed."""
    from concurrent.futures import ThreadPoolExecutor

    def one(t):
        lid, port = t
        r = sim.run(["smpquery", "portinfo", str(lid)] + ([] if port is None else [str(port)]),
                    host=host, timeout=30)
        if r.rc != 0:
            return t, None
        return t, dict(re.findall(r"^(\w+):\.*(\S.*?)\s*$", r.out, re.M))
    with ThreadPoolExecutor(4) as ex:
        return dict(ex.map(one, list(targets)))


def check_sm_lid(sim, snap, host=None):
    """Every CA port and every switch's port 0 names the SM as its master: PortInfo SMLid
    (MasterSMLID) equals the LID of the SM's port (the first port of HOST, default the sim's
    host), as smpquery reads it."""
    me = sm_port(sim, snap, host)
    if me is None or not me.lid:
        return False, "the SM's port has no LID"
    targets = [(p.lid, None) for p in snap.ca_ports() if p.lid] + [(n.lid, 0) for n in snap.switches() if n.lid]
    got = read_portinfo(sim, targets, host)
    bad = ["LID %d%s: %s" % (lid, "" if port is None else " port 0",
                             "unreadable" if pi is None else "SMLid %s" % pi.get("SMLid"))
           for (lid, port), pi in sorted(got.items()) if pi is None or pi.get("SMLid") != str(me.lid)]
    return (bool(targets) and not bad), ("%d ports name SM LID %d" % (len(targets), me.lid) if not bad else
                                         "%d of %d ports do not name SM LID %d: %s" % (
                                             len(bad), len(targets), me.lid, _examples(bad)))

# ----------------------------------------------------------------------------- opensm-subnet.lst


LST_NODE_RE = re.compile(r'\{\s*(\S+)\s+Ports:([0-9a-fA-F]+)\s+SystemGUID:([0-9a-fA-F]+)\s+NodeGUID:([0-9a-fA-F]+)'
                         r'\s+PortGUID:([0-9a-fA-F]+).*?PN:([0-9a-fA-F]+)\s*\}')


def parse_subnet_lst(text):
    """opensm-subnet.lst -> (nodes {node guid: (type, nports)}, ports {(node guid, num): port guid},
    links {frozenset of two (node guid, num)}, errors). LIDs and link states are ignored;
    the type drops OpenSM's '-SM' marker of the SM's own node."""
    nodes, ports, links, errors = {}, {}, set(), []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        ends = LST_NODE_RE.findall(line)
        if len(ends) != 2:
            errors.append("line %d: %r" % (i, line[:120]))
            continue
        pair = []
        for typ, np, _sys, ng, pg, pn in ends:
            ng, num = int(ng, 16), int(pn, 16)
            t = typ.split("-")[0]
            if nodes.setdefault(ng, (t, int(np, 16))) != (t, int(np, 16)):
                errors.append("line %d: node %016x described twice differently" % (i, ng))
            ports[(ng, num)] = int(pg, 16)
            pair.append((ng, num))
        links.add(frozenset(pair))
    return nodes, ports, links, errors


def compare_models(a, b, a_name="a", b_name="b"):
    """Compare two parse_subnet_lst() results: node GUIDs (type, ports), port GUIDs, links."""
    na, pa, la, _ = a
    nb, pb, lb, _ = b
    bad = []
    for what, x, y in (("node", na, nb), ("port", pa, pb)):
        for k in sorted(set(x) - set(y), key=str)[:5]:
            bad.append("%s %s only in %s" % (what, _key(k), a_name))
        for k in sorted(set(y) - set(x), key=str)[:5]:
            bad.append("%s %s only in %s" % (what, _key(k), b_name))
        for k in sorted(set(x) & set(y), key=str):
            if x[k] != y[k]:
                bad.append("%s %s: %s in %s, %s in %s" % (what, _key(k), _fmt(x[k]), a_name, _fmt(y[k]), b_name))
    for l in list(la - lb)[:5]:
        bad.append("link %s only in %s" % (_link(l), a_name))
    for l in list(lb - la)[:5]:
        bad.append("link %s only in %s" % (_link(l), b_name))
    if not na:
        bad.append("%s is empty" % a_name)
    return (not bad), ("%d nodes, %d ports, %d links agree" % (len(na), len(pa), len(la)) if not bad else
                       "%d differences: %s" % (len(bad), _examples(bad, 8)))


def _key(k):
    return "%016x[%d]" % k if isinstance(k, tuple) else "%016x" % k


def _fmt(v):
    return "%016x" % v if isinstance(v, int) else str(v)


def _link(l):
    return " - ".join(_key(e) for e in sorted(l))


def snapshot_model(snap):
    """The same shape as parse_subnet_lst(), from what ibnetdiscover saw."""
    nodes, ports = {}, {}
    for n in snap.nodes.values():
        nodes[n.guid] = (n.type, n.nports)
        for p in n.ports.values():
            ports[(n.guid, p.num)] = p.guid
    return nodes, ports, snap.links(), []

# ----------------------------------------------------------------------------- scratch


class Scratch:
    """A temporary directory removed at the end (kept with IBSM_SIM_KEEP=1)."""

    def __init__(self, prefix="ibsm-sim."):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        _live.append(self)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, argv, timeout=60, env=None, **extra_env):
        """Run a command from this directory, without the simulator (no LD_PRELOAD)."""
        e = dict(env or os.environ)
        e.pop("LD_PRELOAD", None)
        e.update({k: str(v) for k, v in extra_env.items()})
        return run(argv, env=e, cwd=self.dir, timeout=timeout)

    def stop(self):
        if self in _live:
            _live.remove(self)
        if os.environ.get("IBSM_SIM_KEEP"):
            print("# kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


# ----------------------------------------------------------------------------- TAP


class Tap:
    """TAP output for prove: plan, ok/not ok with diagnostics, skip, bail out. Sets an alarm
    of TIMEOUT seconds after which everything is stopped and the test bails out."""

    def __init__(self, plan=None, timeout=120):
        self.n = 0
        self.failed = 0
        self.planned = plan
        self._plan_printed = False     # printed with the first line, so skip_all can still come first
        if timeout:
            signal.alarm(int(patience(timeout)))
        atexit.register(self._finish)

    def _out(self, line):
        if not self._plan_printed and self.planned is not None:
            self._plan_printed = True
            print("1..%d" % self.planned)
        print(line)
        sys.stdout.flush()

    def ok(self, cond, name, diag=None, todo=None):
        """One test. TODO: a known defect (its text follows TAP's '# TODO'): a failure is
        reported but does not fail the script, and prove reports it when it passes."""
        self.n += 1
        self._out("%sok %d - %s%s" % ("" if cond else "not ", self.n, name.replace("#", "\\#"),
                                       " # TODO %s" % todo.replace("#", "") if todo else ""))
        if not cond:
            if not todo:
                self.failed += 1
            self.diag("Failed %stest '%s'" % ("(TODO) " if todo else "", name))
            if diag:
                self.diag(diag)
        return bool(cond)

    def check(self, name, result):
        """ok() on a (ok, detail) pair; the detail is a note on success, a diagnostic on failure."""
        ok, detail = result
        if ok and detail:
            self.note("%s: %s" % (name, detail))
        return self.ok(ok, name, detail)

    def is_(self, got, want, name, diag=None):
        return self.ok(got == want, name, "got: %r\nwant: %r%s" % (got, want, "\n" + diag if diag else ""))

    def skip(self, name, reason, count=1):
        for _ in range(count):
            self.n += 1
            self._out("ok %d - %s # SKIP %s" % (self.n, name, reason))

    def diag(self, msg):
        """To stderr (shown by prove without -v)."""
        sys.stdout.flush()
        for line in str(msg).splitlines():
            print("# " + line, file=sys.stderr)
        sys.stderr.flush()

    def note(self, msg):
        for line in str(msg).splitlines():
            self._out("# " + line)

    def skip_all(self, reason):
        """Skip the whole script (only before any test ran)."""
        self._plan_printed = True
        self.planned = 0
        self._out("1..0 # SKIP %s" % reason)
        cleanup()
        sys.exit(0)

    def fail_all(self, reason):
        """One failing test naming REASON, then exit (only before any test ran): a missing
        prerequisite fails the run, it is not skipped."""
        self._plan_printed = True
        self.planned = 1
        print("1..1")
        self.ok(False, "prerequisites", reason)
        cleanup()
        sys.exit(1)

    def bail_out(self, reason):
        """This test cannot go on: a failure of its own (not TAP's "Bail out!", which would end
        every test prove runs beside it, and leave them orphaned under -j2)."""
        self._out("not ok - %s: this test stops here" % reason)
        cleanup()
        os._exit(255)

    def done(self):
        """Print the plan if none was given; exit with the number of failures (TAP::Harness
        also checks the count)."""
        if self.planned is None:
            self.planned = self.n
            self._plan_printed = True
            self._out("1..%d" % self.n)
        elif not self._plan_printed:
            self._out("# no tests ran")
        cleanup()
        sys.exit(min(self.failed, 254))

    def _finish(self):
        if self.planned is not None and self.planned != self.n and self.planned != 0:
            print("# planned %d tests but ran %d" % (self.planned, self.n), file=sys.stderr)


def start(plan=None, timeout=120, need=()):
    """Common preamble of a .t: a Tap; a missing external tool (`make deps` installs them
    all) is a failing test that names it, never a skip; bail out when the SM binary or the
    SMP counter (both built by `make all`) is missing."""
    tap = Tap(plan, timeout)
    miss = missing_prerequisites(need)
    if miss:
        tap.fail_all("missing %s (run make deps)" % ", ".join(miss))
    if not sm_override() and not os.access(ibsm_path(), os.X_OK):
        tap.bail_out("%s not built (run make)" % ibsm_path())
    if not os.path.isfile(smpcount_path()):
        tap.bail_out("%s not built (run make)" % smpcount_path())
    return tap


def fabric_checks(tap, sim, net=None, lmc=None, diag_log=None, todo=None, switches=False):
    """The standard verdict on a configured fabric, one TAP test each: diags ran, inventory
    equals the net file, every linked port ACTIVE, LIDs, routes from every CA port, and with
    SWITCHES routes from every switch to every CA LID (6 tests, else 5). Returns (snapshot,
    report). DIAG_LOG: a log whose tail is shown when a check fails. TODO: {check number
    (0-5): reason} for known defects."""
    snap = sim.collect()
    rep = walk_routes(snap)
    results = [("diags read the fabric", check_collected(snap)),
               ("nodes and links as in %s" % os.path.basename((net or sim.netfile).path),
                check_inventory(snap, net or sim.netfile)),
               ("every linked port ACTIVE", check_ports_active(snap)),
               ("LIDs assigned, unique, aligned" + ("" if lmc is None else " (LMC %d)" % lmc),
                check_lids(snap, lmc)),
               ("every source CA port reaches every destination LID", check_routes(snap, rep))]
    if switches:
        results.append(("every switch reaches every CA port LID (traps, answers to LID-routed SMPs)",
                        check_switch_routes(snap)))
    failed = False
    for i, (name, res) in enumerate(results):
        reason = (todo or {}).get(i)
        ok, detail = res
        if reason:
            tap.ok(ok, name, detail, todo=reason)
        else:
            failed |= not tap.check(name, res)
    if failed and diag_log:
        tap.diag("last lines of the SM log:\n%s" % tail(diag_log, 15))
    return snap, rep


def need_fabric(tap, name):
    """Path of tests/fabrics/NAME; a failing test and exit when it does not exist."""
    path = fabric(name)
    if not os.path.isfile(path):
        tap.ok(False, "fabric %s exists" % name, "no such file: %s" % path)
        tap.done()
    return path


def bringup_test(fabric_name, args=(), timeout=120):
    """The whole of a plain bring-up test: ibsm --once [ARGS] on tests/fabrics/FABRIC_NAME
    exits 0, every port names it as master, then every fabric check (8 TAP lines)."""
    tap = start(plan=8, timeout=timeout, need=("smpquery",))
    net = need_fabric(tap, fabric_name)
    with Sim(net) as sim:
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log] + list(args), timeout=60)
        tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once exits 0", r.describe())
        snap, _ = fabric_checks(tap, sim, diag_log=log, switches=True)
        tap.check("every end port's PortInfo names the SM (SMLid)", check_sm_lid(sim, snap))
    tap.done()

# ----------------------------------------------------------------------------- multicast
# The switches' MFTs are read with tests/clients/mft_read (SubnGet(MulticastForwardingTable) by
# LID); a copy is then flooded from every member along the port masks, never back out of the
# port it came in by, as a switch forwards: every other member must get exactly one copy, no
# switch may be entered twice by one flood (a loop), and no mask bit may point at a port
# without a link.

def read_mfts(sim, snap, host=None, blocks=4):
    """{switch guid: {mlid: set(ports)}} as the switches hold them (MLIDs 0xC000 + 32*blocks)."""
    tool = os.path.join(build_dir(), "tests", "clients", "mft_read")
    out = {}
    for node in snap.nodes.values():
        if node.type != "SW":
            continue
        r = sim.run([tool, str(node.lid), str(node.nports), str(blocks)], host=host, timeout=30)
        table = {}
        for line in r.out.splitlines():
            f = line.split()
            if f and f[0].startswith("0x"):
                table[int(f[0], 16)] = set(int(p) for p in f[1:])
        out[node.guid] = table
    return out


def mcast_flood(snap, mfts, mlid, members):
    """Floods MLID from each member (CA port GUIDs); returns (ok, why, reached) where reached
    maps each sender to the CA port GUIDs its copy reached (with counts)."""
    port_of = {}
    for node in snap.nodes.values():
        if node.type != "SW":
            for p in node.ports.values():
                port_of[p.guid] = p
    why, reached = [], {}
    for m in sorted(members):
        p = port_of.get(m)
        if not p or not p.peer:
            why.append("member %016x is not linked" % m)
            continue
        got = collections.Counter()
        seen = set()
        queue = [p.peer]                   # (switch guid, ingress port)
        while queue:
            sw, ingress = queue.pop()
            if sw in seen:
                why.append("MLID 0x%04x from %016x: switch %016x entered twice (a loop)" % (mlid, m, sw))
                continue
            seen.add(sw)
            node = snap.nodes[sw]
            for out in sorted(mfts.get(sw, {}).get(mlid, ())):
                if out == ingress or out == 0:
                    continue
                q = node.ports.get(out)
                if not q or not q.peer:
                    why.append("MLID 0x%04x: switch %s port %d has no link" % (mlid, node.name(), out))
                    continue
                peer = snap.nodes[q.peer[0]]
                if peer.type == "SW":
                    queue.append(q.peer)
                else:
                    got[peer.ports[q.peer[1]].guid] += 1
        reached[m] = got
        for other in members:
            if other != m and got[other] != 1:
                why.append("MLID 0x%04x: %016x -> %016x: %d copies" % (mlid, m, other, got[other]))
        if got[m]:
            why.append("MLID 0x%04x: %016x got its own copy back" % (mlid, m))
    return not why, "; ".join(why[:6]), reached
