#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""chaos.py - an SM living through every fault at once, on a simulated fabric.

A production SM sees links flap while a switch reboots, SMPs lost, its configuration reloaded
(and once in a while broken), a job launch storming the SA, multicast groups coming and going,
a standby started and killed, and itself killed and restarted. This drives all of that at ibsm
on ibsim from a seeded schedule (the same seed, the same faults in the same order) and, after
each step, once the SM says SUBNET UP for what the step changed, samples what an operator would
check: every live host pair delivered by the LFTs read back (tests/sim/harness.py walks them),
no credit loop on the routes, LIDs unchanged for ports that stayed, the SM's RSS, open file
descriptors and the MLIDs in use; the SA's latency is measured by the storms (bench/sa_load.c).

    python3 tests/chaos/chaos.py --minutes 10 [--steps N] [--seed 1] [--net FILE | --hosts 8192]
                                 [--engine updn] [--json OUT] [--md OUT] [--keep DIR]
                                 [--sa-probe W] [--sa-metrics]
    make chaos CHAOS_ARGS="--minutes 60 --hosts 8192"

Every SA answer over 50 ms is attributed (tests/chaos/attribution.py, doc/chaos.md "Where a
slow SA answer's time went"): the SM computing, waiting for a CPU or blocked in its loop (its
MAD-0003 stalls), a master down, or outside the SM's loop (then whose wait it was).

