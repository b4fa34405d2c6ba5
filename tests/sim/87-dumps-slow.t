#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""87-dumps-slow.t - the dump files of one sweep still being written when the next sweep
reaches its own (the route dumps of a large fabric take seconds, a busy disk more): the next
sweep waits for them, and the SA must be served meanwhile. A repair benchmark at 8192 hosts
with the route dumps on (-V) showed the event loop blocked 3.7-5.1 s in that wait and the SA
silent for 3 s (20 timeouts). tests/tools/slowfsync.so makes the SM's fsync of
opensm-subnet.lst wait while a gate file exists, so "the last dumps are still being written"
is certain, not a matter of timing. tiny.net:
- 1: SUBNET UP; the dump thread is held in its fsync;
- 2: a heavy sweep (SIGHUP) reaches its dumps while the last ones are held: SWP-0025;
- 3: the SA answers meanwhile (saquery -N from h2, with the RMPP library);
- 4: the gate removed, the sweep ends (SWP-0005), the SM alive, opensm-subnet.lst written.
Broken on purpose (write_dumps joining the dump thread without serving the fabric): 3 fails."""
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=4, timeout=400, need=("saquery",))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this tests ibsm's sweep")
net = h.need_fabric(tap, "tiny.net")
shim = os.path.join(h.build_dir(), "tests", "tools", "slowfsync.so")
if not os.path.isfile(shim):
    tap.bail_out("%s not built (run make)" % shim)


def wait_file(path, timeout, alive):
    """True once path exists; False after timeout (a ceiling that only catches a hang) or when
    the SM is gone."""
    end = time.monotonic() + h.patience(timeout)
    while time.monotonic() < end and alive():
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return os.path.exists(path)


with h.Sim(net, host="h1") as sim:
    log, gate = sim.path("ibsm.log"), sim.path("gate")
    open(gate, "w").close()
    env = sim.env("h1", rmpp=True, SLOWFSYNC_GATE=gate, SLOWFSYNC_MATCH="opensm-subnet.lst")
    env["LD_PRELOAD"] = shim + " " + env["LD_PRELOAD"]
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="ibsm", env=env)
    try:
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        held = wait_file(gate + ".held", POLL_S, sm.alive)
        tap.ok(up and held, "SUBNET UP; the dump thread held in its fsync of opensm-subnet.lst",
               h.tail(log))

        off = du.size(log)
        os.kill(sm.pid, signal.SIGHUP)
        waiting = du.wait_text(log, off, r"SWP-0025", POLL_S, alive=sm.alive)
        tap.ok(waiting is not None, "a heavy sweep (SIGHUP) reaches its dumps while the last "
               "ones are held: SWP-0025", du.since(log, off)[-1500:])

        r = sim.query(["saquery", "-N"], host="h2", timeout=30, env=sim.env("h2", rmpp=True),
                      ok=lambda r: r.rc == 0 and "NodeRecord dump" in r.text)
        tap.ok(r.rc == 0 and r.text.count("NodeRecord dump") >= 4 and os.path.exists(gate),
               "the SA answers while the sweep waits for the held dumps (%d NodeRecords)"
               % r.text.count("NodeRecord dump"), r.text[-800:] + du.since(log, off)[-800:])

        os.unlink(gate)
        done = du.wait_text(log, off, r"SWP-0005", POLL_S, alive=sm.alive)
        lst = os.path.join(sim.osmdir, "opensm-subnet.lst")
        tap.ok(done is not None and sm.alive() and os.path.exists(lst),
               "the gate removed: the sweep ends (SWP-0005), the SM alive, opensm-subnet.lst "
               "written", du.since(log, off)[-1500:])
    finally:
        if os.path.exists(gate):
            os.unlink(gate)
        sm.stop()
tap.done()
