#!/usr/bin/env python3
"""63-logs.t - the logs where operators look, judged where they arrive:
A. syslog (a datagram socket of the test's own named by syslog_socket): entering DISCOVERING
   and MASTER, SUBNET UP, as daemon.info under log_prefix with ibsm's pid, whatever
   syslog_log_level says; systemd's STATUS (a NOTIFY_SOCKET of the test's own) says MASTER and
   SUBNET UP; the SMInfo ActivityCount `sminfo` reads moves between heavy sweeps (light sweeps
   every second); the activity report (activity_report_subjects: all) lists the routing run,
   the partitions made, the keys each port got, the IPoIB group, a join and a leave by a
   client (tests/clients/mc_member) with its port GUID and the group's tree computed for it;
   a better SM (-p 15) started on h5 takes over: STATUS follows to STANDBY naming it, and the handover reaches
   syslog; it stops: STATUS is back at MASTER, SUBNET UP; SIGTERM: STATS lines after the stop
   line, the partitions deleted for the shutdown in the report.
B. syslog_state_changes false: not one datagram from a whole --once run.
C. start-up errors (-g naming no local port, a cache directory that cannot be made) reach the
   log file, stderr (once) and syslog as daemon.err.
Conditions are polled with a generous bound; seconds are never judged."""
import os
import re
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=13, timeout=400, need=("sminfo",))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: this test is about ibsm's own logs")
mc_member = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
IPOIB = "ff12:401b:ffff::ffff:ffff"


class Listener:
    """A unix datagram socket read by a thread: every datagram kept, in order."""

    def __init__(self, path):
        self.path, self.got, self.lock = path, [], threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                d = self.sock.recv(65536).decode(errors="replace")
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.got.append(d)

    def lines(self):
        with self.lock:
            return list(self.got)

    def wait(self, pattern, timeout=POLL_S, start=0):
        rx, end = re.compile(pattern), h.deadline(timeout)
        while True:
            for d in self.lines()[start:]:
                if rx.search(d):
                    return d
            if time.time() > end:
                return None
            time.sleep(0.1)

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()


def statuses(notify):
    return [l[len("STATUS="):] for d in notify.lines() for l in d.split("\n") if l.startswith("STATUS=")]


def act_count(sim, host):
    info, r = sim.sminfo(host)
    m = re.search(r"activity count (\d+)", r.out)
    return (int(m.group(1)) if m else None), r.text.strip()


def port_of(sim, snap, ca):
    node = sim.node(snap, ca)
    return node.ports[min(node.ports)]


