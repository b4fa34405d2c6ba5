#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""engines_bench.py - the routing engines section of `make bench`: each engine of ibsm beside
OpenSM 3.3.23's engine of the same name, same fabric, same run, judged from outside by the
project's own code (bench/route_figures.py): max link load, max/mean, worst of 16 shift
permutations, VLs used, credit loops over (link, VL), pairs delivered, and seconds to SUBNET UP.

Fabrics, generated here: a random irregular one (bench/genfab.py irregular), a 3D torus with one
host per switch (bench/torus_bench.py, with its torus-2QoS.conf) and a 2-level fat tree
(bench/genfab.py XGFT). Each SM runs as the daemon on a fresh ibsim with the RMPP test library
(tests/tools/rmpp.so), so the SA answers one PathRecord GetTable with every pair's SL; the
SL2VL tables are read from the switches (smpquery). OpenSM gets -Q where its engine needs QoS for
its VLs (dfsssp, lash, nue, torus-2QoS: opensm(8)); ibsm writes an engine's SL2VL without -Q.
Every process is stopped by pid on every path (tests/sim/harness.py runs them).

usage: engines_bench.py [--fabrics irregular,torus,fattree] [--engines minhop,updn,...]
                        [--irregular S,H,D,SEED] [--torus 4x4x4] [--fattree 8,8]
                        [--ibsm PATH] [--only ibsm|OpenSM] [--keep] [--no-save]
