#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""21-holes.t - an engine that says it routed but leaves holes has failed, and the core says
so (tests/plugins/badport.c: every entry out of port 250, which no switch has). On the
irregular fabric:
- --once -R badport: the core walks the tables, finds every pair undelivered, falls back to
  minhop, and the diags find a correct fabric;
- --once -R badport,no_fallback: exit status 1, the reason names the engine and the holes,
  nothing that needs routes is programmed (on the wire: no LFT Set; LIDs, port settings and
  P_Keys are written beside the routing; read back: no LFT entry, no port ACTIVE);
- a daemon routed by minhop, reloaded (SIGHUP) with routing_engine badport,no_fallback: the
  sweep fails, the tables in force are kept (read back unchanged, no LFT Set), the daemon
  lives on; reloaded with minhop again, the next complete sweep says SUBNET UP although it
  has nothing to write (the subnet was not declared up meanwhile)."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=17, timeout=400)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this tests ibsm's check of an engine's tables")
net = h.need_fabric(tap, "irregular.net")
tplugins = os.path.join(h.build_dir(), "tests", "plugins")
if not os.path.isfile(os.path.join(tplugins, "badport.so")):
    tap.bail_out("%s/badport.so not built (run make)" % tplugins)
dirs = tplugins + ":" + os.path.join(h.build_dir(), "plugins")


def env_of(sim):
    env = sim.env()
    env.pop("IBSM_PLUGIN_PATH", None)
    return env


# ---- 1-7: falls back to minhop
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "--plugin-dir", dirs, "-R", "badport"], env=env_of(sim), timeout=90)
    tap.ok(r.rc == 0 and not r.crashed(), "-R badport: ibsm --once exits 0", r.describe() + "\n" + h.tail(log))
    text = h.read(log)
    tap.ok(re.search(r"RTE-0001 routing engine badport declined: its tables leave holes: \d+ of \d+ "
                     r"\(switch, LID\) pairs not delivered", text) and
           re.search(r"RTE-0003 routed by minhop ", text),
           "-R badport: the log says badport left holes and minhop routed (which engine wrote the "
           "tables is not observable from outside; that they are correct is, below)",
           "\n".join(l for l in text.splitlines() if re.search(r"RTE-|MRG-", l))[-1500:])
    h.fabric_checks(tap, sim, diag_log=log)

# ---- 8-11: no fallback: nothing programmed
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "--plugin-dir", dirs, "-R", "badport,no_fallback"],
                   env=env_of(sim), timeout=90)
    said = r.text + h.read(log)
    tap.ok(r.rc == 1 and not r.crashed(), "-R badport,no_fallback: exit status 1", r.describe())
    tap.ok(re.search(r"badport: its tables leave holes: \d+ of \d+ \(switch, LID\) pairs not delivered, "
                     r"e\.g\. switch 0x[0-9a-f]{16} \([^)]*\) to LID \d+: no entry", said) and
           "SUBNET UP" not in said,
           "-R badport,no_fallback: the reason names the engine, the holes and an example; no SUBNET UP",
           said[-1500:])
    lft_sets = r.counts.sets(h.LFT) if r.counts.valid else -1
    tap.ok(lft_sets == 0, "-R badport,no_fallback: no LFT Set SMP sent (what needs no routes is "
           "written beside the routing): %s" % r.counts.summary(), r.counts.describe_sets())
    snap = sim.collect()
    entries = sum(1 for lft in snap.lfts.values() for port in lft if port != h.NO_PORT)
    tap.ok(snap.lfts and entries == 0 and not h.check_ports_active(snap)[0],
           "-R badport,no_fallback: read back, no switch has an LFT entry and no port is ACTIVE "
           "(%d switches, %d entries)" % (len(snap.lfts), entries))

# ---- 12-17: a daemon keeps the routes in force
with h.Sim(net) as sim:
    n_nodes = len(sim.netfile.nodes)
    cfg = sim.path("ibsm.yaml")

    def write(text):
        with open(cfg + ".tmp", "w") as f:
            f.write(text)
        os.rename(cfg + ".tmp", cfg)

    write("routing_engine: minhop\nsweep_interval: 0\n")
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-F", cfg, "-f", log, "--plugin-dir", dirs], env=env_of(sim), name="ibsm")
    sm.wait_for(log, r"SUBNET UP", POLL_S)          # readiness only
    sm.wait_idle(1.0, POLL_S)
    before = sim.collect()
    tap.check("daemon, minhop: every source CA port reaches every destination LID",
              h.check_routes(before))

    def hup():
        c0, off = sm.counts(), du.size(log)
        sm.popen.send_signal(signal.SIGHUP)
        c, ok = sm.wait_counts(lambda c: (c - c0).gets(h.NODEINFO) >= n_nodes, POLL_S)
        # the sweep's end (its summary, or no routes at all), then a quiet second
        du.wait_text(log, off, r"SWP-00(05|18)", POLL_S, sm.alive)
        sm.wait_idle(1.0, 10)
        return ok, sm.counts() - c0

    write("routing_engine: badport,no_fallback\nsweep_interval: 0\n")
    off = du.size(log)
    swept, sent = hup()
    m = du.wait_text(log, off, r"SWP-0018 no routes for generation \d+: nothing is programmed", POLL_S, sm.alive)
    tap.ok(swept and m and sm.alive(),
           "reload with badport,no_fallback: the sweep fails with SWP-0018, the daemon keeps running",
           du.since(log, off)[-1500:])
    after = sim.collect()
    unchanged = h.check_unchanged(before, after)
    tap.ok(unchanged[0] and sent.sets(h.LFT) == 0,
           "reload with badport,no_fallback: the tables in force are kept (%s; %d LFT Sets)" %
           (unchanged[1], sent.sets(h.LFT)), sent.describe_sets(after))
    tap.check("reload with badport,no_fallback: every route still delivered", h.check_routes(after))

    write("routing_engine: minhop\nsweep_interval: 0\n")
    off = du.size(log)
    swept, sent = hup()
    # the first complete sweep says one or the other (a retry of the failed one may come first)
    m = du.wait_text(log, off, r"SWP-0002 SUBNET UP|SWP-0006", POLL_S, sm.alive)
    tap.ok(swept and m and "SUBNET UP" in m.group(0),
           "reload with minhop again: the complete sweep says SUBNET UP (%d Sets: nothing to write, "
           "but the subnet was not up since the failed sweep)" % sent.sets(),
           du.since(log, off)[-1500:])
    tap.ok(h.check_unchanged(before, sim.collect())[0] and sm.alive(),
           "reload with minhop again: same tables as before, daemon running")
    sm.stop()
tap.done()
