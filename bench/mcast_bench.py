#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mcast_bench.py - the multicast section of `make bench`: OpenSM's and ibsm's multicast side by
side on the same simulated XGFT fat tree, in one run. For each SM: a fresh ibsim, the SM up,
then the project's client tests/clients/mc_member (one request outstanding at a time):
  broadcast  every CA port joined to the IPoIB broadcast group ff12:401b:ffff::ffff:ffff by
             proxy from one host, one after the other (what a cluster coming up asks of the
             SA); joins/s. Each join changes the group's tree and its MFTs.
  cycles     --cycles times: a host creates a group, joins it and leaves it, so the group
             and its MLID are made and freed each time; join+leave pairs/s.
Results: markdown on stdout and in bench/results/mcast-<date>.md (and .json). Every process
is stopped by pid on every path.

usage: mcast_bench.py [--hosts 2048] [--cycles 5000] [--ibsm PATH] [--keep] [--no-save]"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (processes, fabrics, the two SMs)
from sa_bench import client_env, net_facts  # noqa: E402

IPOIB = "ff12:401b:ffff::ffff:ffff"
CYCLE = "ff12:601b:ffff::b:1"
LINE = re.compile(r"(\w+) ([0-9.]+)")


def run_client(client, args, sim, umad2sim, rundir, host, name, limit):
    out = os.path.join(rundir, name + ".out")
    p = B.PROCS.start([client] + args, rundir, client_env(sim, umad2sim, rundir, host), out)
    code, _ = B.PROCS.wait_rusage(p, limit)
    with open(out) as f:
        text = f.read()
    res = {k: float(v) for k, v in LINE.findall(text)}
    res["exit"] = code
    res["text"] = text.strip()[-300:]
    return res


def measure(fabric, umad2sim, client, cycles):
    """The two join runs against an SM that is up (bench.side_by_side)."""
    ca, _ = net_facts(fabric.net)
    maxlid = fabric.size["hosts"] + fabric.size["switches"]

    def run(sim, rundir, out):
        out["broadcast"] = run_client(client, ["-B", str(maxlid), IPOIB], sim, umad2sim, rundir, ca,
                                      "broadcast", 1800)
        out["cycles"] = run_client(client, ["-n", str(cycles), CYCLE], sim, umad2sim, rundir, ca,
                                   "cycles", 1800)
    return run


def markdown(meta, runs):
    lines = ["## Multicast: joins (%s)" % meta["fabric"], "",
             "%s, %s. Client: tests/clients/mc_member on %s, one request outstanding. broadcast: every "
             "CA port joined by proxy to %s; cycles: %d x (create and join, leave) of one group." % (
                 meta["date"], meta["machine"], meta["client"], IPOIB, meta["cycles"]), "",
             "| SM | run | requests | failed | seconds | per second |", "|---|---|---|---|---|---|"]
    for r in runs:
        if "error" in r:
            lines.append("| %s | | (%s) | | | |" % (r["sm"], r["error"][:80]))
            continue
        for k, n in (("broadcast", "joins"), ("cycles", "loops")):
            x = r.get(k, {})
            if "rate" in x:
                lines.append("| %s | %s | %d %s | %d | %.2f | %.0f |" % (
                    r["sm"], k, x.get(n, 0), n, x.get("failed", 0), x["seconds"], x["rate"]))
            else:
                lines.append("| %s | %s | (%s) | | | |" % (r["sm"], k, x.get("text", "")[:80]))
    by = {r["sm"]: r for r in runs}
    if "OpenSM" in by and "ibsm" in by:
        lines.append("")
        for k in ("broadcast", "cycles"):
            a, b = by["ibsm"].get(k, {}), by["OpenSM"].get(k, {})
            if a.get("rate") and b.get("rate"):
                lines.append("- %s: ibsm/OpenSM %.1fx (%.0f vs %.0f per second)" % (
                    k, a["rate"] / b["rate"], a["rate"], b["rate"]))
    return "\n".join(lines) + "\n"


def main(argv):
    a = B.section_args("OpenSM's multicast joins vs ibsm's", 2048, argv,
                       lambda ap: ap.add_argument("--cycles", type=int, default=5000))

    def prepare(_work, fabric, umad2sim, meta):
        client = os.path.join(os.path.dirname(a.ibsm), "tests", "clients", "mc_member")
        if not os.access(client, os.X_OK):
            sys.stderr.write("mcast_bench: %s not built (make all)\n" % client)
            return None
        meta["cycles"] = a.cycles
        meta["client"], _ = net_facts(fabric.net)
        return measure(fabric, umad2sim, client, a.cycles), None
    return B.run_section("mcast", a, prepare, markdown)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