Markdown on stdout and in bench/results/engines-<date>.md (and .json)."""
import argparse
import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import genfab  # noqa: E402
import route_figures  # noqa: E402
from route_figures import h  # noqa: E402  (tests/sim/harness.py: ibsim, the SMs, the diags)

ALL = ("irregular", "torus", "fattree")
# name, fabrics, arguments for both SMs, OpenSM only (its -Q), label
ENGINES = [("minhop", ALL, [], [], "minhop"),
           ("updn", ALL, [], [], "updn"),
           ("dnup", ALL, [], [], "dnup"),
           ("ftree", ("fattree",), [], [], "ftree"),
           ("dor", ("torus",), [], [], "dor"),
           ("torus-2QoS", ("torus",), ["--torus_config", "@TORUS_CONF"], ["-Q"], "torus-2QoS"),
           ("lash", ALL, [], ["-Q"], "lash"),
           ("nue", ALL, [], ["-Q"], "nue (1 VL)"),
           ("nue", ALL, ["--nue_max_num_vls", "8"], ["-Q"], "nue (8 VLs)"),
           ("sssp", ALL, [], [], "sssp"),
           ("dfsssp", ALL, [], ["-Q"], "dfsssp")]


class Fab:
    def __init__(self, kind, name, net, conf=None, label=""):
        self.kind, self.name, self.net, self.conf, self.label = kind, name, net, conf, label


def make_fabrics(a, work):
    d = os.path.join(work, "fabrics")
    os.makedirs(d, exist_ok=True)
    out = []
    for kind in a.fabrics:
        if kind == "irregular":
            s, hs, deg, seed = a.irregular
            name = genfab.irregular_name(s, hs, deg, seed)
            net = os.path.join(d, name + ".net")
            size = genfab.write_irregular(net, s, hs, deg, seed)
            out.append(Fab(kind, name, net, label="irregular: %d switches, %d hosts, degree %d, seed %d"
                           % (size["switches"], size["hosts"], deg, seed)))
        elif kind == "torus":
            import torus_bench
            t = torus_bench.Torus(a.torus, work)
            out.append(Fab(kind, t.name, t.net, t.conf, "torus " + t.label))
        elif kind == "fattree":
            m, w = a.fattree, (1, a.fattree[0])
            name = genfab.xgft_name(m, w)
            net = os.path.join(d, name + ".net")
            size = genfab.write_xgft(net, m, w)
            out.append(Fab(kind, name, net, label="fat tree XGFT(2; %s; %s): %d switches, %d hosts" % (
                ",".join(map(str, m)), ",".join(map(str, w)), size["switches"], size["hosts"])))
    return out


def run_one(a, fab, sm_name, engine, args, osm_args):
    """One SM with ENGINE on a fresh ibsim of FAB: the figures, or {"error": ...}."""
    res = {"sm": sm_name, "engine": engine, "fabric": fab.name}
    args = [fab.conf if x == "@TORUS_CONF" else x for x in args]
    sys.stderr.write("engines: %s -R %s on %s\n" % (sm_name, engine, fab.name))
    with h.Sim(fab.net) as sim:
        log = sim.path("sm.log")
        env = sim.env(rmpp=True)
        if sm_name == "OpenSM":
            cmd = [h.which("opensm")]
            argv = ["-e", "-f", log, "-d", "2", "-s", "0", "-R", engine] + args + osm_args
        else:
            cmd = None
            argv = ["-f", log, "-s", "0", "-R", engine] + args
        t0 = time.monotonic()
        sm = sim.start_sm(argv, cmd=cmd, env=env, name=sm_name, count=False)
        try:
            if not sm.wait_for(log, r"SUBNET UP", a.timeout):
                res["error"] = "not up: " + h.tail(log, 6)[-400:]
                return res
            res["up_s"] = round(time.monotonic() - t0, 1)
            time.sleep(1.0)
            text = h.read(log)
            if sm_name == "ibsm":
                m = re.findall(r"RTE-0003 routed by (\S+) ", text)
            else:
                m = re.findall(r"(\S+) tables configured on all switches", text)
            res["routed_by"] = m[-1] if m else "?"
            snap = sim.collect()
            sls = h.path_sls(sim)
            sl2vl = h.read_sl2vl(sim, snap)
            res.update(route_figures.figures(snap, sls, sl2vl))
            res["sl_records"] = len(sls)
        finally:
            sm.stop()
    return res


def fmt(v):
    return "-" if v is None else str(v)


def markdown(meta, fabs, runs):
    w = ["## Routing engines: ibsm beside OpenSM 3.3.23, same fabric, same run\n\n",
         "%s, %s. Figures from the tables the switches hold, every PathRecord's SL (the SA) and "
         "the SL2VL tables read back (bench/route_figures.py): routes from every CA port to every "
         "other CA port's base LID; max load and max/mean over directed switch-to-switch links; "
         "worst of 16 shift permutations (hosts in LID order, shift 1 + j(N-1)/16); VLs the hops "
         "use; credit loops: channels (link, VL) on cycles (every CA LID); *routed by*: the engine "
         "the SM's log names (a fallback shows here).\n\n" % (meta["date"], meta["machine"])]
    for fab in fabs:
        w.append("### %s\n\n" % fab.label)
        w.append("| engine | SM | routed by | max load | max/mean | worst shift | VLs | credit loops "
                 "| delivered | up s |\n|---|---|---|---|---|---|---|---|---|---|\n")
        for r in (r for r in runs if r["fabric"] == fab.name):
            if "error" in r:
                w.append("| %s | %s | %s |||||||\n" % (r["label"], r["sm"], r["error"][:80].replace("|", "/")))
                continue
            w.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s/%s | %s |\n" % (
                r["label"], r["sm"], r["routed_by"], r["max_load"], fmt(r["max_mean"]), r["worst_shift"],
                r["vls"], r["credit_loops"], r["delivered"], r["pairs"], r["up_s"]))
        w.append("\n")
    return "".join(w)


def int_tuple(n):
    def parse(text):
        v = tuple(int(x) for x in re.split(r"[,x]", text) if x)
        if len(v) != n:
            raise argparse.ArgumentTypeError("%d numbers expected" % n)
        return v
    return parse


def main(argv):
    ap = argparse.ArgumentParser(description="ibsm's routing engines beside OpenSM's")
    ap.add_argument("--fabrics", type=lambda t: [x for x in t.split(",") if x], default=list(ALL))
    ap.add_argument("--engines", type=lambda t: [x for x in t.split(",") if x], default=None)
    ap.add_argument("--irregular", type=int_tuple(4), default=(32, 4, 4, 1),
                    help="switches,hosts per switch,links per switch,seed")
    ap.add_argument("--torus", type=int_tuple(3), default=(4, 4, 4))
    ap.add_argument("--fattree", type=int_tuple(2), default=(8, 8), help="hosts per leaf, leaves")
    ap.add_argument("--ibsm", default=os.path.join(ROOT, "build", "ibsm"))
    ap.add_argument("--only", choices=("OpenSM", "ibsm"))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    os.environ["IBSM_BUILD"] = os.path.dirname(os.path.abspath(a.ibsm))
    work = tempfile.mkdtemp(prefix="ibsm-engines.")
    runs = []
    try:
        fabs = make_fabrics(a, work)
        for fab in fabs:
            for engine, kinds, args, osm_args, label in ENGINES:
                if fab.kind not in kinds or (a.engines and engine not in a.engines):
                    continue
                for sm in ("OpenSM", "ibsm"):
                    if a.only and sm != a.only:
                        continue
                    try:
                        r = run_one(a, fab, sm, engine, args, osm_args)
                    except Exception as e:  # noqa: BLE001 (one run's failure is a row, not the end)
                        r = {"sm": sm, "engine": engine, "fabric": fab.name, "error": repr(e)}
                    r["label"] = label
                    runs.append(r)
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                "machine": "%d cores" % os.cpu_count()}
        text = markdown(meta, fabs, runs)
        sys.stdout.write(text)
        if not a.no_save:
            stem = os.path.join(HERE, "results", "engines-%s" % datetime.date.today().isoformat())
            with open(stem + ".md", "w") as f:
                f.write(text)
            with open(stem + ".json", "w") as f:
                json.dump({"meta": meta, "fabrics": [f.__dict__ for f in fabs], "runs": runs}, f, indent=1)
    finally:
        h.cleanup()
        if a.keep:
            sys.stderr.write("engines: kept %s\n" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
