#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""86-repair-resume.t - a trap that arrives while a repair's routing runs: the repair's routing
is cancelled (a newer change is due) and the next trap is repaired on the cancelled repair's
generation, not handed to a heavy sweep. A repair starts at its trap (core/sm/loop.c), so two
links going down a routing apart give two traps in two repairs; a loaded `make check` showed
the second one as a full heavy sweep (66-repair "two links at once").
The test engine tests/plugins/gate.c holds route() until $IBSM_GATE_FILE exists (and honours a
cancellation), so "a trap during the routing" is certain, not a matter of timing. ftree-3l:
- 1: ibsm -R gate up with the file present;
- 2-3: the file removed, leaf-3[5] unlinked: a repair's routing waits at the gate; leaf-4[6]
  unlinked: that routing is cancelled, and a second repair (SWP-0022) starts, no heavy sweep,
  no repair declined;
- 4-5: the file back: SUBNET UP, every pair of live hosts delivered (the tables read back), and
  the NodeInfo Gets on the wire (tests/tools/smpcount.so) fewer than half a heavy sweep's.
Broken on purpose (sweep_repair requiring subnet_up again): 2, 3 and 5 fail (a heavy sweep
instead of the second repair: 219 NodeInfo Gets where the heavy sweep sends 191)."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=5, timeout=600)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this tests ibsm's repair")
net = h.need_fabric(tap, "ftree-3l.net")
tplugins = os.path.join(h.build_dir(), "tests", "plugins")
if not os.path.isfile(os.path.join(tplugins, "gate.so")):
    tap.bail_out("%s/gate.so not built (run make)" % tplugins)
dirs = tplugins + ":" + os.path.join(h.build_dir(), "plugins")

with h.Sim(net, host="host-1") as sim:
    log, gate = sim.path("ibsm.log"), sim.path("gate")
    open(gate, "w").close()
    env = sim.env("host-1", IBSM_GATE_FILE=gate)
    env.pop("IBSM_PLUGIN_PATH", None)
    sm = sim.start_sm(["-f", log, "-s", "0", "--plugin-dir", dirs, "-R", "gate,no_fallback"],
                      host="host-1", name="ibsm", env=env)
    try:
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        tap.ok(up and sm.wait_idle(1.0, POLL_S) is not None, "ibsm -R gate up on ftree-3l", h.tail(log))

        os.unlink(gate)
        c0, off = sm.counts(), du.size(log)
        sim.console('Unlink "leaf-3"[5]')
        held = du.wait_text(log, off, r"SWP-0022.*?gate: waiting for", POLL_S, alive=sm.alive)
        off2 = du.size(log)
        sim.console('Unlink "leaf-4"[6]')
        # the held routing cancelled, a second repair read, its routing held again
        again = du.wait_text(log, off2, r"SWP-0010.*?SWP-002[23].*?gate: waiting for", POLL_S,
                             alive=sm.alive)
        text = du.since(log, off)
        tap.ok(held is not None and again is not None,
               "the first repair's routing held at the gate, cancelled by the second trap",
               "\n".join(ln for ln in text.splitlines() if re.search(r"SWP-00|TRP-|gate", ln))[-1500:])
        repairs = len(re.findall(r"SWP-0022 repair", text))
        declined = "SWP-0023" in text
        heavy = "entering DISCOVERING" in text or re.search(r"PHS-0001 phase discovery: \d+ nodes", text)
        tap.ok(repairs == 2 and not declined and not heavy,
               "the second trap is repaired on the cancelled repair's generation: %d repairs, "
               "declined %s, heavy sweep %s" % (repairs, declined, bool(heavy)),
               "\n".join(ln for ln in text.splitlines() if "SWP-00" in ln)[-1500:])

        open(gate, "w").close()
        du.wait_text(log, off2, r"SWP-0002 SUBNET UP", POLL_S, alive=sm.alive)
        du.wait_settled(sm, log, off, POLL_S)
        snap = sim.collect(host="host-9")
        ok, detail = h.check_routes(snap)
        d = sm.counts() - c0
        repair_ni = d.gets(h.NODEINFO)
        # a heavy sweep of the same fabric, for its NodeInfo count
        c1, off3 = sm.counts(), du.size(log)
        os.kill(sm.pid, signal.SIGHUP)
        du.wait_text(log, off3, r"SWP-0005", POLL_S, alive=sm.alive)
        du.wait_settled(sm, log, off3, POLL_S)
        heavy_ni = (sm.counts() - c1).gets(h.NODEINFO)
        tap.ok(ok, "gate open: SUBNET UP, every pair of live hosts delivered", detail)
        tap.ok(0 < repair_ni < heavy_ni / 2,
               "%d NodeInfo Gets on the wire for both links, %d in a heavy sweep" % (repair_ni, heavy_ni),
               d.summary())
    finally:
        sm.stop()
tap.done()
