#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""flame.py - where a bring-up's CPU goes: `perf record` around each SM's bring-up of a fat
tree on ibsim, folded into flame graphs (SVG) and a table of the hottest functions.

The bench's ratios say how far a bring-up is from the simulator's ceiling; this says where the
rest goes. Each SM (OpenSM 3.3.23 and ibsm, one after the other, each on a fresh ibsim) is
started under `perf record -g --call-graph dwarf` and stopped by pid once its log says SUBNET
UP (ibsm after the sweep's STATS lines); `perf script` is folded into one line per stack
("a;b;c count", the format flame graph tools read) and drawn here as an SVG flame graph: a
frame's width is its share of the samples, its children stand on it. The table lists the
functions with the most samples, self (on-CPU in the function itself) and inclusive.

    python3 bench/flame.py [--hosts 8192] [--engine ftree] [--ibsm build/ibsm]
                           [--only ibsm|OpenSM] [--frequency 499] [--keep] [--no-save]

Writes bench/results/flame-<date>.md, flame-<date>-<sm>.svg and .folded. Needs `perf`
(Debian linux-perf) and permission to profile one's own processes (perf_event_paranoid <= 2).
Every process is stopped by pid on every path (bench.py's Procs).

    python3 bench/flame.py --counts [--hosts 2048] [--repeat 3] [--ibsm build/ibsm]

--counts measures what depends little on how busy the machine is: ibsm's bring-up and
bench/smprate.c -r sending the same SMPs again (recorded by tests/tools/smpcount.so) are each
run under `perf stat` (system calls by kind, context switches), and the CPU both spent on the
SMPs is read (ibsm: /proc from DISCOVERING to SUBNET UP, all threads, umad2sim's receiver
included; smprate: its own getrusage around the sending), as is ibsim's CPU and how often it
slept for want of a request (its voluntary context switches): all per SMP. Wall-clock times
are printed too, as a noisy side note. Writes bench/results/persmp-<date>.md."""
import collections
import datetime
import html
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench as b  # noqa: E402

TOP = 25
MAX_DEPTH = 64


def children(pid):
    """The pids of pid's children (the workload perf forked)."""
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def profile(sm, fabric, rundir, umad2sim, freq, timeout):
    """One bring-up of `sm` under perf; returns (result dict, perf.data path or None)."""
    os.makedirs(rundir, exist_ok=True)
    res = {"sm": sm.name, "up": False}
    sim = b.Sim(fabric, rundir)
    perf = None
    data = os.path.join(rundir, "perf.data")
    try:
        log = os.path.join(rundir, "sm.log")
        env = sim.client_env(umad2sim, rundir)
        preload = env.pop("LD_PRELOAD")  # the SM's, not perf's
        cmd = ["perf", "record", "-q", "-F", str(freq), "-g", "--call-graph", "dwarf,16384",
               "-o", data, "--", "env", "LD_PRELOAD=" + preload] + sm.command(log)
        watch = b.LogWatch(log)
        t0 = time.monotonic()
        perf = b.PROCS.start(cmd, rundir, env, os.path.join(rundir, "perf.out"))
        while time.monotonic() - t0 < timeout and perf.poll() is None:
            if watch.seen("SUBNET UP"):
                res["up"] = True
                break
            time.sleep(b.POLL_S)
        res["wall_s"] = round(time.monotonic() - t0, 3)
        if res["up"] and sm.name == "ibsm":
            b.wait_stats_logged(log, 0)  # the sweep's own end
        # the workload stopped by its pid: perf writes its file and exits
        for pid in children(perf.pid):
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        try:
            perf.wait(120)
        except subprocess.TimeoutExpired:
            pass
        b.PROCS.stop(perf)
        if not res["up"]:
            res["error"] = "no SUBNET UP within %d s: %s" % (timeout, b.tail_of(log, 300))
    finally:
        if perf is not None:
            b.PROCS.stop(perf)
        sim.stop()
    return res, (data if os.path.exists(data) else None)


def fold(data):
    """perf script's stacks folded: Counter of 'root;...;leaf' -> samples."""
    r = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso", "--no-inline"],
                       capture_output=True, text=True, errors="replace")
    return fold_text(r.stdout)


def fold_text(text):
    """`perf script -F comm,ip,sym,dso` output folded (see fold)."""
    stacks = collections.Counter()
    frames = []

    def flush():
        if frames:
            # root first; a stack deeper than MAX_DEPTH (a recursion, or an unwind gone astray)
            # keeps its root end
            stacks[";".join(list(reversed(frames))[:MAX_DEPTH])] += 1
            frames.clear()
    for line in text.splitlines():
        s = line.strip()
        if not s:
            flush()
            continue
        if not line[0].isspace():
            flush()
            continue
        parts = s.split(None, 1)
        sym = parts[1] if len(parts) > 1 else parts[0]
        dso = ""
        if sym.endswith(")") and " (" in sym:
            sym, dso = sym.rsplit(" (", 1)
            dso = os.path.basename(dso[:-1])
        sym = sym.split("+0x")[0]
        if sym in ("[unknown]", ""):
            sym = "[%s]" % (dso or "unknown")
        frames.append(sym.replace(";", ":"))
    flush()
    return stacks


def top_functions(stacks):
    """(self, inclusive) Counters per function name."""
    own, incl = collections.Counter(), collections.Counter()
    for stack, n in stacks.items():
        fr = stack.split(";")
        own[fr[-1]] += n
        for f in set(fr):
            incl[f] += n
    return own, incl


def svg(stacks, title, width=1200, row=16):
    """A flame graph: root at the bottom, a frame as wide as its samples."""
    tree = {}
    for stack, n in stacks.items():
        node = tree
        for f in stack.split(";"):
            node = node.setdefault(f, [0, {}])
            node[0] += n
            node = node[1]
    total = sum(stacks.values()) or 1
    rects = []

    levels = max((s.count(";") + 1 for s in stacks), default=1)
    height = (levels + 2) * row + 30

    def walk(t, x, level):
        for name, (n, kids) in sorted(t.items()):
            w = n * (width - 20) / total
            if w >= 0.3:
                y = height - (level + 2) * row
                hue = zlib.crc32(name.encode()) % 60
                label = html.escape(name)
                pct = 100.0 * n / total
                text = label if w > 7 * len(name) else (label[:int(w / 7) - 2] + ".." if w > 28 else "")
                rects.append('<g><title>%s (%d samples, %.2f%%)</title><rect x="%.1f" y="%d" width="%.1f" '
                             'height="%d" fill="rgb(%d,%d,%d)" rx="2"/><text x="%.1f" y="%d">%s</text></g>'
                             % (label, n, pct, 10 + x, y, w, row - 1, 205 + hue % 50, 80 + hue * 2, 40,
                                13 + x, y + row - 4, text))
                walk(kids, x, level + 1)
            x += w
    walk(tree, 0.0, 0)
    return ('<?xml version="1.0" standalone="no"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="%d" '
            'height="%d" font-family="monospace" font-size="11">\n<rect width="100%%" height="100%%" '
            'fill="#fdfdf5"/>\n<text x="10" y="20" font-size="14">%s (%d samples)</text>\n%s\n</svg>\n'
            % (width, height, html.escape(title), total, "\n".join(rects)))


def markdown(meta, results):
    out = ["# Where a bring-up's CPU goes (perf, flame graphs)", "",
           "%s, fat tree %s, engine %s, %d cores, load %s at start, perf at %d Hz with DWARF "
           "call graphs. The SVGs beside this file are the flame graphs (open in a browser: "
           "a frame's width is its share of the samples)." % (
               meta["date"], meta["fabric"], meta["engine"], os.cpu_count(), meta["loadavg"],
               meta["frequency"]), ""]
    for r in results:
        out.append("## %s: %s" % (r["sm"], "SUBNET UP in %.2f s (under perf)" % r["wall_s"]
                                  if r["up"] else "no SUBNET UP (%s)" % r.get("error", "?")))
        out.append("")
        if not r.get("samples"):
            out += ["No samples.", ""]
            continue
        out.append("%d samples; `%s`, `%s`." % (r["samples"], r["svg"], r["folded"]))
        out.append("")
        for key, what in (("top", "by samples in the function itself"),
                          ("top_inclusive", "by samples in the function and what it calls")):
            out.append("The %d hottest functions %s:" % (TOP, what))
            out.append("")
            out.append("| function | self % | inclusive % |")
            out.append("|---|---:|---:|")
            for name, pself, pincl in r[key]:
                out.append("| `%s` | %.1f | %.1f |" % (name.replace("|", "\\|"), pself, pincl))
            out.append("")
    return "\n".join(out) + "\n"


# --counts: few events, so perf stat itself stays cheap (with some thirty tracepoints a start
# took seconds longer)
COUNT_EVENTS = ("raw_syscalls:sys_enter", "syscalls:sys_enter_write", "syscalls:sys_enter_read",
                "syscalls:sys_enter_poll", "syscalls:sys_enter_futex", "context-switches")


def task_counts(pid):
    """[cpu seconds, voluntary, involuntary context switches] of a live process, all threads
    (CPU: the process's, exited threads included; switches: its live threads'); None if gone."""
    cpu = b.proc_cpu(pid)
    if cpu is None:
        return None
    v = nv = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        v += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        nv += int(line.split()[1])
    except OSError:
        pass
    return [cpu, v, nv]


def perf_counts(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.strip().split(",")
                if len(p) > 2 and p[0][:1].isdigit():
                    out[p[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter",
                                                                           "all")] = float(p[0])
    except OSError:
        pass
    return out


def under_perf_stat(cmd, env, rundir, name):
    stat = os.path.join(rundir, name + ".perf")
    preload = env.pop("LD_PRELOAD")  # the workload's, not perf's
    full = ["perf", "stat", "-x,", "-o", stat, "-e", ",".join(COUNT_EVENTS), "--", "env",
            "LD_PRELOAD=" + preload] + cmd
    return b.PROCS.start(full, rundir, env, os.path.join(rundir, name + ".out")), stat


def counted_bringup(sm, fabric, rundir, umad2sim, timeout, trace=None):
    """One bring-up of ibsm on a fresh ibsim: with trace, recorded by smpcount.so (for the
    replay), else under perf stat with the CPU read at DISCOVERING and at SUBNET UP."""
    os.makedirs(rundir, exist_ok=True)
    sim = b.Sim(fabric, rundir)
    res = {"up": False}
    p = None
    try:
        log = os.path.join(rundir, "sm.log")
        env = sim.client_env(umad2sim, rundir)
        if trace:
            env.update(LD_PRELOAD="%s:%s" % (b.SMPCOUNT_SO, umad2sim), SMPCOUNT_TRACE=trace,
                       SMPCOUNT_TRACE_BUFFER="1")
            p = b.PROCS.start(sm.command(log), rundir, env, os.path.join(rundir, "sm.out"))
            child, stat = p.pid, None
        else:
            p, stat = under_perf_stat(sm.command(log), env, rundir, "sm")
            child = None
        watch = b.LogWatch(log)
        t0 = time.monotonic()
        disc = None
        while time.monotonic() - t0 < timeout and p.poll() is None:
            if child is None:
                kids = children(p.pid)
                child = kids[0] if kids else None
            if disc is None and child and watch.seen("SWP-0021"):  # entering DISCOVERING
                disc = (time.monotonic(), task_counts(child), sim_counts(sim))
            if watch.seen("SUBNET UP"):
                res["up"] = True
                break
            time.sleep(b.POLL_S)
        if res["up"] and disc and child:
            end = (time.monotonic(), task_counts(child), sim_counts(sim))
            if disc[1] and end[1] and disc[2] and end[2]:
                res["wall_s"] = end[0] - disc[0]
                res["cpu_s"] = end[1][0] - disc[1][0]
                res["ibsim"] = [y - x for x, y in zip(disc[2], end[2])]
        if res["up"]:
            b.wait_stats_logged(log, 0)
        for pid in ([child] if child else []):
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            pass
        b.PROCS.stop(p)
        total = b.parse_stats(log)[1]
        res["smps"] = total.get("smps") if total else None
        if stat:
            res["perf"] = perf_counts(stat)
    finally:
        if p is not None:
            b.PROCS.stop(p)
        sim.stop()
    return res


def sim_counts(sim):
    return task_counts(sim.proc.pid)


def counted_replay(smprate, fabric, rundir, umad2sim, trace):
    """bench/smprate.c -r TRACE (64 in flight, as ibsm) under perf stat on a fresh ibsim."""
    os.makedirs(rundir, exist_ok=True)
    sim = b.Sim(fabric, rundir)
    res = {}
    p = None
    try:
        env = sim.client_env(umad2sim, rundir)
        s0 = sim_counts(sim)
        p, stat = under_perf_stat([smprate, "-w", "64", "-r", trace], env, rundir, "smprate")
        b.PROCS.wait_rusage(p, 600)
        s1 = sim_counts(sim)
        with open(os.path.join(rundir, "smprate.out")) as f:
            m = re.search(r"smps=(\d+) seconds=([\d.]+) .*cpu_us=(\d+) vcsw=(\d+) ivcsw=(\d+)", f.read())
        if m:
            res.update(smps=int(m.group(1)), wall_s=float(m.group(2)), cpu_s=int(m.group(3)) / 1e6,
                       vcsw=int(m.group(4)), ivcsw=int(m.group(5)))
        res["perf"] = perf_counts(stat)
        if s0 and s1:
            res["ibsim"] = [y - x for x, y in zip(s0, s1)]
    finally:
        if p is not None:
            b.PROCS.stop(p)
        sim.stop()
    return res


def counts_markdown(meta, runs):
    """The per-SMP table: medians over the repetitions, ibsm beside its replay."""
    def med(vals):
        v = [x for x in vals if x is not None]
        return statistics.median(v) if v else None

    def per(rs, f):
        return med([f(r) / r["smps"] if r.get("smps") and f(r) is not None else None for r in rs])
    out = ["# Per SMP: ibsm's bring-up and the same SMPs sent by bench/smprate.c -r", "",
           "%s, fabric %s, engine %s, %d repetition(s), %s; load average %s at start (the "
           "machine's other work: wall-clock times are noise, counts per SMP are not)." % (
               meta["date"], meta["fabric"], meta["engine"], meta["repeat"], meta["build"],
               meta["loadavg"]), "",
           "System calls and context switches: `perf stat` over the whole process (ibsm: start-up "
           "included, a few hundred calls). CPU: ibsm's from DISCOVERING to SUBNET UP, all threads "
           "(umad2sim's receiver thread included); smprate's over its sending (getrusage). ibsim: "
           "its CPU and its voluntary context switches (it slept, waiting for a request) over the "
           "same stretch. Medians of the repetitions.", "",
           "| per SMP | ibsm | smprate -r | ibsm - smprate |", "|---|---:|---:|---:|"]
    sm, rp = runs["ibsm"], runs["replay"]
    rows = [("system calls, all", lambda r: r.get("perf", {}).get("all"), "%.3f")]
    for k in ("write", "read", "poll", "futex"):
        rows.append(("  %s" % k, lambda r, k=k: r.get("perf", {}).get(k), "%.3f"))
    rows += [("context switches (perf)", lambda r: r.get("perf", {}).get("context-switches"), "%.3f"),
             ("CPU (us)", lambda r: r["cpu_s"] * 1e6 if r.get("cpu_s") is not None else None, "%.2f"),
             ("ibsim CPU (us)", lambda r: r["ibsim"][0] * 1e6 if r.get("ibsim") else None, "%.2f"),
             ("ibsim voluntary switches", lambda r: r["ibsim"][1] if r.get("ibsim") else None, "%.3f"),
             ("wall (us, noisy)", lambda r: r["wall_s"] * 1e6 if r.get("wall_s") else None, "%.2f")]
    for name, f, fmt in rows:
        a, c = per(sm, f), per(rp, f)
        out.append("| %s | %s | %s | %s |" % (name, fmt % a if a is not None else "-",
                                             fmt % c if c is not None else "-",
                                             (fmt % (a - c)) if a is not None and c is not None else "-"))
    out.append("")
    out.append("SMPs: ibsm %s, replay %s." % (", ".join(str(r.get("smps")) for r in sm),
                                              ", ".join(str(r.get("smps")) for r in rp)))
    return "\n".join(out) + "\n"


def clean_up(work, keep, who):
    """Every process the run started stopped (by pid), then its scratch directory removed
    unless --keep asked to keep it."""
    b.PROCS.stop_all()
    if keep:
        sys.stderr.write("%s: kept %s\n" % (who, work))
    else:
        shutil.rmtree(work, ignore_errors=True)


def counts_main(a):
    umad2sim = b.find_umad2sim()
    smprate = b.build_client(os.path.dirname(a.ibsm), "smprate")
    b.SMPCOUNT_SO = os.path.join(os.path.dirname(a.ibsm), "tests", "tools", "smpcount.so")
    if not smprate or not os.path.exists(b.SMPCOUNT_SO):
        sys.exit("flame --counts: needs bench/smprate.c built and %s" % b.SMPCOUNT_SO)
    work = tempfile.mkdtemp(prefix="ibsm-counts.")
    runs = {"ibsm": [], "replay": []}
    try:
        fabric = b.Fabric(a.hosts, work)
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "engine": a.engine,
                "fabric": fabric.label + " hosts/switches", "loadavg": "%.2f" % os.getloadavg()[0],
                "repeat": a.repeat, "build": a.ibsm}
        sm = b.Ibsm(a.ibsm, a.engine, [])
        for i in range(a.repeat):
            trace = os.path.join(work, "smps-%d.trace" % i)
            traced = counted_bringup(sm, fabric, os.path.join(work, "trace-%d" % i), umad2sim,
                                     a.timeout, trace)
            r = counted_bringup(sm, fabric, os.path.join(work, "ibsm-%d" % i), umad2sim, a.timeout)
            runs["ibsm"].append(r)
            if traced["up"] and os.path.exists(trace):
                runs["replay"].append(counted_replay(smprate, fabric, os.path.join(work, "replay-%d" % i),
                                                     umad2sim, trace))
                os.unlink(trace)
            sys.stderr.write("counts: round %d: ibsm %s SMPs, replay %s\n" % (
                i + 1, r.get("smps"), runs["replay"][-1].get("smps") if runs["replay"] else None))
        text = counts_markdown(meta, runs)
        sys.stdout.write(text)
        if not a.no_save:
            path = os.path.join(HERE, "results", "persmp-%s.md" % datetime.date.today().isoformat())
            with open(path, "w") as f:
                f.write(text)
    finally:
        clean_up(work, a.keep, "counts")
    return 0 if runs["ibsm"] and all(r["up"] for r in runs["ibsm"]) else 1


def main(argv):
    def add(ap):
        ap.add_argument("--frequency", type=int, default=499, help="perf samples per second")
        ap.add_argument("--counts", action="store_true",
                        help="per-SMP system calls, context switches and CPU: ibsm vs smprate -r")
        ap.add_argument("--repeat", type=int, default=3, help="--counts: rounds")
    a = b.section_args("flame graphs of a bring-up", 8192, argv, add)
    if a.counts:
        if not shutil.which("perf"):
            sys.exit("flame: perf not found (Debian linux-perf)")
        return counts_main(a)
    if not shutil.which("perf"):
        sys.exit("flame: perf not found (Debian linux-perf)")
    umad2sim = b.find_umad2sim()
    work = tempfile.mkdtemp(prefix="ibsm-flame.")
    results = []
    try:
        fabric = b.Fabric(a.hosts, work)
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "engine": a.engine,
                "fabric": fabric.label + " hosts/switches", "loadavg": "%.2f" % os.getloadavg()[0],
                "frequency": a.frequency}
        sms = []
        if a.only != "ibsm":
            sms.append(b.OpenSM(work, a.engine))
        if a.only != "OpenSM":
            sms.append(b.Ibsm(a.ibsm, a.engine, []))
        stem = os.path.join(HERE, "results", "flame-%s" % datetime.date.today().isoformat())
        if a.no_save:
            stem = os.path.join(work, "flame")
        os.makedirs(os.path.dirname(stem), exist_ok=True)
        for sm in sms:
            sys.stderr.write("flame: %s on %s hosts ... " % (sm.name, fabric.label))
            sys.stderr.flush()
            r, data = profile(sm, fabric, os.path.join(work, sm.name), umad2sim, a.frequency,
                              a.timeout)
            stacks = fold(data) if data else collections.Counter()
            total = sum(stacks.values())
            r["samples"] = total
            if total:
                own, incl = top_functions(stacks)
                r["top"] = [(f, 100.0 * own[f] / total, 100.0 * incl[f] / total)
                            for f, _ in own.most_common(TOP)]
                r["top_inclusive"] = [(f, 100.0 * own[f] / total, 100.0 * incl[f] / total)
                                      for f, _ in incl.most_common(TOP)]
                r["svg"] = os.path.basename(stem) + "-%s.svg" % sm.name
                r["folded"] = os.path.basename(stem) + "-%s.folded" % sm.name
                with open(os.path.join(os.path.dirname(stem), r["svg"]), "w") as f:
                    f.write(svg(stacks, "%s bring-up, %s" % (sm.name, fabric.label)))
                with open(os.path.join(os.path.dirname(stem), r["folded"]), "w") as f:
                    for s, n in sorted(stacks.items()):
                        f.write("%s %d\n" % (s, n))
            sys.stderr.write("%s, %d samples\n" % ("up %.2f s" % r["wall_s"] if r["up"] else "failed",
                                                 total))
            results.append(r)
        text = markdown(meta, results)
        sys.stdout.write(text)
        with open(stem + ".md", "w") as f:
            f.write(text)
    finally:
        clean_up(work, a.keep, "flame")
    return 0 if all(r["up"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
