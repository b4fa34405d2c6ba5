#!/usr/bin/env python3
"""61-perfmgr.t - the performance manager (OpenSM's perfmgr keys) on a simulated fabric,
judged by the diags and by ibsim's own account of the MADs it received. With `--perfmgr
--perfmgr_sweep_time_s 2`: PerfMgt Gets reach the fabric and read every linked port (switch and CA ports, no other); a
SymbolErrorCounter raised in the
simulator (ibsim console PerformanceSet) is logged within a few perfmgr sweeps, naming the
node's description and the port; the console's `perfmgr print_counters NODE PORT` shows what
`perfquery` reads on that port (every error counter), on a switch port and on a CA port; a
counter past half its range is cleared by the perfmgr (perfquery sees it drop) while the
running total keeps counting; `perfmgr disable` stops every PerfMgt MAD and `perfmgr enable`
brings them back. Without --perfmgr: not one PerfMgt MAD. On a larger fabric (ftree-3l, 384
linked ports) with a sweep every second, the SA and the SM's SMInfo keep answering at once while
the perfmgr reads every port (a burst of GMPs once deadlocked the SM under umad2sim). Console over the unix socket (the
protocol of doc/console.md; ibsm-cli when built)."""
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 60
PERF_CLASS = 0x04
ERROR_COUNTERS = [  # perfquery's names -> the console's JSON keys
    ("SymbolErrorCounter", "symbol_err"), ("LinkErrorRecoveryCounter", "link_err_recover"),
    ("LinkDownedCounter", "link_downed"), ("PortRcvErrors", "rcv_err"),
    ("PortRcvRemotePhysicalErrors", "rcv_rmt_phys_err"),
    ("PortRcvSwitchRelayErrors", "rcv_switch_relay_err"), ("PortXmitDiscards", "xmit_discards"),
    ("PortXmitConstraintErrors", "xmit_constraint_err"),
    ("PortRcvConstraintErrors", "rcv_constraint_err"),
    ("LocalLinkIntegrityErrors", "link_integrity_err"),
    ("ExcessiveBufferOverrunErrors", "buffer_overrun_err"), ("VL15Dropped", "vl15_dropped")]

tap = h.start(plan=17, timeout=600, need=("perfquery", "smpquery"))
net = h.need_fabric(tap, "tiny.net")


def console(sock_path, line, timeout=10.0):
    """One command over the unix socket console: (ok, text or parsed JSON)."""
    cli = os.path.join(h.build_dir(), "ibsm-cli")
    words = line.split()
    as_json = words[0] == "json"
    if os.access(cli, os.X_OK):
        argv = [cli, "--socket", sock_path] + (["--json"] if as_json else []) + words[as_json:]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=h.patience(timeout))
        out = r.stdout
        ok = r.returncode == 0
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(sock_path)
        s.sendall((line + "\n").encode())
        buf = b""
        while not re.search(rb"(^|\n)\.(OK|ERR -?\d+)\n$", buf):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        text = buf.decode(errors="replace")
        ok = text.rstrip().endswith(".OK")
        out = "\n".join(l[1:] if l.startswith("..") else l
                        for l in text.splitlines() if not re.match(r"^\.(OK|ERR)", l))
    if as_json:
        try:
            return ok, json.loads(out)
        except ValueError:
            return False, out
    return ok, out


def wait_console(sock_path, cond, timeout=POLL_S, line="json perfmgr"):
    """Polls a console command until COND(reply) holds; the last reply."""
    end = h.deadline(timeout)
    last = None
    while time.time() < end:
        try:
            ok, last = console(sock_path, line)
            if ok and cond(last):
                return True, last
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.3)
    return False, last


def perfquery(sim, lid, port):
    r = sim.run(["perfquery", str(lid), str(port)], timeout=20)
    vals = {}
    for name, value in re.findall(r"^(\w+):\.*(\d+)\s*$", r.text, re.M):
        vals[name] = int(value)
    return vals, r.text


def lid_of(sim, dr):
    t = sim.run(["smpquery", "-D", "portinfo", dr, "0" if dr.count(",") == 1 else "1"]).text
    m = re.search(r"^Lid:\.*(\d+)", t, re.M)
    return int(m.group(1)) if m else None


def perf_mads(counts):
    return sum(n for (cls, _m, _a), n in counts.items() if cls == PERF_CLASS)


