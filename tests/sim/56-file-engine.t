#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""56-file-engine.t - the file engine (-R file, OpenSM's -U/-M) on irregular.net, judged by the
LFTs read back: a first run (-R updn -D 0x43) writes opensm-lfts.dump and
opensm-lid-matrix.dump; `-R file -U` then programs exactly those tables (routed by file, not
the fallback); `-R file -M` alone routes min-hop on the matrix (every pair delivered on a
shortest path); a dump with a bad line is declined with FILE:LINE in the log and minhop
routes the fabric; a dump naming no switch of this fabric is declined the same way. Then the
daemon on the file's tables sees a switch link go down (console Unlink): as OpenSM's file
engine (NVIDIA SM manual, "File Routing") it ignores the change and the switches keep the
file's tables; the core says which routes they no longer deliver (SRN-0002)."""
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=9, timeout=900)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: the file engine is ibsm's")
scratch = h.Scratch()
net = h.need_fabric(tap, "irregular.net")


def routed_by(text):
    m = re.findall(r"RTE-0003 routed by (\S+) ", text)
    return m[-1] if m else None


with h.Sim(net) as sim:
    r = sim.run_sm(["--once", "-f", sim.path("first.log"), "-R", "updn", "-D", "0x43"], timeout=120)
    for f in ("opensm-lfts.dump", "opensm-lid-matrix.dump"):
        src = os.path.join(sim.osmdir, f)
        if os.path.isfile(src):
            shutil.copy(src, scratch.path(f))
    first = sim.collect().lfts
    lfts, matrix = scratch.path("opensm-lfts.dump"), scratch.path("opensm-lid-matrix.dump")
    tap.ok(r.rc == 0 and os.path.isfile(lfts) and os.path.isfile(matrix) and first,
           "a first run (-R updn -D 0x43) writes opensm-lfts.dump and opensm-lid-matrix.dump",
           r.describe())

with h.Sim(net) as sim:
    log = sim.path("file.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "file", "-U", lfts, "-M", matrix], timeout=120)
    text = h.read(log)
    got = sim.collect().lfts
    tap.ok(r.rc == 0 and routed_by(text) == "file" and "RTE-0002" not in text,
           "-R file -U -M: exit 0, routed by file itself", r.describe() + h.tail(log, 10))
    diff = [g for g in first if first[g] != got.get(g)]
    tap.ok(not diff, "the switches hold exactly the tables of the dump (%d switches)" % len(first),
           "%d differ" % len(diff))

with h.Sim(net) as sim:
    log = sim.path("matrix.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "file", "-M", matrix], timeout=120)
    rep = h.walk_routes(sim.collect())
    tap.ok(r.rc == 0 and routed_by(h.read(log)) == "file" and rep.ok() and rep.non_minimal == 0,
           "-R file -M alone: routed by file, min-hop on the matrix, every pair delivered on a "
           "shortest path", rep.summary() + h.tail(log, 6))

    # a bad line: declined with file:line, minhop routes
    lines = h.read(lfts).splitlines(True)
    at = next(i for i, l in enumerate(lines) if l.startswith("0x"))
    lines[at] = "0xZZZZ 001 # broken\n"
    bad = scratch.path("bad-lfts.dump")
    with open(bad, "w") as f:
        f.writelines(lines)
    log = sim.path("bad.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "file", "-U", bad], timeout=120)
    text = h.read(log)
    rep = h.walk_routes(sim.collect())
    tap.ok(r.rc == 0 and ("%s:%d: cannot read the LID" % (bad, at + 1)) in text and
           routed_by(text) == "minhop" and rep.ok(),
           "a dump with a bad line: declined naming FILE:LINE, minhop routes every pair",
           r.describe() + h.tail(log, 8))

    # a dump of another fabric
    other = scratch.path("other-lfts.dump")
    with open(other, "w") as f:
        f.write("Unicast lids [0-3] of switch Lid 1 guid 0x0000000000abcdef ('x'):\n0x0001 000 # x\n")
    log = sim.path("other.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "file", "-U", other], timeout=120)
    text = h.read(log)
    tap.ok(r.rc == 0 and "has no table of a switch of this fabric" in text and
           routed_by(text) == "minhop",
           "a dump of another fabric: declined (said in the log), minhop routes",
           r.describe() + h.tail(log, 8))

with h.Sim(net) as sim:
    log = sim.path("daemon.log")
    sm = sim.start_sm(["-f", log, "-s", "0", "-R", "file", "-U", lfts], name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 120) and sm.wait_idle(1.0, 60) is not None
    base = sim.collect().lfts
    tap.ok(up and base == first, "the daemon on -R file -U: SUBNET UP with the dump's tables",
           h.tail(log, 8))
    n0 = len(re.findall(r"RTE-0003 routed by", h.read(log)))
    sim.console('Unlink "s2"[5]')  # s2 - s7, a switch link
    rerouted = bool(h.until(lambda: len(re.findall(r"RTE-0003 routed by", h.read(log))) > n0, 60))
    sm.wait_idle(1.0, 60)
    text = h.read(log)
    tap.ok(rerouted, "the link down is seen: a new routing pass", h.tail(log, 8))
    after = sim.collect().lfts
    diff = [g for g in first if first[g] != after.get(g)]
    sm.stop()
    tap.ok(rerouted and not diff and routed_by(text) == "file" and "SRN-0002" in text,
           "after the Unlink the switches still hold the dump's tables (topology changes ignored, "
           "the holes named in a WARN)",
           "%d switches changed; routed by %s\n%s" % (len(diff), routed_by(text), h.tail(log, 8)))
scratch.stop()
tap.done()
