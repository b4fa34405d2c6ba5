#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""qos_bench.py - the QoS section of `make bench`: OpenSM and ibsm side by side on the same
simulated XGFT fat tree, in one run, both with -Q, the same qos_* options (per-type SL2VL and
VL arbitration) and the same QoS policy file:
  bring-up   seconds to SUBNET UP, SL2VL and VLArb programming of every port included;
  PR load    bench/sa_load.c's SubnAdmGet(PathRecord) by SLID/DLID over random pairs with 1 and
             32 outstanding, every query matched against the policy's rules (ten rules, the
             last one matching, so every query walks the list).
Results: markdown on stdout and in bench/results/qos-<date>.md (and .json). Every process is
stopped by pid on every path.

usage: qos_bench.py [--hosts 2048] [--seconds 10] [--ibsm PATH] [--keep] [--no-save]"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (processes, fabrics, the two SMs)
from sa_bench import net_facts, run_load  # noqa: E402

OPTIONS = """qos_max_vls 8
qos_high_limit 4
qos_vlarb_high 0:4,1:0
qos_vlarb_low 0:0,1:64,2:128,3:192,4:0,5:64,6:64,7:64
qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7
qos_ca_sl2vl 0,1,2,3,5,5,5,7,7,0,
qos_swe_sl2vl 1,2,3,4,5,6,7,0,1,2,3,4,5,6,7,15
"""


def policy_text():
    """Nine rules a plain PathRecord query does not match (Service IDs, QoS classes, P_Keys it
    does not carry), then one that matches CA to CA: every query walks the whole list."""
    out = ["port-groups",
           " port-group\n  name: CAs\n  node-type: CA\n end-port-group",
           " port-group\n  name: Switches\n  node-type: SWITCH, SELF\n end-port-group",
           " port-group\n  name: Ranges\n  port-guid: " +
           ", ".join("0x%x-0x%x" % (k << 40, (k << 40) + 0xffff) for k in range(1, 33)) +
           "\n end-port-group",
           "end-port-groups", "qos-levels", " qos-level\n  name: DEFAULT\n  sl: 0\n end-qos-level"]
    for i in range(1, 10):
        out.append(" qos-level\n  name: L%d\n  sl: %d\n  mtu-limit: 4\n end-qos-level" % (i, i))
    out += ["end-qos-levels", "qos-match-rules"]
    for i in range(1, 4):
        out.append(" qos-match-rule\n  service-id: 0x%x-0x%x\n  qos-level-name: L%d\n"
                   " end-qos-match-rule" % (i << 20, (i << 20) + 0xfff, i))
        out.append(" qos-match-rule\n  qos-class: %d\n  qos-level-name: L%d\n end-qos-match-rule"
                   % (i, i + 3))
        out.append(" qos-match-rule\n  source: Ranges\n  pkey: 0x%x\n  qos-level-name: L%d\n"
                   " end-qos-match-rule" % (0x100 + i, i + 6))
    out.append(" qos-match-rule\n  source: CAs\n  destination: CAs, Switches\n"
               "  qos-level-name: L5\n end-qos-match-rule")
    out += ["end-qos-match-rules", ""]
    return "\n".join(out)


def measure(fabric, umad2sim, load, seconds):
    ca, _ = net_facts(fabric.net)
    maxlid = fabric.size["hosts"] + fabric.size["switches"]

    def run(sim, rundir, out):
        out["idle-1"] = run_load(load, sim, umad2sim, rundir, ca, maxlid, 1, seconds)
        out["idle-32"] = run_load(load, sim, umad2sim, rundir, ca, maxlid, 32, seconds)
    return run


def markdown(meta, runs):
    lines = ["## QoS: bring-up with -Q and PathRecords under a QoS policy (%s)" % meta["fabric"], "",
             "%s, %s. Both SMs: -Q, the same qos_* options (per-type SL2VL, VLArb, high limit) "
             "and policy file (3 port groups, 10 levels, 10 rules, the last one matching). Load "
             "client: bench/sa_load.c on %s, SubnAdmGet(PathRecord) by SLID/DLID, random pairs "
             "of LIDs 1..%d." % (meta["date"], meta["machine"], meta["client"], meta["maxlid"]), "",
             "| SM | SUBNET UP s | PR q/s, 1 outstanding | p99 ms | PR q/s, 32 outstanding | p99 ms |",
             "|---|---|---|---|---|---|"]
    for r in runs:
        if "error" in r and "idle-1" not in r:
            lines.append("| %s | (%s) | | | | |" % (r["sm"], r["error"][:80]))
            continue
        a, b = r.get("idle-1", {}), r.get("idle-32", {})
        lines.append("| %s | %s | %.0f | %.2f | %.0f | %.2f |" % (
            r["sm"], r.get("up_s"), a.get("qps", 0), a.get("p99_ms", 0), b.get("qps", 0),
            b.get("p99_ms", 0)))
    by = {r["sm"]: r for r in runs}
    if "OpenSM" in by and "ibsm" in by and by["ibsm"].get("up_s") and by["OpenSM"].get("up_s"):
        o, i = by["OpenSM"], by["ibsm"]
        lines += ["", "- bring-up with -Q: ibsm %.1f s vs OpenSM %.1f s (%.2fx OpenSM's time)" % (
            i["up_s"], o["up_s"], i["up_s"] / o["up_s"])]
        for k in ("idle-1", "idle-32"):
            x, y = i.get(k, {}), o.get(k, {})
            if x.get("qps") and y.get("qps"):
                lines.append("- %s PathRecords under the policy: ibsm/OpenSM %.1fx" % (
                    k, x["qps"] / y["qps"]))
    return "\n".join(lines) + "\n"


def main(argv):
    a = B.section_args("OpenSM's QoS vs ibsm's", 2048, argv,
                       lambda ap: ap.add_argument("--seconds", type=float, default=10))

    def prepare(work, fabric, umad2sim, meta):
        load = B.build_client(os.path.dirname(a.ibsm), "sa_load")
        if not load:
            sys.stderr.write("qos_bench: could not build bench/sa_load.c\n")
            return None
        conf, pol = os.path.join(work, "qos.conf"), os.path.join(work, "qos-policy.conf")
        with open(conf, "w") as f:
            f.write(OPTIONS)
        with open(pol, "w") as f:
            f.write(policy_text())
        meta["client"], _ = net_facts(fabric.net)
        # OpenSM takes one -F: the qos_* lines go into its bench configuration
        extra = {"OpenSM": ["-Q", "-Y", pol], "OpenSM.conf": "\n" + OPTIONS,
                 "ibsm": ["-Q", "-Y", pol, "-F", conf]}
        return measure(fabric, umad2sim, load, a.seconds), extra
    return B.run_section("qos", a, prepare, markdown)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