# ---- A
with h.Sim(net) as sim:
    sys_l = Listener(sim.path("syslog.sock"))
    note = Listener(sim.path("notify.sock"))
    parts = sim.path("partitions.conf")
    with open(parts, "w") as f:
        f.write("Default=0x7fff, ipoib : ALL=full ;\nStorage=0x0002 : ALL=full ;\n")
    conf = sim.path("logs.yaml")
    with open(conf, "w") as f:
        f.write("syslog_socket: %s\nlog_prefix: ibsm-t\nsweep_interval: 1\nsyslog_log_level: 0\n"
                "activity_report_subjects: all\n" % sys_l.path)
    log = sim.path("ibsm1.log")
    env = sim.env("h1", NOTIFY_SOCKET=note.path)
    # a NOTIFY_SOCKET makes ibsm write its pid file: the test's own, not /run/ibsm's (two runs of
    # the suite at once, or another test beside this one, would find each other's SM there)
    sm1 = sim.start_sm(["-F", conf, "-f", log, "--pid_file", sim.path("ibsm1.pid"), "-p", "0", "-P", parts,
                        "--sminfo_polling_timeout", "1000",
                          "--polling_retry_number", "3"], env=env, name="ibsm1")
    up = sm1.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    pid_rx = r"^<30>\w{3} [ \d]\d \d\d:\d\d:\d\d ibsm-t\[%d\]: INFO " % sm1.pid
    got = [sys_l.wait(pid_rx + c, 10) for c in ("SWP-0021 entering DISCOVERING", "SWP-0016 entering MASTER",
                                                "SWP-0002 SUBNET UP")]
    tap.ok(up and all(got), "syslog: entering DISCOVERING, entering MASTER, SUBNET UP as daemon.info, "
           "ibsm-t[pid] (syslog_log_level 0)", "\n".join(sys_l.lines()[:10]) + h.tail(log))
    st = note.wait(r"STATUS=MASTER: SUBNET UP \(24 nodes, 8 switches\)")
    tap.ok(st is not None, "systemd STATUS: MASTER: SUBNET UP (24 nodes, 8 switches)", " | ".join(statuses(note)))

    snap, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    heavy0 = len(re.findall(r"SWP-0005 heavy sweep", h.read(log)))
    a0, t0 = act_count(sim, "h9")
    time.sleep(3)  # an observation window for the heavy sweep that must not come; then the event
    a1, t1 = h.until(lambda: (lambda a: a if a[0] is not None and a0 is not None and a[0] > a0 else None)(
        act_count(sim, "h9")), 30, 0.5) or act_count(sim, "h9")
    heavy1 = len(re.findall(r"SWP-0005 heavy sweep", h.read(log)))
    tap.ok(a0 is not None and a1 is not None and a1 > a0 and heavy1 == heavy0,
           "sminfo's ActivityCount moves with light sweeps alone (%s -> %s; heavy sweeps %d -> %d)"
           % (a0, a1, heavy0, heavy1), t0 + "\n" + t1)

    # the activity report
    dump = os.path.join(sim.osmdir, "opensm-activity.dump")
    text = h.read(dump)
    ca_guids = {p.guid for n in snap.nodes.values() if n.type != "SW" for p in n.ports.values()}
    added = {int(m.group(1), 16) for m in re.finditer(
        r"^\S+ \S+ 3 prtn_guid_add port_guid=0x([0-9a-f]{16}) port=\d+ pkey=0x8002 block_index=\d+ "
        r"pkey_index=\d+$", text, re.M)}
    want = [r" 9 routing_succeed routing_engine=minhop$", r" 4 prtn_create pkey=0x7fff prtn_name=Default$",
            r" 4 prtn_create pkey=0x0002 prtn_name=Storage$",
            r" 2 mcg_change mlid=0xc000 mgid=ff12:401b:ffff:0000:0000:0000:ffff:ffff change=0$"]
    missing = [w for w in want if not re.search(w, text, re.M)]
    tap.ok(not missing and ca_guids <= added,
           "activity report: routing_succeed (minhop), prtn_create of both partitions, prtn_guid_add "
           "of 0x8002 for all %d CA ports, the IPoIB group made (mcg_change)"
           % len(ca_guids), "missing %s; CA ports without prtn_guid_add: %s\n%s" %
           (missing, sorted("%x" % g for g in ca_guids - added)[:4], text[-1500:]))
    p3 = port_of(sim, snap, "h3")
    rx_j = r" 1 mcm_member mlid=0xc000 mgid=ff12:401b:ffff:0000:0000:0000:ffff:ffff port_guid=0x%016x join_state=1$" % p3.guid
    rx_l = rx_j.replace("join_state=1", "join_state=-1")
    rx_t = r" 8 mcg_tree_calc mlid=0xc000$"
    # the join, and the tree the SM computes after it (a leave right behind it may be taken in
    # the same pass: then the group is empty and no tree is computed), then the leave
    j = sim.run([mc_member, IPOIB], host="h3", timeout=30)
    end = h.deadline(POLL_S)
    while time.time() < end and not (re.search(rx_j, h.read(dump), re.M) and re.search(rx_t, h.read(dump), re.M)):
        time.sleep(0.2)
    tree = re.search(rx_t, h.read(dump), re.M)
    lv = sim.run([mc_member, "-l", IPOIB], host="h3", timeout=30)
    end = h.deadline(POLL_S)
    while time.time() < end and not re.search(rx_l, h.read(dump), re.M):
        time.sleep(0.2)
    tap.ok(j.rc == 0 and lv.rc == 0 and re.search(rx_j, h.read(dump), re.M) and re.search(rx_l, h.read(dump), re.M)
           and tree, "h3 joins and leaves the IPoIB group: mcm_member join_state 1 then -1 with its port "
           "GUID, the group's tree computed (mcg_tree_calc)",
           j.describe() + lv.describe() + h.read(dump)[-800:])

    # a better SM takes over: STATUS and syslog follow
    p5 = port_of(sim, snap, "h5")
    mark = len(sys_l.lines())
    log2 = sim.path("ibsm2.log")
    sm2 = sim.start_sm(["-f", log2, "-p", "15"], host="h5", name="ibsm2")
    st = note.wait(r"STATUS=STANDBY: master 0x%016x" % p5.guid)
    tap.ok(st is not None, "the better SM on h5 took over: STATUS says STANDBY: master 0x%016x" % p5.guid,
           " | ".join(statuses(note)) + h.tail(log))
    hand = [sys_l.wait(pid_rx + c, 10, mark) for c in ("SMI-0011 ", "SMI-0012 ", "SWP-0015 entering STANDBY")]
    tap.ok(all(hand), "the handover reaches syslog: HANDOVER sent, taken, entering STANDBY",
           "\n".join(sys_l.lines()[mark:mark + 12]))
    mark = len(note.lines())
    rc2 = du.signal_and_wait(sm2, signal.SIGTERM)
    sm2.stop()
    st = note.wait(r"STATUS=MASTER: SUBNET UP", POLL_S, mark)
    tap.ok(rc2 == 0 and st is not None, "h5's SM stopped (exit %s): STATUS back at MASTER: SUBNET UP" % rc2,
           " | ".join(statuses(note)) + h.tail(log))

    mark = du.size(log)
    rc = du.signal_and_wait(sm1, signal.SIGTERM)
    sm1.stop()
    tail = du.since(log, mark)
    stop_at = tail.find("LOOP-0002")
    tap.ok(rc == 0 and stop_at >= 0 and re.search(r"STS-0003 STATS total smps=\d+", tail[stop_at:]) and
           re.search(r"STS-0002 STATS transport sent=", tail[stop_at:]),
           "SIGTERM (exit %s): the STATS lines come after the stop line" % rc, tail[-1200:])
    text = h.read(dump)
    tap.ok(re.search(r" 5 prtn_delete pkey=0x0002 delete_reason=2$", text, re.M) and
           re.search(r" 5 prtn_delete pkey=0x7fff delete_reason=2$", text, re.M),
           "the activity report: both partitions deleted for the shutdown (reason 2)", text[-600:])
    sys_l.close()
    note.close()

