#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""sa_bench.py - the SA section of `make bench`: OpenSM's SA and ibsm's side by side on the same
simulated XGFT fat tree, in one run. For each SM: a fresh ibsim (with a console), the SM up,
then the load client (bench/sa_load.c) keeps single PathRecord queries (SubnAdmGet by SLID and
DLID, random pairs of assigned LIDs) outstanding from a host:
  idle-1    1 outstanding for --seconds
  idle-32   32 outstanding for --seconds
  reroute   32 outstanding for 3 x --seconds; after one third, a link of a top-level switch
            is taken down in ibsim: the SM re-routes (its trap 128, its sweep) while answering
and records queries/s, p50/p99/max latency and, per second (--timeline), the answers, so a
re-route that stops the SA shows as seconds with none. Results: markdown on stdout and in
bench/results/sa-<date>.md (and .json). Every process is stopped by pid on every path.

usage: sa_bench.py [--hosts 8192] [--seconds 10] [--ibsm PATH] [--keep] [--no-save]"""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (processes, fabrics, the two SMs)


def client_env(sim, umad2sim, rundir, host=None):
    e = sim.client_env(umad2sim, rundir)
    if host:
        e["SIM_HOST"] = host
    return e


def net_facts(net):
    """(first CA name, a (switch, port) link of the last switch to another switch) from an
    ibsim net file; genfab writes the top level last."""
    kind, name, ca, links = None, None, None, []
    for line in open(net):
        m = re.match(r'^(Switch|Hca|Ca)\s+\d+\s+"([^"]+)"', line)
        if m:
            kind, name = m.group(1), m.group(2)
            if kind != "Switch" and ca is None:
                ca = name
            continue
        m = re.match(r'^\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
        if m and kind == "Switch":
            links.append((name, int(m.group(1)), m.group(2)))
    switches = {n for n, _, _ in links}
    top = [(n, p) for n, p, peer in links if peer in switches]
    return ca, top[-1] if top else None


LINE = re.compile(r"(\w+) ([0-9.]+)")


def parse_load(text):
    res, timeline = {}, []
    for line in text.splitlines():
        if line.startswith("sent "):
            res = {k: float(v) for k, v in LINE.findall(line)}
        elif line.startswith("t "):
            d = {k: float(v) for k, v in LINE.findall(line)}
            timeline.append(d)
    res["timeline"] = timeline
    return res


def run_load(load, sim, umad2sim, rundir, host, maxlid, window, seconds, after=None):
    """The load client for `seconds`; `after` = (delay, fn) runs fn `delay` s into the run."""
    env = client_env(sim, umad2sim, rundir, host)
    out = os.path.join(rundir, "load-%d-%d.out" % (window, int(time.time() * 1000) % 100000))
    p = B.PROCS.start([load, "-n", str(maxlid), "-w", str(window), "-d", str(seconds), "-T"],
                      rundir, env, out)
    if after:
        time.sleep(after[0])
        after[1]()
    code, _ = B.PROCS.wait_rusage(p, seconds + 60)
    with open(out) as f:
        res = parse_load(f.read())
    res["exit"] = code
    return res


def measure(fabric, umad2sim, load, seconds):
    """The three load runs against an SM that is up (bench.side_by_side)."""
    ca, link = net_facts(fabric.net)
    maxlid = fabric.size["hosts"] + fabric.size["switches"]

    def run(sim, rundir, out):
        out["idle-1"] = run_load(load, sim, umad2sim, rundir, ca, maxlid, 1, seconds)
        out["idle-32"] = run_load(load, sim, umad2sim, rundir, ca, maxlid, 32, seconds)
        if link:
            out["link"] = '%s[%d]' % link
            out["reroute"] = run_load(load, sim, umad2sim, rundir, ca, maxlid, 32, 3 * seconds,
                                      after=(seconds, lambda: sim.console('Unlink "%s"[%d]' % link)))
    return run


def gap(timeline):
    """Longest run of seconds with no answer (the last, partial second aside)."""
    best = cur = 0
    for d in timeline[:-1]:
        cur = cur + 1 if not d.get("answered") else 0
        best = max(best, cur)
    return best


def markdown(meta, runs):
    lines = ["## SA: PathRecord queries (%s)" % meta["fabric"], "",
             "%s, %s. Load client: bench/sa_load.c on %s, SubnAdmGet(PathRecord) by SLID/DLID, "
             "random pairs of LIDs 1..%d; re-route: %s taken down a third into the run." % (
                 meta["date"], meta["machine"], meta["client"], meta["maxlid"], meta.get("link")), "",
             "| SM | run | queries/s | ok | busy | timeouts | p50 ms | p99 ms | max ms | longest gap s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        for k in ("idle-1", "idle-32", "reroute"):
            x = r.get(k)
            if not x or "qps" not in x:
                if "error" in r:
                    lines.append("| %s | %s | (%s) | | | | | | | |" % (r["sm"], k, r["error"][:80]))
                continue
            lines.append("| %s | %s | %.0f | %d | %d | %d | %.2f | %.2f | %.1f | %s |" % (
                r["sm"], k, x["qps"], x["ok"], x["busy"], x["timeouts"], x["p50_ms"], x["p99_ms"],
                x["max_ms"], gap(x["timeline"]) if k == "reroute" else ""))
    by = {r["sm"]: r for r in runs}
    if "OpenSM" in by and "ibsm" in by:
        lines.append("")
        for k in ("idle-1", "idle-32", "reroute"):
            a, b = by["ibsm"].get(k, {}), by["OpenSM"].get(k, {})
            if a.get("qps") and b.get("qps"):
                lines.append("- %s: ibsm/OpenSM throughput %.1fx, max latency %.1f vs %.1f ms" % (
                    k, a["qps"] / b["qps"], a["max_ms"], b["max_ms"]))
    return "\n".join(lines) + "\n"


def main(argv):
    a = B.section_args("OpenSM's SA vs ibsm's under PathRecord load", 8192, argv,
                       lambda ap: ap.add_argument("--seconds", type=float, default=10))

    def prepare(_work, fabric, umad2sim, meta):
        load = B.build_client(os.path.dirname(a.ibsm), "sa_load")
        if not load:
            return None
        meta["client"], link = net_facts(fabric.net)
        meta["link"] = "%s[%d]" % link if link else None
        return measure(fabric, umad2sim, load, a.seconds), None
    return B.run_section("sa", a, prepare, markdown)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
