#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""repair_bench.py - the repair section of `make bench`: how long OpenSM 3.3.23 and ibsm take
to repair the routes when a link of a top-level (spine) switch goes down and when it comes back,
on the same simulated XGFT fat tree, in one run; with --link host, a host's link instead (the
host leaves the subnet and comes back: its LID loses its routes, then has them again).

Timed from the wire, not from either SM's log: both SMs run with tests/tools/smpcount.so ahead
of libumad2sim.so and SMPCOUNT_TRACE set, so every MAD the SM sends and receives is recorded
with a monotonic timestamp. One repair is measured from the first trap (SMI class, method Trap)
the SM receives after the link changed in ibsim, to the last answer to an LFT Set
(LinearForwardingTable, IBA 14.2.5.10) it receives for that change. Also counted: the SMPs the
SM sent in between, and the LFT blocks it wrote. Meanwhile bench/sa_load.c keeps PathRecord
queries outstanding (--sa-window, 4) from a host, so the SA's answers during the repairs are
recorded too.

The link is taken down and brought back --reps times (medians reported); a repair is over
when the SM has sent nothing for --quiet seconds.

usage: repair_bench.py [--hosts 8192] [--reps 3] [--link spine|host] [--ibsm PATH] [--keep]
                       [--no-save]"""
import os
import random
import re
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (processes, fabrics, the two SMs)
import sa_bench as SA  # noqa: E402  (the load client's output, the fabric's facts)
import scale_bench as SC  # noqa: E402  (sampled host pairs walked by ibtracert -G)

REC = 280          # tests/tools/smpcount.c: struct trace_rec
CLASS_SM_LID, CLASS_SM_DR = 0x01, 0x81
METHOD_SET, METHOD_TRAP, METHOD_TRAP_REPRESS = 0x02, 0x05, 0x07
ATTR_SWITCH_INFO, ATTR_LFT = 0x0012, 0x0019


def read_trace(path, offset):
    """[(ns, direction, class, method, attr, tid)] of the records from byte offset on."""
    out = []
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    for i in range(0, len(data) - REC + 1, REC):
        ns, _pid, direction = struct.unpack_from("<QIB", data, i)
        mad = data[i + 24:i + 24 + 24]
        out.append((ns, direction, mad[1], mad[3], mad[16] << 8 | mad[17], mad[8:16]))
    return out


def repair_figures(recs):
    """From the records after one link change: seconds from the first trap received to the last
    answer to an LFT Set, SMPs sent, LFT blocks written; None when no trap or no LFT Set. Also
    ms from the trap to the first SMP the SM sends for it (a TrapRepress is not one) and from
    there to the last SwitchInfo sent before the first LFT Set (the reads and the verification)."""
    smi = (CLASS_SM_LID, CLASS_SM_DR)
    trap = next((r[0] for r in recs if r[1] == 1 and r[2] in smi and r[3] == METHOD_TRAP), None)
    if trap is None:
        return None
    sets = {r[5] for r in recs if r[1] == 0 and r[2] in smi and r[3] == METHOD_SET and r[4] == ATTR_LFT
            and r[0] >= trap}
    acks = [r[0] for r in recs if r[1] == 1 and r[5] in sets and r[4] == ATTR_LFT]
    if not acks:
        return {"trap_to_lft_s": None, "smps": None, "lft_blocks": 0}
    last = max(acks)
    smps = sum(1 for r in recs if r[1] == 0 and r[2] in smi and trap <= r[0] <= last)
    out = [r for r in recs if r[1] == 0 and r[2] in smi and r[3] != METHOD_TRAP_REPRESS and trap <= r[0] <= last]
    first_lft = min(r[0] for r in out if r[3] == METHOD_SET and r[4] == ATTR_LFT)
    si = [r[0] for r in out if r[4] == ATTR_SWITCH_INFO and r[0] < first_lft]
    return {"trap_to_lft_s": round((last - trap) / 1e9, 4), "smps": smps, "lft_blocks": len(sets),
            "trap_to_smp_ms": round((out[0][0] - trap) / 1e6, 2) if out else None,
            "reads_ms": round((si[-1] - out[0][0]) / 1e6, 2) if out and si else None}


def wait_repaired(trace, offset, quiet_s, limit_s):
    """Waits until the SM has written LFT blocks since byte offset and then sent nothing for
    quiet_s (an SM may compute routes for seconds without a MAD: OpenSM does); at most limit_s.
    Returns True when it did."""
    t0, pos, seen = time.monotonic(), offset, False
    since = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        time.sleep(0.25)
        size = os.path.getsize(trace)
        if size != pos:
            with open(trace, "rb") as f:
                f.seek(pos)
                data = f.read(size - pos)
            n = len(data) // REC * REC
            for i in range(0, n, REC):
                mad = data[i + 24:i + 48]
                if data[i + 12] == 0 and mad[3] == METHOD_SET and (mad[16] << 8 | mad[17]) == ATTR_LFT:
                    seen = True
            pos += n
            since = time.monotonic()
        elif seen and time.monotonic() - since >= quiet_s:
            return True
    return False


def wait_quiet(trace, quiet_s, limit_s):
    """Waits until the trace has not grown for quiet_s (at most limit_s)."""
    t0 = time.monotonic()
    size, since = os.path.getsize(trace), time.monotonic()
    while time.monotonic() - t0 < limit_s:
        time.sleep(0.1)
        s = os.path.getsize(trace)
        if s != size:
            size, since = s, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return True
    return False


def host_link(net, client):
    """((switch, port), CA name) of the last link of a switch to a CA other than CLIENT in an
    ibsim net file: a host far from the load client and from the SM's (the first CAs)."""
    kind, name, out = None, None, None
    for line in open(net):
        m = re.match(r'^(Switch|Hca|Ca)\s+\d+\s+"([^"]+)"', line)
        if m:
            kind, name = m.group(1), m.group(2)
            continue
        m = re.match(r'^\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
        if m and kind == "Switch" and m.group(2).startswith("H-") and m.group(2) != client:
            out = ((name, int(m.group(1))), m.group(2))
    return out


def measure(fabric, umad2sim, load, reps, quiet_s, pairs, window, link):
    """umad2sim: the SM's LD_PRELOAD (the tracer first); the load client gets the last part."""
    plain = umad2sim.split(":")[-1]
    ca, _ = SA.net_facts(fabric.net)
    maxlid = fabric.size["hosts"] + fabric.size["switches"]

    def run(sim, rundir, out):
        trace = os.path.join(rundir, "mads.trace")
        out["link"] = '%s[%d]' % link
        out["down"], out["up"] = [], []
        # the SA load for the whole series; the changes are made while it runs
        seconds = reps * 2 * (quiet_s + 60) + 120
        env = SA.client_env(sim, plain, rundir, ca)
        env.pop("SMPCOUNT_TRACE", None)
        lout = os.path.join(rundir, "load.out")
        lp = B.PROCS.start([load, "-n", str(maxlid), "-w", str(window), "-d", str(seconds), "-T"],
                           rundir, env, lout)
        try:
            wait_quiet(trace, quiet_s, 120)
            for rep in range(reps):
                for kind, cmd in (("down", "Unlink"), ("up", "ReLink")):
                    off = os.path.getsize(trace)
                    sim.console('%s "%s"[%d]' % (cmd, link[0], link[1]))
                    wait_repaired(trace, off, quiet_s, 900)
                    out[kind].append(repair_figures(read_trace(trace, off)))
                    if rep == reps - 1 and pairs:
                        # what the switches hold after the repair: sampled pairs walked
                        out["delivered_" + kind] = SC.check_pairs(sim, plain, rundir, pairs)
        finally:
            B.PROCS.stop(lp)
        with open(lout) as f:
            res = SA.parse_load(f.read())
        out["sa"] = {k: res.get(k) for k in ("qps", "ok", "timeouts", "p99_ms", "max_ms")}
    return run


def med(rows, key):
    vals = [r[key] for r in rows if r and r.get(key) is not None]
    return statistics.median(vals) if vals else None


def markdown(meta, runs):
    lines = ["## Repair: a %s link down and up (%s)" % (meta.get("kind", "spine"), meta["fabric"]), "",
             "%s, %s. Link %s taken down and brought back %d times in ibsim; times from the MAD "
             "trace of each SM (tests/tools/smpcount.so): first trap received -> last LFT Set "
             "answered. SA: bench/sa_load.c, %d PathRecord queries outstanding throughout. Delivery: random "
             "host pairs walked through the switches' LFTs by ibtracert -G after the last repairs." % (
                 meta["date"], meta["machine"], meta.get("link"), meta["reps"], meta.get("sa_window", 32)), "",
             "| SM | change | trap -> last LFT ack s (median) | all | SMPs sent | LFT blocks | trap -> first SMP ms | "
             "first SMP -> last SwitchInfo ms |",
             "|---|---|---|---|---|---|---|---|"]
    for r in runs:
        if "error" in r:
            lines.append("| %s | | (%s) | | | | | |" % (r["sm"], r["error"][:80]))
            continue
        for kind in ("down", "up"):
            rows = r.get(kind, [])
            m = med(rows, "trap_to_lft_s")
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["sm"], kind, "%.3f" % m if m is not None else "-",
                " ".join("%.3f" % x["trap_to_lft_s"] if x and x.get("trap_to_lft_s") is not None
                         else "-" for x in rows),
                med(rows, "smps"), med(rows, "lft_blocks"), med(rows, "trap_to_smp_ms"), med(rows, "reads_ms")))
    lines += ["", "| SM | pairs delivered after the last link down | after it came back |", "|---|---|---|"]
    for r in runs:
        d, u = r.get("delivered_down"), r.get("delivered_up")
        if d or u:
            lines.append("| %s | %s | %s |" % (r["sm"], "%d/%d" % (d["delivered"], d["pairs"]) if d else "-",
                                                "%d/%d" % (u["delivered"], u["pairs"]) if u else "-"))
    lines += ["", "| SM | SA queries/s | ok | timeouts | p99 ms | max ms |", "|---|---|---|---|---|---|"]
    for r in runs:
        sa = r.get("sa") or {}
        if sa.get("qps") is not None:
            lines.append("| %s | %.0f | %d | %d | %.2f | %.1f |" % (
                r["sm"], sa["qps"], sa["ok"], sa["timeouts"], sa["p99_ms"], sa["max_ms"]))
    by = {r["sm"]: r for r in runs}
    if "OpenSM" in by and "ibsm" in by:
        lines.append("")
        for kind in ("down", "up"):
            a, b = med(by["ibsm"].get(kind, []), "trap_to_lft_s"), med(by["OpenSM"].get(kind, []),
                                                                       "trap_to_lft_s")
            if a and b:
                lines.append("- link %s: ibsm %.3f s, OpenSM %.3f s: OpenSM/ibsm %.1fx" % (
                    kind, a, b, b / a))
    return "\n".join(lines) + "\n"