Prints one line per step and a summary; exit 0 when nothing was found wrong, 1 otherwise.
Every process it starts (ibsim, the SMs, the clients) is stopped by pid, on every path."""
import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402
sys.path.insert(0, HERE)
import fastcheck as fc  # noqa: E402
import attribution as attr  # noqa: E402

KINDS = ("link", "host_link", "switch", "loss", "hup", "hup_broken", "storm", "mcast", "standby",
         "master_kill")
UP_CEILING_S = 300          # a sweep that never ends: a hang, not a verdict
READ_CEILING_S = 600        # one diag reading the fabric (dump_fts at 8192 hosts: ~30 s)
# engines that break credit loops with SLs: the check needs every pair's PathRecord SL and the
# switches' SL2VL tables (harness.vl_credit_loops), not VL 0 on every hop
SL_ENGINES = ("torus-2qos", "torus2qos", "dfsssp", "nue", "lash")
FLAT = 0.05                 # RSS and MLIDs: growth allowed within one master's lifetime
POLICY_GOOD = ("Default=0x7fff, ipoib : ALL=full ;\n"
               "chaos=0x8001, ipoib : %s ;\n")


def log(msg):
    print(msg, flush=True)


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            m = re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M)
            return int(m.group(1)) if m else None
    except OSError:
        return None


def nfds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def build_tool(builddir, src, name, pkgs):
    """A C client of the harness (bench/sa_load.c, tests/chaos/lft_block.c) compiled next to
    the build, again only when its source is newer."""
    exe = os.path.join(builddir, os.path.basename(os.path.dirname(src)), name)
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs"] + pkgs,
                           capture_output=True, text=True).stdout.split() or ["-l" + p[3:] for p in pkgs]
    r = subprocess.run([os.environ.get("CC", "cc"), "-std=gnu11", "-O2", "-o", exe, src] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cannot build %s: %s" % (src, r.stderr))
    return exe


def build_sa_load(builddir):
    """bench/sa_load.c (the SA load client of the benchmark)."""
    return build_tool(builddir, os.path.join(ROOT, "bench", "sa_load.c"), "sa_load", ["libibumad"])


class Schedule:
    """The faults, drawn from SEED and the fabric alone (never from timing): step i is the
    same for the same seed and net file, however fast the machine is."""

    def __init__(self, netfile, sm_host, seed, kinds):
        self.rng = random.Random(seed)
        self.trng = random.Random(seed * 7919 + 1)   # hold times, storm hosts: not the faults
        self.kinds = kinds
        sw = set(netfile.switches())
        # the SM's own leaf and the SM's link stay: without them there is no subnet to manage
        sm_leaf = {n for l in netfile.links for (n, _) in l if any(x == sm_host for x, _ in l)} & sw
        self.sm_leaf = sm_leaf
        self.spine_links = sorted(tuple(sorted(l)) for l in netfile.links
                                  if all(n in sw for n, _ in l) and not any(n in sm_leaf for n, _ in l))
        self.host_links = sorted(tuple(sorted(l)) for l in netfile.links
                                 if any(n not in sw for n, _ in l) and not any(n == sm_host for n, _ in l))
        self.switches = sorted(sw - sm_leaf)
        self.hosts = [c for c in netfile.cas() if c != sm_host]

    def step(self):
        """One step: 1 to 3 faults started together (links flap while a switch reboots)."""
        return [self.fault() for _ in range(self.rng.choice((1, 1, 2, 3)))]

    def fault(self):
        r = self.rng
        kind = r.choice(self.kinds)
        if kind == "link" and self.spine_links:
            return ("link", r.choice(self.spine_links), r.choice((True, False)))
        if kind in ("link", "host_link") and self.host_links:
            return ("host_link", r.choice(self.host_links), r.choice((True, False)))
        if kind == "switch" and self.switches:
            return ("switch", r.choice(self.switches))
        if kind == "loss" and self.switches:
            return ("loss", sorted(r.sample(self.switches, min(len(self.switches), r.randint(1, 3)))),
                    r.randint(5, 20))
        if kind == "storm":
            return ("storm", r.choice((8, 32, 64)), r.randint(5, 15))
        if kind == "mcast" and self.hosts:
            return ("mcast", r.randint(0, 7), sorted(r.sample(self.hosts, min(len(self.hosts), 4))),
                    r.choice(("join", "leave")))
        if kind == "standby" and self.hosts:
            return ("standby", r.choice(self.hosts), r.choice(("SIGTERM", "SIGKILL")))
        if kind == "hup":
            return ("hup", sorted(r.sample(self.hosts, min(len(self.hosts), 3))))
        if kind in ("hup_broken", "master_kill"):
            return (kind,)
        return ("storm", 8, 5)


class Chaos:
    def __init__(self, sim, a, sa_load):
        self.sim, self.a, self.sa_load = sim, a, sa_load
        self.sm_host = sim.host
        self.sched = Schedule(sim.netfile, self.sm_host, a.seed, a.kinds)
        self.policy = sim.path("partitions.conf")
        self.policy_members = self.sched.hosts[:2]
        self.write_policy(self.policy_members)
        self.found = []           # what was wrong: (step, text)
        self.samples = []
        self.storms = []
        self.faults = {}
        self.groups = {}          # group number -> set of member hosts
        self.standby = None
        self.master = None
        self.master_log = sim.path("master.log")
        self.restarts = 0
        self.lids0 = None
        self.mlids = []
        self.rejoin = False
        self.cut = set()          # hosts whose link a fault of this step took down (or flapped)
        self.lifetimes = []       # one per master process: its pid and its samples' RSS, MLIDs
        self.step = 0
        self.checker = fc.Checker()
        self.sl_cdg = a.engine.split(",")[0].lower() in SL_ENGINES
        self.loads = []
        self.load_series = []     # (wall clock, 1-minute load average) every 2 s: the slow answers' load
        self.downtimes = []       # [kill time, the next SUBNET UP] of each master killed: no SA then
        self.losses = []          # [from, to] of each `loss` fault (switches dropping MADs)
        self.probe = None         # --sa-probe: one sa_load from the SM's host over the whole run
        self.marks = {"sm": attr.SchedMarks(), "ibsim": attr.SchedMarks()}
        self.sa_hist = []         # --sa-metrics: the SA's own latency histogram, per master process
        self.metrics_conf = None
        if a.sa_metrics:
            with socket.socket() as so:       # a free port on 127.0.0.1 for the masters' metrics
                so.bind(("127.0.0.1", 0))
                self.metrics_port = so.getsockname()[1]
            self.metrics_conf = sim.path("master-metrics.yaml")
            with open(self.metrics_conf, "w") as f:
                f.write("metrics_port: %d\n" % self.metrics_port)

    # ------------------------------------------------------------ the SMs
    def sm_args(self, log, prio):
        return ["-f", log, "-R", self.a.engine, "-p", str(prio), "-s", str(self.a.sweep),
                "-P", self.policy] + self.a.sm_arg

    def start_master(self):
        """Start the master and wait for its first log line: a signal in the milliseconds
        before main() runs (ld.so) kills any process; systemd holds a reload until the
        service has started, and so does this."""
        env = self.sim.env(self.sm_host, rmpp=True)
        before = h.read(self.master_log).count("SM-0001")
        extra = ["-F", self.metrics_conf] if self.metrics_conf else []
        self.master = self.sim.start_sm(self.sm_args(self.master_log, 10) + extra, host=self.sm_host, env=env,
                                        name="master-%d" % self.restarts)
        self.restarts += 1
        self.lifetimes.append({"pid": self.master.pid, "from_step": self.step, "rss_kib": [], "mlids": [],
                               "mlids_over_groups": [], "judged": [], "routed": not self.lifetimes})
        end = time.time() + 60
        while time.time() < end and self.master.alive() and h.read(self.master_log).count("SM-0001") <= before:
            time.sleep(0.01)

    def log_size(self):
        try:
            return os.path.getsize(self.master_log)
        except OSError:
            return 0

    def ups_since(self, offset, path=None):
        try:
            with open(path or self.master_log, errors="replace") as f:
                f.seek(offset)
                return len(re.findall(r"SUBNET UP", f.read()))
        except OSError:
            return 0

    def logged_since(self, offset, pattern, timeout):
        rx = re.compile(pattern)
        end = time.time() + timeout
        while True:
            with open(self.master_log, errors="replace") as f:
                f.seek(offset)
                if rx.search(f.read()):
                    return True
            if time.time() > end or not self.master.alive():
                return False
            time.sleep(0.1)

    def settle(self, offset, want_up):
        """Wait (with a ceiling that only catches a hang) until the master logged SUBNET UP
        after OFFSET when WANT_UP, then until its SMPs stand still for 2 s."""
        end = time.time() + UP_CEILING_S
        while want_up and not self.ups_since(offset):
            if not self.master.alive():
                return False, "the master exited (%s)" % h.tail(self.master_log, 5)
            if time.time() > end:
                return False, "no SUBNET UP within %d s of the step" % UP_CEILING_S
            time.sleep(0.2)
        if not self.quiet(2.0, UP_CEILING_S):
            return False, "the master never went quiet (%s)" % h.tail(self.master_log, 5)
        return True, ""

    def quiet(self, secs, ceiling):
        """The master has sent no SMP request (Get or Set) for SECS seconds. (Not
        Background.wait_idle: a standby's SMInfo polls are answered all the time.)"""
        end = time.time() + ceiling
        last, still = self.master.counts().requests(), time.time()
        while time.time() < end and self.master.alive():
            time.sleep(0.1)
            n = self.master.counts().requests()
            if n != last:
                last, still = n, time.time()
            elif time.time() - still >= secs:
                return True
        return False

    # ------------------------------------------------------------ faults
    def write_policy(self, members, broken=False):
        text = POLICY_GOOD % ", ".join("%s=full" % self.port_guid(m) for m in members)
        if broken:
            text += "broken=0x8002 : ALL=full\n"       # no ';': a structural error
        tmp = self.policy + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.policy)

    def port_guid(self, host):
        snap = getattr(self, "snap0", None)
        node = self.sim.node(snap, host) if snap else None
        if node is None:
            return "ALL"
        return "0x%x" % node.ports[min(node.ports)].guid

    def link_cmd(self, link, up):
        (n1, p1), _ = link
        return ('ReLink "%s"[%d]' if up else 'Unlink "%s"[%d]') % (n1, p1)

    def apply(self, fault, step):
        """Start FAULT; returns (want_up, undo) where undo() is called before the sample."""
        kind = fault[0]
        self.faults[kind] = self.faults.get(kind, 0) + 1
        sim = self.sim
        if kind in ("link", "host_link"):
            link, back_now = fault[1], fault[2]
            self.cut |= {n for n, _ in link if n in self.sched.hosts}
            sim.console(self.link_cmd(link, False))
            if back_now:       # a flap: down and up again before the SM is done with it
                time.sleep(self.sched.trng.random() * 0.5)
                sim.console(self.link_cmd(link, True))
                return True, None
            return True, lambda: sim.console(self.link_cmd(link, True))
        if kind == "switch":
            self.cut |= {n for l in sim.netfile.links if any(x == fault[1] for x, _ in l)
                         for n, _ in l if n in self.sched.hosts}
            sim.console('Unlink "%s"' % fault[1])     # every link of the switch, as a reboot
            return True, lambda: sim.console('ReLink "%s"' % fault[1])
        if kind == "loss":
            for s in fault[1]:
                sim.console('Error "%s" %d' % (s, fault[2]))
            window = [time.time(), None]
            self.losses.append(window)

            def undo():
                for s in fault[1]:
                    sim.console('Error "%s" 0' % s)
                window[1] = time.time()
            return False, undo
        if kind == "storm":
            self.start_storm(fault[1], fault[2])
            return False, None
        if kind == "mcast":
            self.mcast(fault[1], fault[2], fault[3], step)
            return False, None
        if kind == "standby":
            self.standby_event(fault[1], fault[2], step)
            return False, None
        if kind == "hup":
            self.policy_members = list(fault[1])
            self.write_policy(self.policy_members)
            self.master.popen.send_signal(signal.SIGHUP)
            return True, None
        if kind == "hup_broken":
            self.write_policy(self.policy_members, broken=True)
            mark = self.log_size()
            self.master.popen.send_signal(signal.SIGHUP)
            if not self.logged_since(mark, r"POL-0002 .*partitions\.conf:\d+:\d+: .*previous|"
                                           r"POL-0002 .*previous.*partitions\.conf:\d+:\d+: ", 60):
                self.found.append((step, "a broken partitions.conf on SIGHUP: no POL-0002 naming FILE:LINE "
                                         "and the previous policy kept"))
            self.write_policy(self.policy_members)        # the operator fixes it
            self.master.popen.send_signal(signal.SIGHUP)
            return False, None
        if kind == "master_kill":
            self.scrape_sa_hist()
            self.downtimes.append([time.time(), None])
            self.master.popen.send_signal(signal.SIGKILL)
            self.master.stop()
            self.forget_client(self.master.pid)
            self.start_master()
            self.rejoin = True       # a new master asks every port to re-register: they join again
            return True, None
        return False, None

    def start_storm(self, window, seconds):
        maxlid = max(self.lids0.values()) if self.lids0 else 64
        host = self.sched.trng.choice(self.sched.hosts)
        out = self.sim.path("storm-%d.out" % len(self.storms))
        p = h.Background([self.sa_load, "-n", str(maxlid), "-w", str(window), "-d", str(seconds),
                          "-t", "2000", "-S", str(attr.SLOW_MS), "-K", "1000"], self.sim.env(host),
                         self.sim.rundir, out)
        self.storms.append({"proc": p, "out": out, "window": window, "seconds": seconds,
                            "name": "storm %d w%d" % (len(self.storms), window)})

    def reap_storms(self, wait):
        for s in self.storms:
            p = s.get("proc")
            if p is None:
                continue
            if wait:
                try:
                    p.popen.wait(s["seconds"] + 30)
                except subprocess.TimeoutExpired:
                    pass
            if p.alive() and not wait:
                continue
            p.stop()
            self.read_load_out(s)

    @staticmethod
    def read_load_out(s):
        """sa_load's figures and slowest answers, from its output file, into S."""
        text = h.read(s["out"])
        m = re.search(r"sent (\d+) answered (\d+).*?timeouts (\d+).*?p99_ms ([\d.]+) max_ms ([\d.]+)", text)
        s["slow"], s["slow_count"], _ = attr.parse_slow(text)
        s["timeout_sent"] = attr.parse_timeouts(text)
        s.update(proc=None, sent=int(m.group(1)) if m else 0, answered=int(m.group(2)) if m else 0,
                 timeouts=int(m.group(3)) if m else None, p99_ms=float(m.group(4)) if m else None,
                 max_ms=float(m.group(5)) if m else None)

    def scrape_sa_hist(self):
        """--sa-metrics: the master's SA latency histogram (from a request's arrival, its queue
        wait included, to its answer: ibsm_sa_request_duration_seconds, all attributes), read
        before the master is killed and at the end."""
        if not self.metrics_conf or not self.master or not self.master.alive():
            return
        try:
            text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=10).read().decode()
        except OSError as e:
            self.sa_hist.append({"pid": self.master.pid, "error": str(e)})
            return
        le = {}
        for m in re.finditer(r'^ibsm_sa_request_duration_seconds_bucket\{.*?le="([^"]+)"\} (\d+)', text, re.M):
            le[m.group(1)] = le.get(m.group(1), 0) + int(m.group(2))
        n = le.get("+Inf", 0)
        self.sa_hist.append({"pid": self.master.pid, "answered": n, "over_25ms": n - le.get("0.025", n),
                             "over_50ms": n - le.get("0.05", n), "over_100ms": n - le.get("0.1", n)})

    def start_probe(self, seconds):
        """--sa-probe W: W PathRecord Gets outstanding from the SM's own host (never faulted)
        for the whole run, so that every step's faults meet the SA, not only the storms'."""
        maxlid = max(self.lids0.values()) if self.lids0 else 64
        out = self.sim.path("probe.out")
        p = h.Background([self.sa_load, "-n", str(maxlid), "-w", str(self.a.sa_probe), "-d", str(int(seconds)),
                          "-t", "2000", "-S", str(attr.SLOW_MS), "-K", "5000", "-r", str(self.a.seed)],
                         self.sim.env(self.sm_host), self.sim.rundir, out)
        self.probe = {"proc": p, "out": out, "window": self.a.sa_probe, "seconds": seconds,
                      "name": "probe w%d" % self.a.sa_probe}

    def stop_probe(self):
        """SIGTERM: sa_load sends nothing more, waits for the queries in flight, prints."""
        if self.probe and self.probe.get("proc"):
            p = self.probe["proc"].popen
            p.send_signal(signal.SIGTERM)
            try:        # its figures over millions of answers (sorts) take a while on a busy machine
                p.wait(300)
            except subprocess.TimeoutExpired:
                pass
            self.probe["proc"].stop()
            self.read_load_out(self.probe)

    def mcast(self, g, hosts, op, step):
        mgid = "ff12:601b:ffff::c4a0:%x" % g
        members = self.groups.setdefault(g, set())
        tool = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
        for host in hosts:
            if op == "join":
                r = self.sim.run([tool, "-c", mgid], host=host, timeout=30)
                if r.rc == 0 or self.rejoin or host in self.cut:
                    # refused while a restarted master starts, or while the host is cut off:
                    # it joins again when the port comes back (rejoin_groups)
                    members.add(host)
                else:
                    self.found.append((step, "join of %s to %s refused: %s" % (host, mgid, r.out.strip())))
            elif host in members:
                r = self.sim.run([tool, "-l", mgid], host=host, timeout=30)
                members.discard(host)
                # a master just restarted knows no group until its members join again, and
                # a port cut off this step left its groups with it: a leave is refused rightly
                if r.rc != 0 and not self.rejoin and host not in self.cut:
                    self.found.append((step, "leave of %s from %s refused: %s" % (host, mgid, r.out.strip())))

    def forget_client(self, pid):
        """A process killed by SIGKILL never tells ibsim it left: its entry (ibsim keeps 10)
        stays, and requests to its port may still go to it. ibsim's console `X` drops it, as
        a real port forgets a dead process."""
        for m in re.finditer(r"Client (\d+): pid (\d+)", self.sim.console("Attached")):
            if int(m.group(2)) == pid:
                self.sim.console("X %s" % m.group(1))

    def rejoin_groups(self, step, only=None):
        """What IPoIB does on ClientReregister (every member) and on its port coming back
        ACTIVE (the members in ONLY: a port that left the subnet left its groups with it, as
        in OpenSM, osm_drop_mgr.c): they join their groups again."""
        if only is None:
            self.rejoin = False
        tool = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
        for g, members in sorted(self.groups.items()):
            for host in sorted(members):
                if only is not None and host not in only:
                    continue
                r = self.sim.run([tool, "-c", "ff12:601b:ffff::c4a0:%x" % g], host=host, timeout=30)
                if r.rc != 0:
                    self.found.append((step, "rejoin of %s to group %d refused: %s" % (host, g, r.out.strip())))

    def standby_event(self, host, how, step):
        if self.standby is None:
            log = self.sim.path("standby-%s.log" % host)
            self.standby = (self.sim.start_sm(self.sm_args(log, 1), host=host, name="standby-%s" % host,
                                              env=self.sim.env(host, rmpp=True)), log)
            return
        sb, _ = self.standby
        sb.popen.send_signal(getattr(signal, how))
        sb.stop()
        self.forget_client(sb.pid)
        self.standby = None

    # ------------------------------------------------------------ samples
    def sample(self, step, took, faults):
        sim = self.sim
        ups = self.ups_since(0)
        snap, read_s = fc.collect(sim, self.sm_host, READ_CEILING_S)
        still = self.ups_since(0) == ups and self.quiet(0.5, 5)
        t = time.time()
        rep = self.checker.check(snap, cdg=not self.sl_cdg)
        ok_routes, detail = fc.check_routes(rep)
        if snap.errors:
            ok_routes, detail = False, "the diags failed: %s" % snap.errors[0][:300]
        if self.sl_cdg:
            cdg = h.vl_credit_loops(snap, fc.read_sl2vl(sim, snap, self.sm_host), h.path_sls(sim, self.sm_host))
            loop, cdg_text = cdg.cycle is not None, cdg.summary()
        else:
            loop, cdg_text = rep.cycle is not None, rep.cdg_summary()
        check_s = round(time.time() - t, 2)
        lids_ok, lid_detail = du.compare_lids(self.snap0, snap, only=set(du.lids(snap)) & set(du.lids(self.snap0)))
        pid = self.master.pid
        mlids = self.mlids_in_use()
        load = os.getloadavg()[0]
        self.loads.append(load)
        s = {"step": step, "faults": [list(map(str, f)) for f in faults],
             "t": round(time.time() - self.t0, 1), "settle_s": round(took, 2),
             "read_s": read_s, "check_s": check_s, "load1": round(load, 2),
             "nodes": len(snap.nodes), "pairs": rep.pairs, "delivered": ok_routes, "routes": detail,
             "undelivered_pairs": rep.pairs - rep.delivered, "swept_during_read": not still,
             "lids_kept": lids_ok, "credit_loop": loop, "cdg": cdg_text,
             "master_pid": pid, "rss_kib": rss_kib(pid), "fds": nfds(pid), "mlids": mlids,
             "groups": sum(1 for m in self.groups.values() if m)}
        self.samples.append(s)
        life = self.lifetimes[-1]
        # a master restarted on a fabric whose LFTs are right keeps them, and holds less memory
        # until its first re-route (a link or a switch changed, or a SIGHUP's heavy sweep):
        # RSS is judged from then on
        if step > life["from_step"] and any(f[0] in ("link", "host_link", "switch", "hup") for f in faults):
            life["routed"] = True
        if s["rss_kib"]:
            life["rss_kib"].append(s["rss_kib"])
            if life["routed"]:
                life["judged"].append(s["rss_kib"])
        if mlids is not None:
            life["mlids"].append(mlids)
            life["mlids_over_groups"].append(mlids - s["groups"])
        s["finding_undelivered"] = not ok_routes and still
        if not ok_routes and still:
            self.found.append((step, "pairs not delivered after SUBNET UP: %s" % detail))
        if not lids_ok:
            self.found.append((step, "LIDs changed: %s" % lid_detail))
        bad_pkeys = self.pkey_check(snap) if still else []
        s["pkeys_ok"] = not bad_pkeys
        if bad_pkeys:
            self.found.append((step, "the partition policy in force is not what the tables hold: %s" %
                               "; ".join(bad_pkeys)))
        if s["credit_loop"]:
            self.found.append((step, "credit loop: %s" % cdg_text))
        if mlids is not None and mlids > s["groups"] + self.mlid_base:
            self.found.append((step, "%d MLIDs in use for %d groups (+%d at start)" %
                               (mlids, s["groups"], self.mlid_base)))
        return s

    def pkey_check(self, snap):
        """The hosts of the chaos partition (last policy taken) hold 0x8001, two others do not:
        read with smpquery from the SM's host."""
        members = set(self.policy_members)
        others = [x for x in self.sched.hosts if x not in members][:2]
        bad = []
        for host in sorted(members) + others:
            node = self.sim.node(snap, host)
            if node is None or not node.ports:
                continue                     # cut off by a fault: not live
            port = node.ports[min(node.ports)]
            r = self.sim.run(["smpquery", "pkeys", str(port.lid)], host=self.sm_host, timeout=30)
            if r.rc != 0:
                continue
            has = bool(re.search(r"\b0x8001\b", r.out))
            if has != (host in members):
                bad.append("%s %s 0x8001" % (host, "lacks" if host in members else "holds"))
        return bad

    def mlids_in_use(self):
        r = self.sim.run(["saquery", "-g"], host=self.sm_host, timeout=60,
                         env=self.sim.env(self.sm_host, rmpp=True))
        if r.rc != 0:
            return None
        return len(set(re.findall(r"^\s*Mlid\.+(0x[0-9A-Fa-f]+)", r.out, re.M)))

    # ------------------------------------------------------------ the run
    def sample_load(self, stop):
        """Every 2 s the load average; every 10 ms (as the GIL allows) the master's and ibsim's
        main thread's on-CPU and waiting-for-CPU time, to tell whose wait an SA answer was."""
        last = 0.0
        while True:
            now = time.time()
            if now - last >= 2.0:
                self.load_series.append((now, os.getloadavg()[0]))
                last = now
            for who, proc in (("sm", self.master and self.master.popen), ("ibsim", self.sim.proc)):
                v = attr.read_schedstat(proc.pid) if proc is not None and proc.poll() is None else None
                if v:
                    self.marks[who].add(time.time(), proc.pid, v[0], v[1])
            if stop.wait(0.01):
                return

    def run(self):
        stop = threading.Event()
        sampler = threading.Thread(target=self.sample_load, args=(stop,), daemon=True)
        sampler.start()
        try:
            return self.run_steps()
        finally:
            stop.set()
            sampler.join()

    def run_steps(self):
        self.t0 = time.time()
        self.started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.start_master()
        if not self.master.wait_for(self.master_log, r"SUBNET UP", UP_CEILING_S):
            raise RuntimeError("ibsm did not bring the subnet up: %s" % h.tail(self.master_log))
        self.quiet(2.0, UP_CEILING_S)
        t = time.time()
        self.snap0, self.read0_s = fc.collect(self.sim, self.sm_host, READ_CEILING_S)
        self.lids0 = du.lids(self.snap0)
        ok, detail = fc.check_routes(self.checker.check(self.snap0, cdg=False))
        log("before any fault: %s (read %s, %.1f s in all)" % (detail, self.read0_s, time.time() - t))
        if not ok or self.snap0.errors:
            raise RuntimeError("not every pair delivered before any fault: %s %s" % (detail, self.snap0.errors))
        self.write_policy(self.policy_members)        # now with the members' GUIDs
        self.master.popen.send_signal(signal.SIGHUP)
        self.settle(0, False)
        self.mlid_base = self.mlids_in_use() or 0
        self.rss0 = rss_kib(self.master.pid)
        end = self.t0 + self.a.minutes * 60
        if self.a.sa_probe:
            self.start_probe(end - time.time() + 3600)
        step = nfound = 0
        while time.time() < end and (not self.a.steps or step < self.a.steps):
            step += 1
            self.step = step
            self.cut = set()
            faults = self.sched.step()
            offset = self.log_size()
            t = time.time()
            want_up, undos = False, []
            for f in faults:
                w, undo = self.apply(f, step)
                want_up |= w
                if undo:
                    undos.append(undo)
            hold = self.sched.trng.uniform(0.5, 3.0)
            time.sleep(hold)            # the faults overlap with what the SM does about them
            for undo in undos:
                undo()
            if undos:
                want_up = True if any(f[0] in ("link", "host_link", "switch") for f in faults) else want_up
            self.reap_storms(False)
            settled, why = self.settle(offset, want_up)
            took = time.time() - t
            if not settled:
                self.found.append((step, why))
                if not self.master.alive():
                    log("step %d: %s; restarting the master" % (step, why))
                    self.downtimes.append([time.time(), None])
                    self.master.stop()
                    self.forget_client(self.master.pid)
                    self.start_master()
                    self.settle(self.log_size(), True)
            if self.rejoin:
                self.rejoin_groups(step)
            elif self.cut:
                self.rejoin_groups(step, self.cut)
            self.cut = set()
            s = self.sample(step, took, faults)
            if self.a.keep and len(self.found) > nfound:
                self.keep(step)
            nfound = len(self.found)
            log("step %d %s: %s up in %.1fs, %d nodes, %d pairs %s, CDG %s, LIDs %s, RSS %s KiB, fds %s, "
                "MLIDs %s, read %.0fs check %.0fs, load %.1f" % (
                    step, " + ".join(f[0] for f in faults), "" if settled else "NOT", took, s["nodes"],
                    s["pairs"], "ok" if s["delivered"] else "BAD", "LOOP" if s["credit_loop"] else "ok",
                    "kept" if s["lids_kept"] else "CHANGED", s["rss_kib"], s["fds"], s["mlids"],
                    sum(s["read_s"].values()), s["check_s"], s["load1"]))
        self.reap_storms(True)
        self.stop_probe()
        self.scrape_sa_hist()
        if self.standby:
            self.standby[0].stop()
        return self.report(step)

    def keep(self, step):
        """The SMs' logs and the diags' view, copied to --keep DIR/step-N for a finding."""
        d = os.path.join(self.a.keep, "step-%d" % step)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(self.sim.dir):
            if f.endswith((".log", ".out")):
                shutil.copy(os.path.join(self.sim.dir, f), d)
        with open(os.path.join(d, "samples.json"), "w") as f:
            json.dump(self.samples[-3:], f, indent=1)

    def lifetime_report(self):
        """Per master process (a master_kill or a crash starts a new one): RSS and MLIDs at its
        first sample (after its first SUBNET UP) and its last, and their growth: the highest
        value over the second half of its samples against the highest over the first half
        (a leak grows all along; a pool filled once by the first storm does not). RSS is judged
        (FLAT) over the samples from its first re-route on (a restarted master keeps the LFTs
        it finds right and holds less until it routes), when there are 6 or more; MLIDs over
        all its samples."""
        out = []
        for n, life in enumerate(self.lifetimes):
            r, m, x, j = life["rss_kib"], life["mlids"], life["mlids_over_groups"], life["judged"]
            e = {"n": n, "pid": life["pid"], "from_step": life["from_step"], "samples": len(r),
                 "rss_kib_start": r[0] if r else None, "rss_kib_end": r[-1] if r else None,
                 "rss_kib_max": max(r) if r else None, "rss_growth": None, "rss_flat": None,
                 "mlids_start": m[0] if m else None, "mlids_end": m[-1] if m else None,
                 "mlids_max": max(m) if m else None,
                 "mlids_over_groups": [min(x), max(x)] if x else None, "mlids_flat": None}
            e["rss_kib_series"] = r
            e["rss_judged_from"] = len(r) - len(j)
            if len(j) >= 6:
                first, second = max(j[:len(j) // 2]), max(j[len(j) // 2:])
                e["rss_growth"] = round((second - first) / first, 4)
                e["rss_flat"] = e["rss_growth"] <= FLAT
                if not e["rss_flat"]:
                    self.found.append((self.step, "master %d (pid %d): RSS grew %.1f %% over its second half "
                                       "(%d -> %d KiB)" % (n, life["pid"], 100 * e["rss_growth"], first, second)))
            if len(x) >= 6:
                first, second = max(x[:len(x) // 2]), max(x[len(x) // 2:])
                e["mlids_flat"] = second <= first
                if not e["mlids_flat"]:
                    self.found.append((self.step, "master %d (pid %d): MLIDs beyond the groups in use grew "
                                       "from %d to %d" % (n, life["pid"], first, second)))
            out.append(e)
        return out

    def attribution(self):
        """Every SA answer over 50 ms the storms listed, against the stalls (MAD-0003) in the
        masters' log (one after another in master.log) and the masters' downtimes (a kill to the
        next SUBNET UP there); the standbys' stalls (their own logs) are listed apart."""
        stalls = []
        for f in sorted(os.listdir(self.sim.dir)):
            if f.endswith(".log"):
                stalls += attr.parse_stalls(h.read(os.path.join(self.sim.dir, f)), f)
        text = h.read(self.master_log)
        ups = [attr.log_time(m.group(1)) for m in re.finditer(r"^(\S+ \S+) .*SUBNET UP", text, re.M)]
        downs = []
        for t0, _ in self.downtimes:
            after = [u for u in ups if u > t0]
            downs.append((t0, after[0] if after else time.time()))
        runs = self.storms + ([self.probe] if self.probe else [])
        answers = [dict(a, client=s["name"]) for s in runs for a in s.get("slow") or []]
        over = sum(s.get("slow_count") or 0 for s in runs)
        # a standby answers no SA query (only a master does): its stalls are listed, not matched
        master = [x for x in stalls if x["source"] == os.path.basename(self.master_log)]
        att = attr.attribute(answers, master, downs, self.load_series, over, marks=self.marks)
        att["sched_readings"] = {k: len(m.t) for k, m in self.marks.items()}
        att["stall_list"] = [[round(x["end"], 6), x["ms"], x["from"], x["to"], x["window_ms"], x["ran_ms"],
                              x["waited_ms"], x["source"]] for x in stalls]
        if self.metrics_conf:
            att["sa_histogram"] = self.sa_hist
        att["standby_stalls_by_label"] = attr.by_label([x for x in stalls if x not in master])
        att["slice_stats"] = attr.parse_slice_stats(text)
        att["timeouts"] = attr.classify_timeouts([t for s in runs for t in s.get("timeout_sent") or []], downs,
                                                 [(a, b or time.time()) for a, b in self.losses])
        if self.probe:
            att["probe"] = {k: self.probe.get(k) for k in ("window", "sent", "answered", "timeouts", "p99_ms",
                                                          "max_ms", "slow_count")}
        att["downtimes_s"] = [round(b - a, 2) for a, b in downs]
        lo = [x for _, x in self.load_series]
        att["load1"] = [round(min(lo), 2), round(sum(lo) / len(lo), 2), round(max(lo), 2)] if lo else None
        return att

    def report(self, steps):
        storms = [s for s in self.storms if s.get("sent")]
        rss = [s["rss_kib"] for s in self.samples if s["rss_kib"]]
        tail = rss[len(rss) // 2:] or rss
        growth = (max(tail) - self.rss0) / self.rss0 if rss and self.rss0 else None
        lifetimes = self.lifetime_report()
        reads = [sum(s["read_s"].values()) for s in self.samples]
        return {
            "command": "tests/chaos/chaos.py " + " ".join(self.a.argv), "started": self.started,
            "net": self.sim.net, "seed": self.a.seed, "engine": self.a.engine, "sm_args": self.a.sm_arg,
            "hosts": len(self.sched.hosts) + 1, "switches": len(self.sim.netfile.switches()),
            "minutes": round((time.time() - self.t0) / 60, 2), "steps": steps, "faults": self.faults,
            "samples": len(self.samples),
            "pairs_per_sample": max((s["pairs"] for s in self.samples), default=0),
            "pairs_checked": sum(s["pairs"] for s in self.samples),
            "credit_check": "PathRecord SLs + SL2VL (harness.vl_credit_loops)" if self.sl_cdg else
                            "every route on VL 0 (fastcheck)",
            "undelivered_after_up": sum(1 for s in self.samples if s["finding_undelivered"]),
            "undelivered_pairs_after_up": sum(s["undelivered_pairs"] for s in self.samples
                                              if s["finding_undelivered"]),
            "undelivered_while_sweeping": sum(1 for s in self.samples
                                              if not s["delivered"] and not s["finding_undelivered"]),
            "credit_loops": sum(1 for s in self.samples if s["credit_loop"]),
            "lids_changed": sum(1 for s in self.samples if not s["lids_kept"]),
            "rss_kib_start": self.rss0, "rss_kib_end": rss[-1] if rss else None,
            "rss_kib_max": max(rss) if rss else None, "rss_growth": growth,
            "lifetimes": lifetimes,
            "fds": [min(s["fds"] for s in self.samples if s["fds"]) if self.samples else None,
                    max(s["fds"] for s in self.samples if s["fds"]) if self.samples else None],
            "mlids_max": max((s["mlids"] or 0) for s in self.samples) if self.samples else None,
            "sa_queries": sum(s["answered"] for s in storms),
            "sa_timeouts": sum(s["timeouts"] or 0 for s in storms),
            "sa_p99_ms_max": max((s["p99_ms"] or 0) for s in storms) if storms else None,
            "sa_max_ms": max((s["max_ms"] or 0) for s in storms) if storms else None,
            "first_read_s": self.read0_s,
            "read_s_max": round(max(reads), 1) if reads else None,
            "check_s_max": max((s["check_s"] for s in self.samples), default=None),
            "settle_s_max": max((s["settle_s"] for s in self.samples), default=None),
            "load1": [round(min(self.loads), 2), round(sum(self.loads) / len(self.loads), 2),
                      round(max(self.loads), 2)] if self.loads else None,
            "found": ["step %d: %s" % f for f in self.found],
            "sa_attribution": self.attribution(),
            "samples_detail": [{k: s[k] for k in ("step", "t", "faults", "settle_s", "read_s", "check_s", "load1",
                                                  "pairs", "undelivered_pairs", "swept_during_read", "credit_loop",
                                                  "lids_kept", "master_pid", "rss_kib", "fds", "mlids", "groups")}
                               for s in self.samples],
        }


def markdown(rep):
    lines = ["# Chaos run %s" % rep.get("started", ""), "", "    %s" % rep.get("command", ""), "",
             "`%s` (%d hosts, %d switches), engine %s%s, seed %d, %.1f minutes, %d steps, %d samples "
             "of %d (host port, LID) pairs each." % (
                 os.path.basename(rep["net"]), rep["hosts"], rep["switches"], rep["engine"],
                 " " + " ".join(rep["sm_args"]) if rep["sm_args"] else "", rep["seed"], rep["minutes"],
                 rep["steps"], rep["samples"], rep["pairs_per_sample"]), "",
             "Machine load (1-minute load average at each sample, 2 cores): min/mean/max %s." % (rep["load1"],),
             "Credit loops: %s." % rep["credit_check"], "",
             "| faults injected | count |", "|---|---|"]
    lines += ["| %s | %d |" % (k, v) for k, v in sorted(rep["faults"].items())]
    lines += ["", "| measure | value |", "|---|---|"]
    for k in ("pairs_checked", "undelivered_after_up", "undelivered_pairs_after_up", "undelivered_while_sweeping",
              "credit_loops", "lids_changed", "rss_kib_start", "rss_kib_end",
              "rss_kib_max", "fds", "mlids_max", "sa_queries", "sa_timeouts", "sa_p99_ms_max",
              "sa_max_ms", "first_read_s", "read_s_max", "check_s_max", "settle_s_max"):
        lines.append("| %s | %s |" % (k, rep[k]))
    lines += ["", "Per master lifetime (from its first sample after SUBNET UP; RSS growth: highest over the "
              "second half of its samples from its first re-route on against the highest over the first half, "
              "judged from 6 such samples; MLIDs beyond the groups with members: must not grow):", "",
              "| master | pid | from step | samples | RSS start/end/max KiB | RSS growth | MLIDs start/end/max "
              "| MLIDs beyond groups min/max | flat |", "|---|---|---|---|---|---|---|---|---|"]
    for e in rep["lifetimes"]:
        lines.append("| %d | %d | %d | %d | %s/%s/%s | %s | %s/%s/%s | %s | %s |" % (
            e["n"], e["pid"], e["from_step"], e["samples"], e["rss_kib_start"], e["rss_kib_end"],
            e["rss_kib_max"], "-" if e["rss_growth"] is None else "%.1f %%" % (100 * e["rss_growth"]),
            e["mlids_start"], e["mlids_end"], e["mlids_max"], e["mlids_over_groups"],
            "-" if e["rss_flat"] is None else ("yes" if e["rss_flat"] and e["mlids_flat"] is not False else "NO")))
    lines += ["", "Found: %s" % ("nothing" if not rep["found"] else "")]
    lines += ["- %s" % f for f in rep["found"]]
    att = rep.get("sa_attribution")
    if att:
        lines += ["", "1-minute load average every 2 s over the run, min/mean/max: %s; masters down "
                  "(kill to SUBNET UP), s: %s." % (att["load1"], att["downtimes_s"]), "", attr.markdown(att)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: by --minutes only)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--net", help="an ibsim net file (default tests/fabrics/ftree-3l.net)")
    ap.add_argument("--hosts", type=int, help="a 3-level XGFT fat tree of about this many hosts instead")
    ap.add_argument("--torus", help="an XxYxZ torus, one host per switch, with its torus-2QoS.conf "
                                    "(bench/torus_bench.py); the engine torus-2QoS with -Q unless --engine")
    ap.add_argument("--engine")
    ap.add_argument("--sweep", type=int, default=10, help="light sweep interval, seconds (-s)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="fault kinds, comma separated")
    ap.add_argument("--sm-arg", action="append", default=[], help="one more ibsm argument")
    ap.add_argument("--sa-probe", type=int, default=0, metavar="W",
                    help="one more SA client, W PathRecord Gets outstanding from the SM's host, over the whole run")
    ap.add_argument("--sa-metrics", action="store_true",
                    help="serve the master's metrics (-F with metrics_port) and read its SA latency histogram")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--md", help="write the markdown report here")
    ap.add_argument("--keep", help="copy the logs of each step that found something under this directory")
    a = ap.parse_args(argv)
    a.argv = list(sys.argv[1:] if argv is None else argv)
    a.kinds = tuple(k for k in a.kinds.split(",") if k)
    bad = [k for k in a.kinds if k not in KINDS]
    if bad:
        ap.error("unknown fault kind %s (known: %s)" % (", ".join(bad), ", ".join(KINDS)))
    net = a.net or os.path.join(ROOT, "tests", "fabrics", "ftree-3l.net")
    tmp = None
    if a.hosts:
        tmp = tempfile.mkdtemp(prefix="chaos-net.")
        # k x k x m hosts: exactly --hosts when some k near its cube root divides it (8192 = 16 x 16 x 32)
        c = a.hosts ** (1 / 3)
        exact = [k for k in range(max(2, int(c / 2)), int(c * 1.5) + 2) if a.hosts % (k * k) == 0]
        k = min(exact, key=lambda k: abs(k - c)) if exact else max(2, round(c))
        net = os.path.join(tmp, "xgft-%d.net" % a.hosts)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "genfab.py"), "xgft", "--m",
                        "%d,%d,%d" % (k, k, max(1, a.hosts // (k * k))), "--w", "1,%d,%d" % (k, k),
                        "-o", net], check=True)
    elif a.torus:
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        import torus_bench  # noqa: E402
        tmp = tempfile.mkdtemp(prefix="chaos-net.")
        fab = torus_bench.Torus(tuple(int(x) for x in a.torus.lower().split("x")), tmp)
        net = fab.net
        if not a.engine:
            a.engine = "torus-2QoS"
            a.sm_arg = ["--torus_config", fab.conf, "-Q"] + a.sm_arg
    a.engine = a.engine or "updn"
    sa_load = build_sa_load(h.build_dir())
    fc.LFT_BLOCK = build_tool(h.build_dir(), os.path.join(HERE, "lft_block.c"), "lft_block",
                              ["libibmad", "libibumad"])
    with h.Sim(net, lmc=0) as sim:
        rep = Chaos(sim, a, sa_load).run()
    h.cleanup()
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    text = markdown(rep)
    sys.stdout.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rep, f, indent=1)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    return 1 if rep["found"] else 0


if __name__ == "__main__":
    sys.exit(main())
