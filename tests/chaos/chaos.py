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
    make chaos CHAOS_ARGS="--minutes 60 --hosts 8192"

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
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

KINDS = ("link", "host_link", "switch", "loss", "hup", "hup_broken", "storm", "mcast", "standby",
         "master_kill")
UP_CEILING_S = 300          # a sweep that never ends: a hang, not a verdict
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


def build_sa_load(builddir):
    """bench/sa_load.c (the SA load client of the benchmark) compiled next to the build."""
    src = os.path.join(ROOT, "bench", "sa_load.c")
    exe = os.path.join(builddir, "bench", "sa_load")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libibumad"],
                           capture_output=True, text=True).stdout.split() or ["-libumad"]
    r = subprocess.run([os.environ.get("CC", "cc"), "-std=gnu11", "-O2", "-o", exe, src] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cannot build %s: %s" % (src, r.stderr))
    return exe


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
        self.master = self.sim.start_sm(self.sm_args(self.master_log, 10), host=self.sm_host, env=env,
                                        name="master-%d" % self.restarts)
        self.restarts += 1
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
            sim.console(self.link_cmd(link, False))
            if back_now:       # a flap: down and up again before the SM is done with it
                time.sleep(self.sched.trng.random() * 0.5)
                sim.console(self.link_cmd(link, True))
                return True, None
            return True, lambda: sim.console(self.link_cmd(link, True))
        if kind == "switch":
            sim.console('Unlink "%s"' % fault[1])     # every link of the switch, as a reboot
            return True, lambda: sim.console('ReLink "%s"' % fault[1])
        if kind == "loss":
            for s in fault[1]:
                sim.console('Error "%s" %d' % (s, fault[2]))
            return False, lambda: [sim.console('Error "%s" 0' % s) for s in fault[1]]
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
                          "-t", "2000"], self.sim.env(host), self.sim.rundir, out)
        self.storms.append({"proc": p, "out": out, "window": window, "seconds": seconds})

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
            m = re.search(r"sent (\d+) answered (\d+).*?timeouts (\d+).*?p99_ms ([\d.]+) max_ms ([\d.]+)",
                          h.read(s["out"]))
            s.update(proc=None, sent=int(m.group(1)) if m else 0, answered=int(m.group(2)) if m else 0,
                     timeouts=int(m.group(3)) if m else None, p99_ms=float(m.group(4)) if m else None,
                     max_ms=float(m.group(5)) if m else None)

    def mcast(self, g, hosts, op, step):
        mgid = "ff12:601b:ffff::c4a0:%x" % g
        members = self.groups.setdefault(g, set())
        tool = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
        for host in hosts:
            if op == "join":
                r = self.sim.run([tool, "-c", mgid], host=host, timeout=30)
                if r.rc == 0 or self.rejoin:
                    members.add(host)     # refused while a restarted master starts: it joins again
                else:
                    self.found.append((step, "join of %s to %s refused: %s" % (host, mgid, r.out.strip())))
            elif host in members:
                r = self.sim.run([tool, "-l", mgid], host=host, timeout=30)
                members.discard(host)
                # a master just restarted knows no group until its members join again: a
                # leave before that is refused rightly
                if r.rc != 0 and not self.rejoin:
                    self.found.append((step, "leave of %s from %s refused: %s" % (host, mgid, r.out.strip())))

    def forget_client(self, pid):
        """A process killed by SIGKILL never tells ibsim it left: its entry (ibsim keeps 10)
        stays, and requests to its port may still go to it. ibsim's console `X` drops it, as
        a real port forgets a dead process."""
        for m in re.finditer(r"Client (\d+): pid (\d+)", self.sim.console("Attached")):
            if int(m.group(2)) == pid:
                self.sim.console("X %s" % m.group(1))

    def rejoin_groups(self, step):
        """What IPoIB does on ClientReregister: every member joins its groups again."""
        self.rejoin = False
        tool = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
        for g, members in sorted(self.groups.items()):
            for host in sorted(members):
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
        snap = sim.collect(self.sm_host)
        still = self.ups_since(0) == ups and self.quiet(0.5, 5)
        rep = h.walk_routes(snap)
        ok_routes, detail = h.check_routes(snap, rep)
        lids_ok, lid_detail = du.compare_lids(self.snap0, snap, only=set(du.lids(snap)) & set(du.lids(self.snap0)))
        cdg = h.vl_credit_loops(snap, {}, {})
        pid = self.master.pid
        mlids = self.mlids_in_use()
        s = {"step": step, "faults": [list(map(str, f)) for f in faults],
             "t": round(time.time() - self.t0, 1), "settle_s": round(took, 2),
             "nodes": len(snap.nodes), "delivered": ok_routes, "routes": detail,
             "lids_kept": lids_ok, "credit_loop": cdg.cycle is not None,
             "rss_kib": rss_kib(pid), "fds": nfds(pid), "mlids": mlids,
             "groups": sum(1 for m in self.groups.values() if m)}
        self.samples.append(s)
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
            self.found.append((step, "credit loop: %s" % cdg.summary()))
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
    def run(self):
        self.t0 = time.time()
        self.start_master()
        if not self.master.wait_for(self.master_log, r"SUBNET UP", UP_CEILING_S):
            raise RuntimeError("ibsm did not bring the subnet up: %s" % h.tail(self.master_log))
        self.quiet(2.0, UP_CEILING_S)
        self.snap0 = self.sim.collect(self.sm_host)
        self.lids0 = du.lids(self.snap0)
        ok, detail = h.check_routes(self.snap0)
        if not ok:
            raise RuntimeError("not every pair delivered before any fault: %s" % detail)
        self.write_policy(self.policy_members)        # now with the members' GUIDs
        self.master.popen.send_signal(signal.SIGHUP)
        self.settle(0, False)
        self.mlid_base = self.mlids_in_use() or 0
        self.rss0 = rss_kib(self.master.pid)
        end = self.t0 + self.a.minutes * 60
        step = nfound = 0
        while time.time() < end and (not self.a.steps or step < self.a.steps):
            step += 1
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
                    self.master.stop()
                    self.start_master()
                    self.settle(0, True)
            if self.rejoin:
                self.rejoin_groups(step)
            s = self.sample(step, took, faults)
            if self.a.keep and len(self.found) > nfound:
                self.keep(step)
            nfound = len(self.found)
            log("step %d %s: %s up in %.1fs, %d nodes, routes %s, LIDs %s, RSS %s KiB, fds %s, MLIDs %s" % (
                step, " + ".join(f[0] for f in faults), "" if settled else "NOT", took, s["nodes"],
                "ok" if s["delivered"] else "BAD", "kept" if s["lids_kept"] else "CHANGED",
                s["rss_kib"], s["fds"], s["mlids"]))
        self.reap_storms(True)
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

    def report(self, steps):
        storms = [s for s in self.storms if s.get("sent")]
        rss = [s["rss_kib"] for s in self.samples if s["rss_kib"]]
        tail = rss[len(rss) // 2:] or rss
        growth = (max(tail) - self.rss0) / self.rss0 if rss and self.rss0 else None
        return {
            "net": self.sim.net, "seed": self.a.seed, "engine": self.a.engine,
            "minutes": round((time.time() - self.t0) / 60, 2), "steps": steps, "faults": self.faults,
            "samples": len(self.samples),
            "undelivered_after_up": sum(1 for s in self.samples if not s["delivered"]),
            "credit_loops": sum(1 for s in self.samples if s["credit_loop"]),
            "lids_changed": sum(1 for s in self.samples if not s["lids_kept"]),
            "rss_kib_start": self.rss0, "rss_kib_end": rss[-1] if rss else None,
            "rss_kib_max": max(rss) if rss else None, "rss_growth": growth,
            "fds": [min(s["fds"] for s in self.samples if s["fds"]) if self.samples else None,
                    max(s["fds"] for s in self.samples if s["fds"]) if self.samples else None],
            "mlids_max": max((s["mlids"] or 0) for s in self.samples) if self.samples else None,
            "sa_queries": sum(s["answered"] for s in storms),
            "sa_timeouts": sum(s["timeouts"] or 0 for s in storms),
            "sa_p99_ms_max": max((s["p99_ms"] or 0) for s in storms) if storms else None,
            "sa_max_ms": max((s["max_ms"] or 0) for s in storms) if storms else None,
            "found": ["step %d: %s" % f for f in self.found],
        }


def markdown(rep):
    lines = ["# Chaos run %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "",
             "`%s`, engine %s, seed %d, %.1f minutes, %d steps, %d samples." % (
                 os.path.basename(rep["net"]), rep["engine"], rep["seed"], rep["minutes"], rep["steps"],
                 rep["samples"]), "",
             "| faults injected | count |", "|---|---|"]
    lines += ["| %s | %d |" % (k, v) for k, v in sorted(rep["faults"].items())]
    lines += ["", "| measure | value |", "|---|---|"]
    for k in ("undelivered_after_up", "credit_loops", "lids_changed", "rss_kib_start", "rss_kib_end",
              "rss_kib_max", "rss_growth", "fds", "mlids_max", "sa_queries", "sa_timeouts", "sa_p99_ms_max",
              "sa_max_ms"):
        lines.append("| %s | %s |" % (k, rep[k]))
    lines += ["", "Found: %s" % ("nothing" if not rep["found"] else "")]
    lines += ["- %s" % f for f in rep["found"]]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: by --minutes only)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--net", help="an ibsim net file (default tests/fabrics/ftree-3l.net)")
    ap.add_argument("--hosts", type=int, help="a 3-level XGFT fat tree of about this many hosts instead")
    ap.add_argument("--engine", default="updn")
    ap.add_argument("--sweep", type=int, default=10, help="light sweep interval, seconds (-s)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="fault kinds, comma separated")
    ap.add_argument("--sm-arg", action="append", default=[], help="one more ibsm argument")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--md", help="write the markdown report here")
    ap.add_argument("--keep", help="copy the logs of each step that found something under this directory")
    a = ap.parse_args(argv)
    a.kinds = tuple(k for k in a.kinds.split(",") if k)
    bad = [k for k in a.kinds if k not in KINDS]
    if bad:
        ap.error("unknown fault kind %s (known: %s)" % (", ".join(bad), ", ".join(KINDS)))
    net = a.net or os.path.join(ROOT, "tests", "fabrics", "ftree-3l.net")
    tmp = None
    if a.hosts:
        tmp = tempfile.mkdtemp(prefix="chaos-net.")
        k = max(2, round(a.hosts ** (1 / 3)))
        net = os.path.join(tmp, "xgft.net")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "genfab.py"), "xgft", "--m",
                        "%d,%d,%d" % (k, k, max(1, a.hosts // (k * k))), "--w", "1,%d,%d" % (k, k),
                        "-o", net], check=True)
    sa_load = build_sa_load(h.build_dir())
    with h.Sim(net, lmc=0) as sim:
        rep = Chaos(sim, a, sa_load).run()
    h.cleanup()
    if tmp:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
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
