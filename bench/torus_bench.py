#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""torus_bench.py - the torus-2QoS section of `make bench`, in one run:
  live      OpenSM 3.3.23 and ibsm, both -R torus-2QoS -Q with the same torus-2QoS.conf, side
            by side on the same simulated 3D tori (one host per switch): seconds to SUBNET UP
            and the routing phase (OpenSM: its log from "STARTING SWITCH TABLE CONFIG" to
            "torus-2QoS tables configured"; ibsm: STATS phase=routing), up to the largest torus
            given (--live, default 4x4x4,8x8x8,10x10x10);
  offline   ibsm --fabric on larger tori (--offline, default 8x8x8,16x16x16): the routing time
            of the engine alone, no MADs (OpenSM has no offline mode).
The fabrics (ibsim net files and their torus-2QoS.conf) are written here. Markdown on stdout and
in bench/results/torus-<date>.md (and .json). Every process is stopped by pid on every path.

usage: torus_bench.py [--live 4x4x4,...] [--offline 16x16x16] [--ibsm PATH] [--keep] [--no-save]"""
import argparse
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (processes, ibsim, the two SMs)

SW_BASE, CA_BASE = 0x0200000000000000, 0x0100000000000000


class Torus:
    """An X x Y x Z torus, one host per switch: switch t-xXyYzZ ports 1 x+, 2 x-, 3 y+, 4 y-,
    5 z+, 6 z-, 7 its host h-xXyYzZ (hosts first in the file: the SMs attach to the first
    node); and its torus-2QoS.conf seeded at (0,0,0)."""

    def __init__(self, dims, workdir):
        self.dims = dims
        x, y, z = dims
        self.name = "torus-%dx%dx%d" % dims
        self.hosts = x * y * z
        d = os.path.join(workdir, "fabrics")
        os.makedirs(d, exist_ok=True)
        self.net = os.path.join(d, self.name + ".net")
        self.conf = os.path.join(d, self.name + ".torus-2QoS.conf")
        self.label = "%dx%dx%d (%d switches, %d hosts)" % (x, y, z, self.hosts, self.hosts)
        self.size = {"nodes": 2 * self.hosts, "switches": self.hosts, "hosts": self.hosts,
                     "ports": 10 * self.hosts}
        self._write()

    def pos(self, c):
        x, y, _ = self.dims
        return c[0] + x * (c[1] + y * c[2])

    def sw(self, c):
        return "t-x%dy%dz%d" % tuple(c)

    def _write(self):
        X, Y, Z = self.dims
        out = ["# %s: written by bench/torus_bench.py" % self.name, ""]
        for z in range(Z):
            for y in range(Y):
                for x in range(X):
                    c = (x, y, z)
                    out.append("caguid=0x%x" % (CA_BASE + 16 * (self.pos(c) + 1)))
                    out.append('Hca\t1 "h-x%dy%dz%d"' % c)
                    out.append('[1]\t"%s"[7]' % self.sw(c))
                    out.append("")
        for z in range(Z):
            for y in range(Y):
                for x in range(X):
                    c = (x, y, z)
                    out.append("switchguid=0x%x" % (SW_BASE + self.pos(c) + 1))
                    out.append('Switch\t7 "%s"' % self.sw(c))
                    for d in range(3):
                        for sign, port, peer_port in ((1, 2 * d + 1, 2 * d + 2), (-1, 2 * d + 2, 2 * d + 1)):
                            n = list(c)
                            n[d] = (c[d] + sign) % self.dims[d]
                            out.append('[%d]\t"%s"[%d]' % (port, self.sw(n), peer_port))
                    out.append('[7]\t"h-x%dy%dz%d"[1]' % c)
                    out.append("")
        with open(self.net, "w") as f:
            f.write("\n".join(out))
        g = lambda c: SW_BASE + self.pos(c) + 1  # noqa: E731
        lines = ["torus %d %d %d" % self.dims]
        for d, axis in enumerate("xyz"):
            for sign, kw in ((1, "p"), (-1, "m")):
                n = [0, 0, 0]
                n[d] = sign % self.dims[d]
                lines.append("%s%s_link 0x%x 0x%x" % (axis, kw, g((0, 0, 0)), g(n)))
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")


def live(a, work, fab, sm):
    """One SM on a fresh ibsim of FAB until SUBNET UP: {"up_s", "routing_s"} or {"error"}."""
    rundir = os.path.join(work, "%s-%s" % (sm.name, fab.name))
    os.makedirs(rundir, exist_ok=True)
    sys.stderr.write("torus: %s on %s\n" % (sm.name, fab.label))
    out = {"sm": sm.name, "fabric": fab.name}
    sim = B.Sim(fab, rundir)
    p = None
    log, smout = os.path.join(rundir, "sm.log"), os.path.join(rundir, "sm.out")
    try:
        watch = B.LogWatch(log)
        t0 = time.monotonic()
        p = B.PROCS.start(sm.command(log), rundir, sim.client_env(B.find_umad2sim(), rundir), smout)
        while not watch.seen("SUBNET UP"):
            if p.poll() is not None or time.monotonic() - t0 > a.timeout:
                out["error"] = "not up: " + B.tail_of(log, 600)
                break
            time.sleep(0.05)
        if "error" not in out:
            out["up_s"] = round(time.monotonic() - t0, 1)
            time.sleep(1)
    finally:
        if p is not None:
            B.PROCS.stop(p)
        sim.stop()
    if "error" not in out:
        sm.after_stop(out, log, smout)
        r = out.get("phases", {}).get("routing")
        out["routing_s"] = r["seconds"] if r else None
        if sm.name == "ibsm" and "declined" in B.read_from(log):
            out["error"] = "torus-2QoS declined: " + B.tail_of(log, 400)
    return out


def offline(a, work, fab):
    res = B.offline_run(a.ibsm, "torus-2QoS", fab, os.path.join(work, "offline-" + fab.name),
                        a.timeout, ["--torus_config", fab.conf, "-Q"])
    res["fabric"] = fab.name
    return res


def ratio(a, b):
    return "%.2fx" % (a / b) if a and b else "-"


def markdown(meta, runs, offs):
    w = []
    w.append("## torus-2QoS: OpenSM and ibsm on 3D tori (one host per switch)\n\n")
    w.append("%s, %s. Both SMs `-R torus-2QoS -Q` with the same torus-2QoS.conf (seeded at "
             "(0,0,0), both directions).\n\n" % (meta["date"], meta["machine"]))
    w.append("| torus | SM | SUBNET UP s | routing s | ibsm/OpenSM up | ibsm/OpenSM routing |\n")
    w.append("|---|---|---|---|---|---|\n")
    by = {}
    for r in runs:
        by.setdefault(r["fabric"], {})[r["sm"]] = r
    for name, pair in by.items():
        o, i = pair.get("OpenSM", {}), pair.get("ibsm", {})
        for r in (o, i):
            if not r:
                continue
            w.append("| %s | %s | %s | %s | %s | %s |\n" % (
                name, r["sm"], r.get("up_s", r.get("error", "?")[:60]), r.get("routing_s", ""),
                ratio(i.get("up_s"), o.get("up_s")) if r is i else "",
                ratio(i.get("routing_s"), o.get("routing_s")) if r is i else ""))
    if offs:
        w.append("\n## ibsm offline routing, engine torus-2QoS (`--fabric`, no MADs)\n\n")
        w.append("| torus | routing s | wall s | max RSS MiB |\n|---|---|---|---|\n")
        for r in offs:
            w.append("| %s | %s | %s | %s |\n" % (
                r["fabric"], r.get("routing_s", r.get("error", "?")[:60]), r.get("wall_s", ""),
                "%.0f" % (r["rss_kib"] / 1024) if "rss_kib" in r else ""))
    return "".join(w)


def dims_list(text):
    out = []
    for item in text.split(","):
        if item:
            x, y, z = (int(v) for v in item.lower().split("x"))
            out.append((x, y, z))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description="OpenSM's torus-2QoS vs ibsm's")
    ap.add_argument("--live", type=dims_list, default=dims_list("4x4x4,8x8x8,10x10x10"))
    ap.add_argument("--offline", type=dims_list, default=dims_list("8x8x8,16x16x16"))
    ap.add_argument("--ibsm", default=os.path.join(ROOT, "build", "ibsm"))
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--only", choices=("OpenSM", "ibsm"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, B._on_signal)
    work = tempfile.mkdtemp(prefix="ibsm-torus.")
    runs, offs = [], []
    try:
        for dims in a.live:
            fab = Torus(dims, work)
            conf_lines = "\ntorus_config %s\nqos TRUE\n" % fab.conf
            for sm in (B.OpenSM(work, "torus-2QoS", (), conf_lines),
                       B.Ibsm(a.ibsm, "torus-2QoS", ["--torus_config", fab.conf, "-Q"])):
                if a.only and sm.name != a.only:
                    continue
                runs.append(live(a, work, fab, sm))
        if a.only != "OpenSM":
            for dims in a.offline:
                offs.append(offline(a, work, Torus(dims, work)))
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                "machine": "%d cores" % os.cpu_count()}
        text = markdown(meta, runs, offs)
        sys.stdout.write(text)
        if not a.no_save:
            d = os.path.join(HERE, "results")
            stem = os.path.join(d, "torus-%s" % datetime.date.today().isoformat())
            with open(stem + ".md", "w") as f:
                f.write(text)
            with open(stem + ".json", "w") as f:
                json.dump({"meta": meta, "live": runs, "offline": offs}, f, indent=1)
    finally:
        B.PROCS.stop_all()
        if a.keep:
            sys.stderr.write("torus: kept %s\n" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