# ---- B and C: --once runs
with h.Sim(h.fabric("tiny.net")) as sim:
    sys_l = Listener(sim.path("syslog.sock"))
    conf = sim.path("quiet.yaml")
    with open(conf, "w") as f:
        f.write("syslog_socket: %s\nsyslog_state_changes: false\n" % sys_l.path)
    r = sim.run_sm(["--once", "-F", conf, "-f", sim.path("quiet.log")], count=False)
    time.sleep(0.5)  # an observation window: what must not be sent
    quiet = sys_l.lines()
    conf2 = sim.path("loud.yaml")
    with open(conf2, "w") as f:
        f.write("syslog_socket: %s\n" % sys_l.path)
    r2 = sim.run_sm(["--once", "-F", conf2, "-f", sim.path("loud.log")], count=False)
    loud = sys_l.wait(r"SWP-0002 SUBNET UP", 10)
    tap.ok(r.rc == 0 and not quiet and r2.rc == 0 and loud,
           "syslog_state_changes false: no datagram in a whole --once run (the same run with the "
           "default sends SUBNET UP)", "%s\n%s" % (quiet[:3], r.describe()))

    mark = len(sys_l.lines())
    log = sim.path("badguid.log")
    r = sim.run_sm(["--once", "-F", conf2, "-f", log, "-g", "0x1234"], count=False)
    rx = r"PORT-0006 -g 0x0000000000001234: no local port has this GUID; local ports: \S+ port 1 GUID 0x"
    tap.ok(1 <= r.rc <= 127 and re.search(rx, h.read(log)) and len(re.findall(rx, r.err)) == 1 and
           sys_l.wait(r"^<27>.*ERR  " + rx, 10, mark),
           "-g naming no local port: exit %d, the error in the log file, once on stderr, in syslog "
           "as daemon.err" % r.rc, r.describe() + h.tail(log))
    log = sim.path("cache.log")
    env = sim.env(OSM_CACHE_DIR="/proc/nonexistent/ibsm")
    r = sim.run_sm(["--once", "-F", conf2, "-f", log], env=env, count=False)
    rx = r"SM-0008 cache directory /proc/nonexistent/ibsm is not writable"
    tap.ok(1 <= r.rc <= 127 and re.search(rx, h.read(log)) and len(re.findall(rx, r.err)) == 1,
           "a cache directory that cannot be made: exit %d, said in the log file and once on stderr"
           % r.rc, r.describe() + h.tail(log))
    sys_l.close()
tap.done()
