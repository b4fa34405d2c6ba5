#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""83-route-overlap.t - what needs no routes is programmed while the routing thread computes
them (issue 29, bring-up at the simulator's ceiling). The test engine tests/plugins/gate.c
holds its route() until the file $IBSM_GATE_FILE exists, so routing is known not to have
finished until the test creates it. On ftree-small with a partition policy giving every CA
the non-default key 0x0123:
- 1: before the release, host h2's own port (read by directed route from h2, `smpquery -D`)
  shows a LID and a P_Key table holding 0x0123: LIDs and P_Keys were written beside the
  routing (without the overlap the wait ends at its ceiling: nothing is written before the
  routes are there);
- 2-4: after the release: SUBNET UP with gate's routes, every source CA port reaches every
  destination LID (the tables read back), every linked port ACTIVE;
- 5-7: a second daemon on a fresh fabric, SIGTERM while gate holds the routing: exit status 0;
  what was written beside the routing stays (h2's LID and P_Key), nothing that needs routes is
  (no LFT entry on any switch, no port ACTIVE)."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
KEY = 0x0123
tap = h.start(plan=7, timeout=400, need=("smpquery",))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this tests ibsm's programming beside its routing")
net = h.need_fabric(tap, "ftree-small.net")
tplugins = os.path.join(h.build_dir(), "tests", "plugins")
if not os.path.isfile(os.path.join(tplugins, "gate.so")):
    tap.bail_out("%s/gate.so not built (run make)" % tplugins)
dirs = tplugins + ":" + os.path.join(h.build_dir(), "plugins")
PKEY_LINE = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{1,4})+)\s*$")


def pkeys_of(text):
    """smpquery pkeys output -> the non-zero keys (membership bit dropped)."""
    keys = set()
    for line in text.splitlines():
        m = PKEY_LINE.match(line)
        if m:
            keys.update(int(w, 16) & 0x7fff for w in m.group(2).split() if int(w, 16))
    return keys


def host_port(sim, host):
    """(LID, P_Keys) of HOST's own port, read from HOST by directed route (no LID needed)."""
    pi = sim.run(["smpquery", "-D", "portinfo", "0"], host=host, timeout=30)
    m = re.search(r"^Lid:\.*(\d+)", pi.out, re.M)
    pk = sim.run(["smpquery", "-D", "pkeys", "0"], host=host, timeout=30)
    return (int(m.group(1)) if pi.rc == 0 and m else None,
            pkeys_of(pk.out) if pk.rc == 0 else set())


def wait_programmed(sim, host, gate, sm):
    """Waits (a generous ceiling, not a verdict) until HOST's port has a LID and KEY while the
    gate is closed; returns (seen, last (LID, keys))."""
    last = [None]

    def programmed():
        last[0] = host_port(sim, host)
        return bool(last[0][0]) and KEY in last[0][1]
    seen = h.until(lambda: not sm.alive() or programmed(), timeout=120, step=0.2)
    return seen and sm.alive() and not os.path.exists(gate), last[0]


def start(sim, log, gate):
    conf = sim.path("partitions.conf")
    with open(conf, "w") as f:
        f.write("Default=0x7fff : ALL, SELF=full ;\nBlue=0x%04x : ALL_CAS=full ;\n" % KEY)
    env = sim.env(IBSM_GATE_FILE=gate)
    env.pop("IBSM_PLUGIN_PATH", None)
    return sim.start_sm(["-f", log, "-P", conf, "--plugin-dir", dirs, "-R", "gate,no_fallback",
                         "-s", "0"], env=env, name="ibsm")


# ---- 1-4: programmed beside the routing, then up
with h.Sim(net) as sim:
    log, gate = sim.path("ibsm.log"), sim.path("gate")
    sm = start(sim, log, gate)
    try:
        seen, last = wait_programmed(sim, "h2", gate, sm)
        tap.ok(seen, "routing held by the gate: h2's port already has LID %s and P_Key 0x%04x "
               "(keys %s)" % (last and last[0], KEY, last and sorted("0x%04x" % k for k in last[1])),
               h.tail(log, 30))
        open(gate, "w").close()
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)     # readiness only
        text = h.read(log)
        tap.ok(up and re.search(r"RTE-0003 routed by gate ", text),
               "gate released: SUBNET UP, routed by gate", h.tail(log, 30))
        sm.wait_idle(1.0, POLL_S)
        snap = sim.collect()
        tap.check("every source CA port reaches every destination LID", h.check_routes(snap))
        tap.check("every linked port ACTIVE", h.check_ports_active(snap))
    finally:
        sm.stop()

# ---- 5-7: SIGTERM while the routing is held
with h.Sim(net) as sim:
    log, gate = sim.path("ibsm.log"), sim.path("gate")
    sm = start(sim, log, gate)
    try:
        seen, last = wait_programmed(sim, "h2", gate, sm)
        rc = du.signal_and_wait(sm, signal.SIGTERM, POLL_S)
        tap.ok(seen and rc == 0, "SIGTERM while the gate holds the routing: exit status 0 (got %s; "
               "h2 programmed before: %s)" % (rc, seen), sm.output()[-800:] + h.tail(log, 20))
        lid, keys = host_port(sim, "h2")
        tap.ok(lid and KEY in keys, "what was written beside the routing stays: h2 LID %s, P_Keys %s"
               % (lid, sorted("0x%04x" % k for k in keys)))
        snap = sim.collect()
        entries = sum(1 for lft in snap.lfts.values() for port in lft if port != h.NO_PORT)
        tap.ok(snap.lfts and entries == 0 and not h.check_ports_active(snap)[0],
               "nothing that needs routes: no LFT entry (%d switches, %d entries), no port ACTIVE"
               % (len(snap.lfts), entries))
    finally:
        sm.stop()
