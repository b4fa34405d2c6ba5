#!/usr/bin/env python3
"""17-config.t - the -F configuration file, at start and on SIGHUP. A malformed YAML file, an
unknown key and a bad value: exit 1 with FILE:LINE:COL naming the right line. A running
daemon: a valid edit (routing_engine, sweep_interval) is picked up on SIGHUP; the same file
then broken: SIGHUP logs the error with line and column, the daemon keeps running with the
previous settings (the next heavy sweep still routes with them) and the fabric stays
correct. sweep_interval is seen from outside as the extra SMPs of light sweeps between two
no-change heavy sweeps (STS-0002 sent=, SIGHUP to SIGHUP)."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

GAP_S = 2.6           # seconds between the two SIGHUPs whose SMP difference is measured
tap = h.start(plan=18, timeout=100)
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: ibsm's configuration file")


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)     # as an editor or config manager would: never half a file


BAD = [  # (name, text, line of the mistake)
    ("malformed YAML (a mapping indented under a scalar value)",
     "# ibsm\nrouting_engine: minhop\n  sweep_interval: 0\n", 3),
    ("unknown key", "routing_engine: minhop\n\nsweep_intervall: 0\n", 3),
    ("bad value", "# comment\nrouting_engine: minhop\nsweep_interval: often\n", 3),
]

with h.Sim(net) as sim:
    # ---- at start: exit 1 with FILE:LINE:COL
    for name, text, line in BAD:
        cfg = sim.path("bad.yaml")
        write(cfg, text)
        log = sim.path("bad.log")
        r = sim.run_sm(["-F", cfg, "-f", log, "--once"], host="h1", timeout=20)
        said = r.text + h.read(log)
        tap.ok(r.rc == 1 and not r.crashed(), "%s: exit status 1" % name, r.describe())
        tap.ok(re.search(r"%s:%d:\d+" % (re.escape(cfg), line), said),
               "%s: the message says %s:%d:COLUMN" % (name, os.path.basename(cfg), line), said[-800:])
    tap.ok("SUBNET UP" not in h.read(sim.path("bad.log")), "nothing was brought up with a bad file")

    # ---- a running daemon reloads its file on SIGHUP
    cfg = sim.path("ibsm.yaml")
    write(cfg, "routing_engine: minhop\nsweep_interval: 0\n")
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-F", cfg, "-f", log], host="h1", name="ibsm")
    ok = sm.wait_for(log, r"SWP-0002 SUBNET UP", 30) and du.wait_quiet(log)
    tap.ok(ok and re.search(r"RTE-0003 routed by minhop", h.read(log)),
           "daemon with -F (routing_engine: minhop, sweep_interval: 0) reaches SUBNET UP", h.tail(log))

    def hup(pattern=r"SWP-0005 heavy sweep.*STS-0002 STATS[^\n]*\n"):
        """SIGHUP, wait for the heavy sweep's statistics; returns the log text it added."""
        off = du.size(log)
        sm.popen.send_signal(signal.SIGHUP)
        du.wait_text(log, off, r"LOOP-0005.*" + pattern, 10, sm.alive)
        return du.since(log, off)

    def light_smps(settle=GAP_S):
        """SMPs sent between two SIGHUPs GAP_S apart, minus those of the second no-change
        heavy sweep: what light sweeps (and standby polls) sent meanwhile."""
        a = du.last_stats(hup(), du.STS2_RE).get("sent", 0)
        time.sleep(settle)
        t = hup()
        b = du.last_stats(t, du.STS2_RE).get("sent", 0)
        sweep = sum(int(x) for x in re.findall(r"STS-0001 STATS phase=\w+ smps=(\d+)", t))
        return b - a - sweep, t

    base, _ = light_smps()
    tap.ok(base == 0, "sweep_interval: 0: no light sweep between two SIGHUPs %.1f s apart (%d extra SMPs)"
           % (GAP_S, base))

    # ---- a valid edit is picked up
    write(cfg, "routing_engine: updn\nsweep_interval: 1\n")
    t = hup()
    tap.ok(re.search(r"RTE-0003 routed by updn", t), "valid edit + SIGHUP: the sweep routes with updn",
           "\n".join(l for l in t.splitlines() if "STS-0001" not in l)[-1500:])
    extra, _ = light_smps()
    tap.ok(extra >= 9, "valid edit + SIGHUP: sweep_interval: 1 takes effect (%d SMPs of light sweeps in "
           "%.1f s; one light sweep here is 9)" % (extra, GAP_S),
           "the light-sweep timer does not follow the reloaded sweep_interval")

    # ---- the same file broken: kept
    write(cfg, "sweep_interval: 0\nrouting_engine: minhop\n  lmc: 0\n")
    t = hup()
    tap.ok(re.search(r"LOOP-0006", t) and re.search(r"%s:3:\d+" % re.escape(cfg), t),
           "broken edit + SIGHUP: the error is logged with %s:3:COLUMN (LOOP-0006)" % os.path.basename(cfg),
           "\n".join(l for l in t.splitlines() if re.search(r"LOOP-00|CFG-", l)))
    tap.ok(sm.alive(), "broken edit + SIGHUP: the daemon keeps running", sm.output()[-500:])
    tap.ok(re.search(r"RTE-0003 routed by updn", t) and not re.search(r"routed by minhop", t),
           "broken edit + SIGHUP: the sweep that follows still routes with updn (running configuration kept)",
           "\n".join(l for l in t.splitlines() if "ENG-" in l))
    extra, _ = light_smps()
    tap.ok(extra >= 9, "broken edit + SIGHUP: sweep_interval stays 1 (%d SMPs of light sweeps in %.1f s)"
           % (extra, GAP_S))
    # a trap-driven sweep after the failed reload: still updn, fabric correct
    off = du.size(log)
    sim.console('Unlink "leaf2"[5]')
    du.wait_text(log, off, r"TRP-0001.*SWP-0002 SUBNET UP", 5, sm.alive)
    du.wait_quiet(log, 0.5, 5)
    t = du.since(log, off)
    snap = sim.collect()
    tap.ok(re.search(r"RTE-0003 routed by updn", t) and not re.search(r"routed by minhop", t),
           "broken file on disk: a trap's heavy sweep still routes with updn",
           "\n".join(l for l in t.splitlines() if "STS-0001" not in l)[-1200:])
    tap.check("broken file on disk: every pair delivered after the link went down", h.check_routes(snap))
    rc, secs = du.signal_and_time(sm, signal.SIGTERM, 5)
    sm.stop()
    tap.ok(rc == 0, "the daemon exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])
tap.done()