def compare(reply, pq):
    """Every error counter: the port's last value in the console equals perfquery's."""
    if not isinstance(reply, dict) or not reply.get("ports"):
        return False, "no port in the reply: %r" % (reply,)
    last = reply["ports"][0]["last"]
    bad = ["%s: console %s, perfquery %s" % (n, last.get(k), pq.get(n)) for n, k in ERROR_COUNTERS
           if last.get(k) != pq.get(n)]
    return not bad, "; ".join(bad) or "%d error counters equal" % len(ERROR_COUNTERS)


with h.Sim(net) as sim:
    sw1 = sim.netfile.desc.get("sw1", "sw1")
    log = sim.path("ibsm.log")
    sock = sim.path("console.sock")
    sm = sim.start_sm(["-f", log, "-s", "0", "--perfmgr", "--perfmgr_sweep_time_s", "2",
                       "--console_socket", sock], host="h1", name="ibsm")
    try:
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        swept, st = wait_console(sock, lambda j: j.get("sweeps", 0) >= 1)
        tap.ok(up and swept, "SUBNET UP, then a perfmgr sweep (console `perfmgr`: sweeps %s)"
               % (st or {}).get("sweeps") if isinstance(st, dict) else "no status",
               h.tail(log) + "\n%r" % (st,))
        sim.trace_start()
        h.until(lambda: perf_mads(sim.trace_counts(stop=False)) > 0, 30, 0.5)
        on = perf_mads(sim.trace_counts())
        tap.ok(on > 0, "--perfmgr: PerfMgt MADs reach the fabric (%d)" % on)
        want = sorted("%s:%d" % (sim.netfile.desc.get(n, n), p) for l in sim.netfile.links for n, p in l)
        ok, rep = console(sock, "json perfmgr print_counters")
        got = sorted("%s:%d" % (p["desc"], p["port"]) for p in rep.get("ports", [])) if ok else rep
        tap.is_(got, want, "every linked port of the net file read, and no other (%d)" % len(want))

        # ---- an error counter raised in the simulator is logged with node and port
        sw1_lid = lid_of(sim, "0,1")
        sim.console('PerformanceSet "sw1"[7] PortCounters.SymbolErrorCounter=500')
        pat = r"PERF-0006 .*\"%s\".* port 7 .*SymbolErrorCounter \+500" % re.escape(sw1)
        logged = sm.wait_for(log, pat, 20)
        tap.ok(logged, "SymbolErrorCounter 500 on sw1 port 7 logged naming \"%s\" and port 7" % sw1,
               h.tail(log, 10))

        # ---- the console's counters equal perfquery's
        pq, pq_text = perfquery(sim, sw1_lid, 7)
        ok, rep = console(sock, "json perfmgr print_counters %s 7" % sw1)
        tap.check("switch port: `perfmgr print_counters` equals perfquery (sw1 port 7)",
                  compare(rep, pq) if ok else (False, "%r" % (rep,)))
        tap.ok(ok and rep["ports"][0]["total"]["symbol_err"] == 500,
               "the running total of SymbolErrorCounter is 500", "%r" % (rep,))
        ok, text = console(sock, "perfmgr print_counters %s 7" % sw1)
        tap.ok(ok and re.search(r"SymbolErrorCounter\s+500\b", text),
               "text reply shows SymbolErrorCounter 500", text)
        sim.console('PerformanceSet "h3"[1] PortCounters.PortRcvErrors=7')
        h3_desc = sim.netfile.desc.get("h3", "h3")
        h3_lid = lid_of(sim, "0,1,7,1")
        got, rep = wait_console(sock, lambda j: j.get("ports") and j["ports"][0]["last"].get("rcv_err") == 7,
                                20, "json perfmgr print_counters %s 1" % h3_desc)
        pq, _ = perfquery(sim, h3_lid, 1)
        tap.check("CA port: `perfmgr print_counters` equals perfquery (h3 port 1)",
                  compare(rep, pq) if got else (False, "%r" % (rep,)))
        ok, rep = console(sock, "json perfmgr print_errors")
        names = sorted("%s:%d" % (p["desc"], p["port"]) for p in rep.get("ports", [])) if ok else rep
        tap.is_(names, sorted(["%s:7" % sw1, "%s:1" % h3_desc]), "`perfmgr print_errors` lists the two ports")

        # ---- past half its range: cleared by the perfmgr, the total goes on
        sim.console('PerformanceSet "sw1"[8] PortCounters.SymbolErrorCounter=40000')
        got, rep = wait_console(sock, lambda j: j.get("ports") and j["ports"][0]["total"]["symbol_err"] >= 40000,
                                20, "json perfmgr print_counters %s 8" % sw1)
        # the perfmgr's clear (a PortCounters Set) follows its read: poll the port for it
        pq, pq_text = h.until(lambda: (lambda q: q if q[0].get("SymbolErrorCounter", 99999) < 40000 else None)(
            perfquery(sim, sw1_lid, 8)), 30, 0.5) or perfquery(sim, sw1_lid, 8)
        tap.ok(got and pq.get("SymbolErrorCounter", 99999) < 40000,
               "SymbolErrorCounter 40000 (past half of 16 bits) cleared by the perfmgr (perfquery: %s)"
               % pq.get("SymbolErrorCounter"), pq_text)
        sim.console('PerformanceSet "sw1"[8] PortCounters.SymbolErrorCounter=25')
        got, rep = wait_console(sock, lambda j: j.get("ports") and j["ports"][0]["total"]["symbol_err"] == 40025,
                                20, "json perfmgr print_counters %s 8" % sw1)
        tap.ok(got, "the running total keeps counting after the clear: 40000 + 25", "%r" % (rep,))

        # ---- disable / enable from the console
        ok1, _ = console(sock, "perfmgr disable")
        time.sleep(0.5)  # an observation window from here: what must not happen
        sim.trace_start()
        time.sleep(4.5)  # (observation window)
        off = perf_mads(sim.trace_counts())
        ok2, _ = console(sock, "perfmgr enable")
        sim.trace_start()
        h.until(lambda: perf_mads(sim.trace_counts(stop=False)) > 0, 30, 0.5)
        again = perf_mads(sim.trace_counts())
        tap.ok(ok1 and off == 0, "`perfmgr disable`: no PerfMgt MAD in 4.5 s (%d)" % off)
        tap.ok(ok2 and again > 0, "`perfmgr enable`: PerfMgt MADs again (%d)" % again)
    finally:
        sm.stop()
    tap.ok(sm.popen.returncode == 0,
           "ibsm exits cleanly (status %s)" % sm.popen.returncode, sm.output()[-1000:])

    # ---- perfmgr off (the default): not one PerfMgt MAD
    log2 = sim.path("ibsm2.log")
    sm2 = sim.start_sm(["-f", log2, "-s", "0", "--console_socket", sim.path("c2.sock")],
                       host="h1", name="ibsm2")
    try:
        up = sm2.wait_for(log2, r"SUBNET UP", POLL_S)
        sim.trace_start()
        time.sleep(5)  # an observation window: what must not happen
        n = perf_mads(sim.trace_counts())
        tap.ok(up and n == 0, "without --perfmgr: no PerfMgt MAD (%d)" % n, h.tail(log2))
    finally:
        sm2.stop()

