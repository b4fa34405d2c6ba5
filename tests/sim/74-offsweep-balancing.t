#!/usr/bin/env python3
"""74-offsweep-balancing.t - off-sweep balancing (offsweep_balancing_enabled, _window) with
minhop and the unicast cache (-A) on tiny.net, judged by the switches' LFTs as dump_fts reads
them. sw1 and sw2 are joined by two parallel links (ports 7 and 8); one is unlinked before
ibsm starts, so every route between the switches takes port 7. The link comes back (ReLink:
trap 128): the cached routes are still valid and kept, so port 8 carries nothing. With
balancing on (window 5 s), once the fabric is quiet the routes are computed afresh (OFS-0001)
and sw1 sends some of sw2's hosts through port 8; with it off the routes stay on port 7."""
import os
import re
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SW1, SW2 = 0x200000, 0x200001
# the quiet window: longer than reading the tables back takes on a loaded machine (the "kept"
# snapshot must come before the balancing), scaled with the waits' ceilings
WINDOW = int(h.patience(5))


def ports_to_sw2_hosts(snap):
    """The set of sw1 exit ports of the LIDs of h3 and h4 (behind sw2)."""
    lft = snap.lfts.get(SW1)
    out = set()
    for guid, node in snap.nodes.items():
        if node.desc in ("h3", "h4"):
            for p in node.ports.values():
                if p.lid and lft and p.lid < len(lft):
                    out.add(lft[p.lid])
    return out


def run(sim, enabled):
    tag = "on" if enabled else "off"
    sim.console('Unlink "sw1"[8]')
    cfg = sim.path("ibsm-%s.yaml" % tag)
    with open(cfg, "w") as f:
        f.write("offsweep_balancing_enabled: %s\noffsweep_balancing_window: %d\n"
                % ("true" if enabled else "false", WINDOW))
    log = sim.path("ibsm-%s.log" % tag)
    sm = sim.start_sm(["-F", cfg, "-A", "-R", "minhop", "-f", log, "-s", "1", "-r"],
                      host="h1", name="ibsm-%s" % tag)
    up = sm.wait_for(log, r"SUBNET UP", 60)  # SWP-0002: the tables are programmed
    before = ports_to_sw2_hosts(h.Snapshot.collect(sim, "h1"))
    n = h.read(log).count("SWP-0005") + h.read(log).count("RPR-")
    sim.console('ReLink "sw1"[8]')
    deadline = h.deadline(30)
    while time.time() < deadline and h.read(log).count("SWP-0005") + h.read(log).count("RPR-") <= n:
        time.sleep(0.2)
    time.sleep(0.5)  # an observation window: what must not change (the routes kept)
    kept = ports_to_sw2_hosts(h.Snapshot.collect(sim, "h1"))
    if "OFS-0001" in h.read(log):
        tap.diag("the balancing came before the tables were read back: WINDOW %d s is too short here" % WINDOW)
    balanced = sm.wait_for(log, r"OFS-0001", WINDOW + 10) if enabled else (time.sleep(WINDOW + 3) or False)  # off: an observation window
    # on: the new tables are written after OFS-0001, poll them; off: an observation window
    after = h.until(lambda: (lambda a: a if a == {7, 8} else None)(
        ports_to_sw2_hosts(h.Snapshot.collect(sim, "h1"))), 30, 0.5) if balanced else None
    if after is None:
        time.sleep(1)  # an observation window (off: what must not change)
        after = ports_to_sw2_hosts(h.Snapshot.collect(sim, "h1"))
    rc = sm.stop()
    return up, before, kept, balanced, after, rc, log


tap = h.start(plan=6, timeout=300)
net = h.need_fabric(tap, "tiny.net")

with h.Sim(net, host="h1") as sim:
    up, before, kept, balanced, after, rc, log = run(sim, True)
    text = h.read(log)
    tap.ok(up and before == {7} and kept == {7} and "OFS-0002" in text,
           "balancing on: with sw1[8] unlinked every route to sw2's hosts takes port 7, and after "
           "the ReLink the cached routes are kept (OFS-0002)",
           "before %s kept %s\n%s" % (before, kept, "\n".join(l for l in text.splitlines()
                                                          if re.search(r"SWP-00(02|05|17)|OFS|RPR-", l))))
    tap.ok(balanced and after == {7, 8},
           "once quiet for %d s the routes are computed afresh (OFS-0001): sw1 uses both links "
           "to sw2's hosts %s" % (WINDOW, sorted(after)),
           "\n".join(l for l in text.splitlines() if re.search(r"SWP-00(02|05|17)|OFS|RPR-", l)))
    tap.ok(rc == 0, "ibsm stops cleanly (rc %s)" % rc, h.tail(log))

    up, before, kept, balanced, after, rc, log = run(sim, False)
    text = h.read(log)
    tap.ok(up and before == {7} and kept == {7}, "balancing off: the same start and ReLink",
           "before %s kept %s" % (before, kept))
    tap.ok(after == {7} and "OFS-" not in text,
           "balancing off: %d s later the routes still take port 7 only" % (WINDOW + 3),
           "after %s" % (after,))
    tap.ok(rc == 0, "ibsm stops cleanly (rc %s)" % rc, h.tail(log))
tap.done()
