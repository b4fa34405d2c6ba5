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
Every process is stopped by pid on every path (bench.py's Procs)."""
import collections
import datetime
import html
import os
import shutil
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


def main(argv):
    def add(ap):
        ap.add_argument("--frequency", type=int, default=499, help="perf samples per second")
    a = b.section_args("flame graphs of a bring-up", 8192, argv, add)
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
        b.PROCS.stop_all()
        if a.keep:
            sys.stderr.write("flame: kept %s\n" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["up"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