def main(argv):
    def add(ap):
        ap.add_argument("--reps", type=int, default=3)
        ap.add_argument("--sa-window", type=int, default=4,
                        help="PathRecord queries the SA load client keeps outstanding (4: an SA in "
                             "use; sa_bench.py measures 32 through a re-route)")
        ap.add_argument("--pairs", type=int, default=100,
                        help="random host pairs walked (ibtracert -G) after the last repairs")
        ap.add_argument("--quiet", type=float, default=4.0,
                        help="a repair is over when the SM sent nothing for this long (s)")
        ap.add_argument("--link", choices=("spine", "host"), default="spine",
                        help="the link taken down and back: a top switch's, or a host's")
    a = B.section_args("OpenSM's and ibsm's repair of a spine link", 8192, argv, add)
    smpcount = os.path.join(os.path.dirname(a.ibsm), "tests", "tools", "smpcount.so")

    def prepare(work, fabric, umad2sim, meta):
        load = B.build_client(os.path.dirname(a.ibsm), "sa_load")
        if not load or not os.path.exists(smpcount):
            sys.stderr.write("repair: needs %s and sa_load\n" % smpcount)
            return None
        meta["client"], link = SA.net_facts(fabric.net)
        meta["kind"] = a.link
        gone = None
        if a.link == "host":
            link, host = host_link(fabric.net, meta["client"])
            gone = "0x%016x" % (int(host[2:], 16) + 1)  # genfab: port GUID = node GUID + 1
        meta["link"] = "%s[%d]" % link
        meta["reps"] = a.reps
        # the host that leaves is not among the pairs walked after the link went down
        guids = [g for g in SC.host_guids(fabric, work) if g != gone]
        rnd = random.Random(29)
        pairs = [tuple(rnd.sample(guids, 2)) for _ in range(a.pairs)]
        meta["sa_window"] = a.sa_window
        return measure(fabric, umad2sim, load, a.reps, a.quiet, pairs, a.sa_window, link), None

    # both SMs start with the tracer ahead of umad2sim and write their trace into their run
    # directory (side_by_side starts them there)
    find = B.find_umad2sim
    B.find_umad2sim = lambda: "%s:%s" % (smpcount, find())
    os.environ["SMPCOUNT_TRACE"] = "mads.trace"
    return B.run_section("repair", a, prepare, markdown)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
