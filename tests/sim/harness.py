"""harness.py - the simulated-fabric test bed of ibsm's tests/sim/*.t scripts.

The SM is judged from outside, with infiniband-diags, never with its own view: a private
ibsim per test, the SM and the diags attached through libumad2sim.so, then port states,
LIDs and a walk of every switch's LFT for every (source CA port, destination LID) pair.
Python 3 standard library only. Every process started here is stopped by its pid, also on
an exception, SIGTERM/SIGINT/SIGHUP or the per-test alarm.

Environment knobs (for development only; `make sim` needs none of them):
  IBSM_BUILD        build directory holding ibsm (default <repo>/build)
  IBSM_SM_CMD       command line used instead of <build>/ibsm, e.g. "opensm -e -d 2",
                    to validate the tests themselves against a known-good SM
  IBSM_SIM_FABRICS  directory used instead of <repo>/tests/fabrics
  IBSM_SIM_KEEP=1   keep the scratch directories (their paths are printed as TAP notes)
"""

import atexit
import collections
import ctypes
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NO_PORT = 255

# ----------------------------------------------------------------------------- paths


def build_dir():
    return os.environ.get("IBSM_BUILD") or os.path.join(REPO, "build")


def ibsm_path():
    return os.path.join(build_dir(), "ibsm")


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
        print("Bail out! test timed out")
        sys.stdout.flush()
        os._exit(255)
    os._exit(128 + signum)


atexit.register(cleanup)
for _s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
    signal.signal(_s, _on_signal)


def stop_pid(popen, term_wait=5.0):
    """Stop one process we started: SIGTERM, then SIGKILL; returns its exit status."""
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
    """Run a command to completion (stopped by pid after TIMEOUT seconds)."""
    t0 = time.time()
    try:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                             text=True, errors="replace", preexec_fn=_child_setup)
    except OSError as e:
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
    return Result(argv, p.returncode, out, err, timed_out, time.time() - t0)


class _Proc:
    def __init__(self, popen):
        self.popen = popen

    def stop(self):
        return stop_pid(self.popen)


class Background:
    """A process running in the background (an SM): output to a file, stopped by pid."""

    def __init__(self, argv, env, cwd, outfile):
        self.argv, self.outfile = argv, outfile
        self._out = open(outfile, "w")
        self.popen = subprocess.Popen(argv, env=env, cwd=cwd, stdout=self._out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, preexec_fn=_child_setup)
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
        return rc

    def output(self):
        return read(self.outfile)

    def wait_for(self, path, pattern, timeout=30.0):
        """Wait until regex PATTERN appears in file PATH (or our output if PATH is None)
        while the process runs. Returns True if it appeared."""
        rx = re.compile(pattern)
        end = time.time() + timeout
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
        end = time.time() + ready_timeout
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
        end = time.time() + timeout
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

    def stop(self):
        """Stop ibsim (console Quit, then SIGTERM/SIGKILL by pid), remove the scratch dir."""
        if self in _live:
            _live.remove(self)
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.write(self._fifo_fd, b"Quit\n")
                self.proc.wait(2)
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

    def env(self, host=None, **extra):
        """Environment of a client attached at HOST (a CA name; default the first CA)."""
        env = dict(os.environ)
        env.update(IBSIM_SOCKNAME=self.sockname, SIM_HOST=host or self.host,
                   LD_PRELOAD=self.umad2sim, OSM_TMP_DIR=self.osmdir, OSM_CACHE_DIR=self.osmdir)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run(self, argv, host=None, timeout=60, env=None):
        """Run a client (a diag, the SM) attached to this fabric, from the scratch dir."""
        exe = which(argv[0]) if "/" not in argv[0] else argv[0]
        return run([exe or argv[0]] + list(argv[1:]), env=env or self.env(host), cwd=self.rundir,
                   timeout=timeout)

    def run_sm(self, args, timeout=60, host=None, env=None):
        """Run the SM (ibsm, or IBSM_SM_CMD) with ARGS to completion; returns a Result."""
        return self.run(sm_cmd() + list(args), host=host, timeout=timeout, env=env)

    def start_sm(self, args, host=None, env=None, cmd=None, name="sm"):
        """Start the SM (or CMD, an argv prefix) in the background; returns a Background."""
        argv = (cmd or sm_cmd()) + list(args)
        return Background(argv, env or self.env(host), self.rundir, self.path("%s.out" % name))

    def collect(self, host=None):
        """Read the fabric with infiniband-diags; returns a Snapshot."""
        return Snapshot.collect(self, host)

    def node(self, snap, name):
        """The snapshot's node for net-file node NAME (matched by its NodeDescription)."""
        return snap.by_desc(self.netfile.desc.get(name, name))

    def sminfo(self, host=None):
        """`sminfo` from HOST: (guid, lid, state) of the master SM, or None and the Result."""
        r = self.run(["sminfo"], host=host, timeout=20)
        m = re.search(r'sm lid (\d+) sm guid (0x[0-9a-fA-F]+).*?state (\d+)', r.out)
        if r.rc != 0 or not m:
            return None, r
        return (int(m.group(2), 16), int(m.group(1)), int(m.group(3))), r

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
            signal.alarm(int(timeout))
        atexit.register(self._finish)

    def _out(self, line):
        if not self._plan_printed and self.planned is not None:
            self._plan_printed = True
            print("1..%d" % self.planned)
        print(line)
        sys.stdout.flush()

    def ok(self, cond, name, diag=None):
        self.n += 1
        self._out("%sok %d - %s" % ("" if cond else "not ", self.n, name.replace("#", "\\#")))
        if not cond:
            self.failed += 1
            self.diag("Failed test '%s'" % name)
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

    def bail_out(self, reason):
        self._out("Bail out! %s" % reason)
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
    """Common preamble of a .t: a Tap, skip_all when an external tool is missing, bail
    out when the SM binary is not built."""
    tap = Tap(plan, timeout)
    miss = missing_prerequisites(need)
    if miss:
        tap.skip_all("missing %s (make deps)" % ", ".join(miss))
    if not sm_override() and not os.access(ibsm_path(), os.X_OK):
        tap.bail_out("%s not built (run make)" % ibsm_path())
    return tap


def fabric_checks(tap, sim, net=None, lmc=None, diag_log=None):
    """The standard verdict on a configured fabric, one TAP test each: diags ran, inventory
    equals the net file, every linked port ACTIVE, LIDs, routes. Returns (snapshot, report).
    DIAG_LOG: a log whose tail is shown when a check fails."""
    snap = sim.collect()
    rep = walk_routes(snap)
    results = [("diags read the fabric", check_collected(snap)),
               ("nodes and links as in %s" % os.path.basename((net or sim.netfile).path),
                check_inventory(snap, net or sim.netfile)),
               ("every linked port ACTIVE", check_ports_active(snap)),
               ("LIDs assigned, unique, aligned" + ("" if lmc is None else " (LMC %d)" % lmc),
                check_lids(snap, lmc)),
               ("every source CA port reaches every destination LID", check_routes(snap, rep))]
    failed = False
    for name, res in results:
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
    """The whole of a plain bring-up test: ibsm --once [ARGS] on tests/fabrics/FABRIC_NAME,
    exit 0 and SUBNET UP, then every fabric check (7 TAP lines)."""
    tap = start(plan=7, timeout=timeout)
    net = need_fabric(tap, fabric_name)
    with Sim(net) as sim:
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log] + list(args), timeout=60)
        tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once exits 0", r.describe())
        tap.ok("SUBNET UP" in read(log), "log says SUBNET UP", tail(log))
        fabric_checks(tap, sim, diag_log=log)
    tap.done()
