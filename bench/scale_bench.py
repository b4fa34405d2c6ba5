#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""scale_bench.py - the largest-subnet section of `make bench`: ibsm and OpenSM one after the
other, each on a fresh ibsim, on a 3-level XGFT fat tree near the top of the unicast LID space
(default 39936 hosts + 5248 switches = 45184 LIDs of the 49151, ibsim run with -L 49152 so
every switch's LinearFDBCap covers them). For each SM: ibsim's start time and peak RSS, the
SM's time from start to SUBNET UP, its CPU, peak RSS (VmHWM) and SMPs at that moment, then
(--hup) the no-change SIGHUP re-sweep time, then delivery on --pairs random host pairs judged
by what the switches hold: ibtracert -G (infiniband-diags) resolves both port GUIDs through
the SA and walks the path switch by switch reading each one's LinearForwardingTable block
(SubnGet, IBA 14.2.5.10), so a pair is delivered when the walk ends at the destination CA.
Then ibsm routes the same fabric offline (--fabric, IBSM_FABRIC_LFT_CAP=49152) with each of
--offline-engines for routing time and peak RSS without ibsim. An SM that is not up within
--timeout seconds (default 3600) is reported as such. Results: markdown on stdout and in
bench/results/scale-<date>.md (and .json). Every process is stopped by pid on every path.

usage: scale_bench.py [--hosts 39936] [--engine minhop] [--timeout 3600] [--pairs 200]
                      [--hup 1] [--only ibsm|OpenSM] [--offline-engines minhop,ftree,updn]
                      [--ibsm PATH] [--keep] [--no-save]"""
import datetime
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
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (processes, fabrics, the two SMs)
import genfab  # noqa: E402

LFT_CAP = 49152          # ibsim -L: LinearFDBCap of every switch (the whole unicast range)
SIM_START_LIMIT = 1800   # ibsim parses a 45k-node net file in minutes


def host_guids(fabric, work):
    """The CA port GUIDs of the fabric (genfab's --cns list)."""
    m, w = B.FABRICS[fabric.hosts]
    path = os.path.join(work, "fabrics", fabric.name + ".cns")
    genfab.write_xgft(fabric.net, m, w, cns=path)
    with open(path) as f:
        return [line.split()[0] for line in f if line.strip()]


TRACE_END = re.compile(r"-> ca port \{(0x[0-9a-f]+)\}\[\d+\].*\nTo ca ", re.M)
TRACE_HOP = re.compile(r"-> switch port", re.M)


def check_pairs(sim, umad2sim, rundir, pairs):
    """ibtracert -G over each (src, dst) port GUID pair; {'pairs', 'delivered', 'failed': [..],
    'hops': {switches on the path: count}, 'seconds'}."""
    env = sim.client_env(umad2sim, rundir)
    res = {"pairs": len(pairs), "delivered": 0, "failed": [], "hops": {}}
    t0 = time.monotonic()
    for src, dst in pairs:
        try:
            p = subprocess.run(["ibtracert", "-G", src, dst], cwd=rundir, env=env,
                               capture_output=True, text=True, timeout=60,
                               preexec_fn=B._child_setup)
            text, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired:
            text, rc = "", "timeout"
        end = TRACE_END.search(text)
        if rc == 0 and end and int(end.group(1), 16) == int(dst, 16):
            res["delivered"] += 1
            n = len(TRACE_HOP.findall(text))
            res["hops"][n] = res["hops"].get(n, 0) + 1
        elif len(res["failed"]) < 10:
            res["failed"].append({"src": src, "dst": dst, "rc": rc,
                                  "tail": (text + (p.stderr if rc != "timeout" else ""))[-300:]})
        else:
            res["failed"].append({"src": src, "dst": dst})
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["hops"] = {str(k): v for k, v in sorted(res["hops"].items())}
    return res


def run_sm(sm, fabric, rundir, umad2sim, timeout, hups, pairs):
    """One SM on a fresh ibsim: up, SIGHUP re-sweeps, sampled delivery; the result dict."""
    os.makedirs(rundir, exist_ok=True)
    res = {"sm": sm.name, "hosts": fabric.hosts, "up": False}
    sys.stderr.write("scale: ibsim for %s (%s)\n" % (sm.name, fabric.label))
    sim = B.Sim(fabric, rundir, args=["-L", str(LFT_CAP)], start_limit=SIM_START_LIMIT)
    p = None
    try:
        res["ibsim_start_s"] = round(sim.start_s, 1)
        res["ibsim_rss_kib"] = B.proc_hwm_kib(sim.proc.pid)
        log, out = os.path.join(rundir, "sm.log"), os.path.join(rundir, "sm.out")
        cmd = sm.command(log)
        res["cmd"] = " ".join(cmd)
        sys.stderr.write("scale: %s up (limit %d s)\n" % (sm.name, timeout))
        watch = B.LogWatch(log)
        t0 = time.monotonic()
        p = B.PROCS.start(cmd, rundir, sim.client_env(umad2sim, rundir), out)
        hwm = 0
        while time.monotonic() - t0 < timeout:
            if watch.seen("SUBNET UP"):
                res["up"] = True
                break
            if p.poll() is not None:
                break
            hwm = max(hwm, B.proc_hwm_kib(p.pid) or 0)
            time.sleep(0.05)
        res["wall_s"] = round(time.monotonic() - t0, 1)
        res["cpu_s"] = B.proc_cpu(p.pid)
        res["rss_kib"] = B.proc_hwm_kib(p.pid) or hwm or None
        res["ibsim_cpu_s"] = sim.cpu()
        if not res["up"]:
            res["error"] = ("not up within %d s" % timeout if p.poll() is None
                            else "exited with status %s" % p.returncode)
            res["log_tail"] = B.tail_of(log, 800) + B.tail_of(out, 400)
        else:
            sm.at_up(res)
            if hups:
                sys.stderr.write("scale: %s SIGHUP re-sweep\n" % sm.name)
                res["hup"] = B.hup_sweeps(sm, p, sim, log, hups, timeout)
                res["rss_after_hup_kib"] = B.proc_hwm_kib(p.pid)
            if pairs:
                sys.stderr.write("scale: %s delivery on %d pairs\n" % (sm.name, len(pairs)))
                res["delivery"] = check_pairs(sim, umad2sim, rundir, pairs)
        res["ibsim_rss_end_kib"] = B.proc_hwm_kib(sim.proc.pid)
        res["exit"] = B.PROCS.stop(p)
        if res["up"]:
            sm.after_stop(res, log, out)
    finally:
        if p is not None:
            B.PROCS.stop(p)
        sim.stop()
    return res


def offline(binary, engine, fabric, work, timeout):
    rundir = os.path.join(work, "offline-" + engine)
    os.makedirs(rundir, exist_ok=True)
    extra = ["--once"]
    roots = os.path.join(work, "fabrics", fabric.name + ".roots")
    if engine in ("ftree", "updn"):
        m, w = B.FABRICS[fabric.hosts]
        genfab.write_xgft(fabric.net, m, w, roots=roots)
        extra += ["-a", roots]
    os.environ["IBSM_FABRIC_LFT_CAP"] = str(LFT_CAP)
    try:
        res = B.offline_run(binary, engine, fabric, rundir, timeout, extra)
    finally:
        os.environ.pop("IBSM_FABRIC_LFT_CAP", None)
    res["engine"] = engine
    return res


def mib(kib):
    return "%.0f" % (kib / 1024) if kib else "-"


def markdown(meta, runs, offl):
    lines = ["## The largest subnet (%s)" % meta["fabric"], "",
             "%s, %s. %d LIDs of the 49151 unicast ones; ibsim -L %d; engine %s; a fresh ibsim "
             "per SM (started in %s s, peak RSS %s MiB). Delivery: %d random host pairs, "
             "ibtracert -G walking the switches' LFTs. Load average (1 min) %s at the start, %s "
             "at the end: the machine's other work counts in every time." % (
                 meta["date"], meta["machine"], meta["maxlid"], LFT_CAP, meta["engine"],
                 "/".join(str(r.get("ibsim_start_s", "-")) for r in runs),
                 "/".join(mib(r.get("ibsim_rss_end_kib")) for r in runs), meta["pairs"],
                 meta.get("load_start", "?"), meta.get("load_end", "?")), "",
             "| SM | to SUBNET UP (s) | CPU (s) | peak RSS (MiB) | SMPs | SIGHUP re-sweep (s) "
             "| re-sweep SMPs | RSS after re-sweep (MiB) | delivered |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        if not r["up"]:
            lines.append("| %s | not up: %s | %s | %s | | | | | |" % (
                r["sm"], r.get("error", "?"), r.get("cpu_s") or "-", mib(r.get("rss_kib"))))
            continue
        h = (r.get("hup") or [{}])[0]
        d = r.get("delivery") or {}
        lines.append("| %s | %.1f | %s | %s | %s | %s | %s | %s | %s |" % (
            r["sm"], r["wall_s"], r.get("cpu_s") or "-", mib(r.get("rss_kib")),
            r.get("smps", "-"), h.get("wall_s", "-") if "error" not in h else h["error"],
            h.get("smps", "-"), mib(r.get("rss_after_hup_kib")),
            "%d/%d" % (d["delivered"], d["pairs"]) if d else "-"))
    by = {r["sm"]: r for r in runs}
    if by.get("OpenSM", {}).get("up") and by.get("ibsm", {}).get("up"):
        a, b = by["ibsm"], by["OpenSM"]
        lines += ["", "- ibsm/OpenSM: time to SUBNET UP %.2f, peak RSS %.2f" % (
            a["wall_s"] / b["wall_s"], (a["rss_kib"] or 0) / max(b["rss_kib"] or 1, 1))]
    for r in runs:
        d = r.get("delivery")
        if d:
            lines.append("- %s: switches on the sampled paths %s; %d failed" % (
                r["sm"], ", ".join("%s: %d" % kv for kv in d["hops"].items()),
                len(d["failed"])))
    if offl:
        lines += ["", "Offline (`ibsm --fabric`, no MADs, no dumps):", "",
                  "| engine | routing (s) | wall (s) | peak RSS (MiB) |", "|---|---|---|---|"]
        for o in offl:
            if "error" in o:
                lines.append("| %s | %s | | |" % (o["engine"], o["error"]))
            else:
                lines.append("| %s | %.2f | %.2f | %s |" % (o["engine"], o["routing_s"],
                                                           o["wall_s"], mib(o["rss_kib"])))
    return "\n".join(lines) + "\n"


def main(argv):
    def add(ap):
        ap.add_argument("--pairs", type=int, default=200)
        ap.add_argument("--hup", type=int, default=1)
        ap.add_argument("--seed", type=int, default=29)
        ap.add_argument("--offline-engines", default="minhop,ftree,updn")
    a = B.section_args("OpenSM and ibsm on the largest subnet", 39936, argv, add)
    if a.timeout == 900:      # section_args' default: this section's is an hour
        a.timeout = 3600
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, B._on_signal)
    umad2sim = B.find_umad2sim()
    work = tempfile.mkdtemp(prefix="ibsm-scale.")
    try:
        fabric = B.Fabric(a.hosts, work)
        guids = host_guids(fabric, work)
        rng = random.Random(a.seed)
        pairs = []
        while len(pairs) < a.pairs:
            s, d = rng.sample(guids, 2)
            pairs.append((s, d))
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                "fabric": fabric.label + " hosts/switches", "machine": "%d cores" % os.cpu_count(),
                "maxlid": fabric.size["hosts"] + fabric.size["switches"], "engine": a.engine,
                "pairs": len(pairs), "timeout_s": a.timeout,
                "load_start": round(os.getloadavg()[0], 2)}
        runs = []
        # ibsm first: OpenSM may run into the limit, and nothing after it then waits on it
        for sm in (B.Ibsm(a.ibsm, a.engine, []), B.OpenSM(work, a.engine)):
            if a.only and sm.name != a.only:
                continue
            runs.append(run_sm(sm, fabric, os.path.join(work, sm.name), umad2sim, a.timeout,
                               a.hup if sm.name == "ibsm" else 0, pairs))
        offl = []
        for e in filter(None, a.offline_engines.split(",")):
            sys.stderr.write("scale: offline %s\n" % e)
            offl.append(offline(a.ibsm, e, fabric, work, 1800))
        meta["load_end"] = round(os.getloadavg()[0], 2)
        text = markdown(meta, runs, offl)
        sys.stdout.write(text)
        if not a.no_save:
            B.save_results("scale", text, meta, runs + [{"offline": offl}])
    finally:
        B.PROCS.stop_all()
        if a.keep:
            sys.stderr.write("scale: kept %s\n" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