# ---- a larger fabric, a sweep every second: the SA and SMInfo answer meanwhile
big = h.fabric("ftree-3l.net")
with h.Sim(big) as sim:
    cas = sim.netfile.cas()
    log = sim.path("ibsm.log")
    sock = sim.path("console.sock")
    sm = sim.start_sm(["-f", log, "-s", "0", "--perfmgr", "--perfmgr_sweep_time_s", "1",
                       "--console_socket", sock], host=cas[0], name="ibsm")
    try:
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        n_links = len(sim.netfile.links) * 2
        swept, st = wait_console(sock, lambda j: j.get("sweeps", 0) >= 2 and j.get("ports") == n_links)
        slow = []
        for i in range(4):
            for argv, host in ((["saquery", "-s"], cas[-1]), (["sminfo"], cas[1])):
                t0 = time.time()
                r = sim.run(argv, host=host, timeout=10)
                dt = time.time() - t0
                if r.rc != 0 or dt > h.patience(3.0):  # a bound on being blocked, not a speed
                    slow.append("%s from %s: rc %s in %.1f s" % (argv[0], host, r.rc, dt))
            time.sleep(0.25)
        tap.ok(up and swept, "ftree-3l: the perfmgr sweeps every linked port (%d) each second" % n_links,
               "%r\n%s" % (st, h.tail(log)))
        tap.ok(up and not slow, "saquery and sminfo answer within 3 s while it sweeps (8 calls)",
               "; ".join(slow) + "\n" + h.tail(log))
    finally:
        sm.stop()
tap.done()
