#!/usr/bin/env python3
"""17-config.t - the -F configuration file, at start and on SIGHUP, on the irregular fabric
(tests/fabrics/irregular.net), where the engines can be told apart from outside: minhop routes
every pair on a shortest path and its channel dependency graph has a cycle there, updn's is
acyclic and some of its routes are longer. A malformed YAML file and two bad values:
exit 1 with FILE:LINE:COL naming the right line (the message is the feature), and not
one Set SMP sent (the SMP counter shim). A running daemon: routing_engine and sweep_interval
are seen in the tables read back and on the wire (light sweeps are SMPs sent with nothing
happening: none in an idle window with sweep_interval 0, some with 1). A valid edit + SIGHUP is
applied; the same file then broken: SIGHUP logs the error with line and column, the daemon
keeps running with the previous settings (the tables stay updn's, light sweeps go on) and a
trap afterwards is still routed with updn. No verdict depends on speed.
Before the fabric: the shipped template etc/ibsm.yaml is the build's own `ibsm -c` of the
defaults (as the Makefile's $(B)/ibsm.yaml writes it) and sets no key, so that in a test root
(IBSM_SYSCONFDIR) beside an OpenSM site's opensm.conf, opensm.conf is the configuration (its
sm_priority in the -c output, the log naming both files); once one key of ibsm.yaml is
uncommented, ibsm.yaml is read and a warning (LOC-0003) says opensm.conf is not."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60           # generous bound for each condition; the speed belongs in make bench
IDLE_WINDOW_S = 3.0   # an observation window in which sweep_interval 0 must send nothing
tap = h.start(plan=24, timeout=600)
net = h.need_fabric(tap, "irregular.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: ibsm's configuration file")


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)     # as an editor or config manager would: never half a file


def engine_of(snap):
    """'minhop' or 'updn' as the tables read back show it, with the evidence."""
    rep = h.walk_routes(snap)
    cyc = h.ca_cdg_cycle(snap)
    if not rep.ok():
        return None, rep.summary()
    if cyc is None and rep.non_minimal:
        return "updn", "acyclic channel dependency graph, %d routes longer than shortest" % rep.non_minimal
    if cyc is not None and not rep.non_minimal:
        return "minhop", "every route shortest, channel dependency graph has a %s" % cyc
    return "?", "cycle: %s; %d non-minimal routes" % (cyc, rep.non_minimal)


BAD = [  # (name, text, line of the mistake)
    ("malformed YAML (a mapping indented under a scalar value)",
     "# ibsm\nrouting_engine: minhop\n  sweep_interval: 0\n", 3),
    # (an unknown key is a warning since OpenSM warns and runs too: tests/sim/39-opensm-dropin.t)
    ("bad value of a key ibsm owns", "routing_engine: minhop\n\npart_enforce: sideways\n", 3),
    ("bad value", "# comment\nrouting_engine: minhop\nsweep_interval: often\n", 3),
]

# ---- the shipped template, and which file it leaves to be read (offline: --fabric, -c)
work = h.Scratch(prefix="ibsm-config.")
shipped = os.path.join(h.REPO, "etc", "ibsm.yaml")
empty = work.path("empty.yaml")
open(empty, "w").close()
off_env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "IBSM_SYSCONFDIR")}
tmpl = h.run([h.ibsm_path(), "-F", empty, "-c", "-"], env=dict(off_env, IBSM_PLUGIN_PATH=""), timeout=60)
tap.ok(tmpl.rc == 0 and tmpl.out == h.read(shipped),
       "etc/ibsm.yaml is the build's own template of the defaults (ibsm -F empty -c -)",
       "differs: regenerate it (make build/ibsm.yaml; cp build/ibsm.yaml etc/ibsm.yaml)\n" + tmpl.describe()[-600:])
set_lines = re.findall(r"(?m)^[^#\s].*$", h.read(shipped))
tap.ok(not set_lines and re.search(r"(?m)^# sm_priority: 0$", h.read(shipped)),
       "etc/ibsm.yaml sets no key: every key is commented out at its default", "set: %s" % set_lines[:5])
root = work.path("etc")
os.makedirs(os.path.join(root, "ibsm"))
os.makedirs(os.path.join(root, "opensm"))
own, osm = os.path.join(root, "ibsm", "ibsm.yaml"), os.path.join(root, "opensm", "opensm.conf")
write(own, h.read(shipped))
write(osm, "# an OpenSM site's file: the standby of an HA pair\nsm_priority 7\n")
tiny = h.fabric("tiny.net")


def which_file():
    """(-c output, log of a --fabric dry run) with the test root as SYSCONFDIR"""
    env = dict(off_env, IBSM_SYSCONFDIR=root, OSM_TMP_DIR=work.dir, OSM_CACHE_DIR=work.dir)
    c = h.run([h.ibsm_path(), "-c", "-"], env=env, cwd=work.dir, timeout=60)
    r = h.run([h.ibsm_path(), "--fabric", tiny, "-f", "-"], env=env, cwd=work.dir, timeout=60)
    return c.out, r.text


out, log = which_file()
tap.ok(re.search(r"(?m)^sm_priority: 7$", out) and
       re.search(r"INFO LOC-0001 configuration file: %s \(OpenSM's; %s sets no key: ignored\)" %
                 (re.escape(osm), re.escape(own)), log) and "LOC-0003" not in log,
       "the packaged ibsm.yaml beside an opensm.conf: opensm.conf is read (sm_priority 7), the log names "
       "both", log[-1500:])
write(own, h.read(shipped).replace("# sweep_interval: 10\n", "sweep_interval: 5\n"))
out, log = which_file()
tap.ok(re.search(r"(?m)^sweep_interval: 5$", out) and re.search(r"(?m)^# sm_priority: 0$", out) and
       re.search(r"INFO LOC-0001 configuration file: %s$" % re.escape(own), log, re.M) and
       re.search(r"WARN LOC-0003 OpenSM's %s is NOT read: %s sets keys" % (re.escape(osm), re.escape(own)), log),
       "one key uncommented: ibsm.yaml is read, opensm.conf is not (sm_priority at its default) and a "
       "warning says so (LOC-0003)", out[:300] + log[-1500:])
os.unlink(osm)
write(own, h.read(shipped))
out, log = which_file()
tap.ok(re.search(r"INFO LOC-0001 configuration file: %s \(sets no key: the defaults\)" % re.escape(own), log) and
       "LOC-0003" not in log, "the packaged ibsm.yaml alone: read, the defaults, no warning", log[-1500:])

with h.Sim(net) as sim:
    n_nodes = len(sim.netfile.nodes)
    # ---- at start: exit 1 with FILE:LINE:COL (the message is the feature), nothing sent
    sets = 0
    for name, text, line in BAD:
        cfg = sim.path("bad.yaml")
        write(cfg, text)
        log = sim.path("bad.log")
        r = sim.run_sm(["-F", cfg, "-f", log, "--once"], host="h1", timeout=POLL_S)
        said = r.text + h.read(log)
        sets += r.counts.sets() if r.counts.valid else 0
        tap.ok(r.rc == 1 and not r.crashed(), "%s: exit status 1" % name, r.describe())
        tap.ok(re.search(r"%s:%d:\d+" % (re.escape(cfg), line), said),
               "%s: the message says %s:%d:COLUMN" % (name, os.path.basename(cfg), line), said[-800:])
    snap = sim.collect()
    tap.ok(sets == 0 and not h.check_ports_active(snap)[0],
           "nothing was brought up with a bad file (%d Set SMPs sent; ports still not ACTIVE)" % sets)

    # ---- a running daemon reloads its file on SIGHUP
    cfg = sim.path("ibsm.yaml")
    write(cfg, "routing_engine: minhop\nsweep_interval: 0\n")
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-F", cfg, "-f", log], host="h1", name="ibsm")
    sm.wait_for(log, r"SUBNET UP", POLL_S)         # readiness only
    idle = sm.wait_idle(1.0, POLL_S)
    snap = sim.collect()
    eng, why = engine_of(snap)
    tap.ok(idle is not None and eng == "minhop",
           "daemon with -F (routing_engine: minhop, sweep_interval: 0) routes the fabric with minhop (%s)" % why,
           h.tail(log))

    def hup():
        """SIGHUP; wait for the reload's sweep on the wire (every node's NodeInfo read again),
        then for the tables to be written (the counter idle, or light sweeps only)."""
        c0, off = sm.counts(), du.size(log)
        sm.popen.send_signal(signal.SIGHUP)
        c, ok = sm.wait_counts(lambda c: (c - c0).gets(h.NODEINFO) >= n_nodes, POLL_S)
        # the sweep's end (its summary, or no routes at all), then a quiet second if any
        du.wait_text(log, off, r"SWP-00(05|18)", POLL_S, sm.alive)
        sm.wait_idle(1.0, 5)
        return ok

    def light_sweeps(want):
        """With WANT, poll until SMPs are sent with nothing happening (light sweeps); else
        watch an idle window of IDLE_WINDOW_S. Returns the SMPs sent meanwhile."""
        c0 = sm.counts()
        if want:
            c, _ = sm.wait_counts(lambda c: (c - c0).total_sent() > 0, POLL_S)
        else:
            time.sleep(IDLE_WINDOW_S)  # an observation window: what must not happen
            c = sm.counts()
        return (c - c0).total_sent()

    extra = light_sweeps(False)
    tap.ok(extra == 0, "sweep_interval: 0: no SMP sent in %.0f s of an idle fabric (%d)" % (IDLE_WINDOW_S, extra))

    # ---- a valid edit is picked up
    write(cfg, "routing_engine: updn\nsweep_interval: 1\n")
    swept = hup()
    snap, _ = du.poll_fabric(sim, lambda s: engine_of(s)[0] == "updn", POLL_S)
    eng, why = engine_of(snap)
    tap.ok(swept and eng == "updn", "valid edit + SIGHUP: the fabric is routed with updn (%s)" % why,
           "\n".join(l for l in du.since(log, 0).splitlines() if "STS-0001" not in l)[-1500:])
    extra = light_sweeps(True)
    tap.ok(extra > 0, "valid edit + SIGHUP: sweep_interval: 1 takes effect (light sweeps: %d SMPs sent with "
           "nothing happening)" % extra, "the light-sweep timer does not follow the reloaded sweep_interval")
    before = sim.collect()

    # ---- the same file broken: kept
    write(cfg, "sweep_interval: 0\nrouting_engine: minhop\n  lmc: 0\n")
    off = du.size(log)
    swept = hup()
    t = du.since(log, off)
    # the message is the feature here: the administrator learns where the file is wrong
    tap.ok(re.search(r"LOOP-0006", t) and re.search(r"%s:3:\d+" % re.escape(cfg), t),
           "broken edit + SIGHUP: the error is logged with %s:3:COLUMN (LOOP-0006)" % os.path.basename(cfg),
           "\n".join(l for l in t.splitlines() if re.search(r"LOOP-00|CFG-", l)))
    tap.ok(sm.alive(), "broken edit + SIGHUP: the daemon keeps running", sm.output()[-500:])
    after = sim.collect()
    eng, why = engine_of(after)
    tap.ok(swept and eng == "updn" and h.check_unchanged(before, after)[0],
           "broken edit + SIGHUP: the sweep that follows keeps updn's tables (running configuration kept: %s)" % why,
           h.check_unchanged(before, after)[1] + "\n" + h.tail(log, 10))
    extra = light_sweeps(True)
    tap.ok(extra > 0, "broken edit + SIGHUP: sweep_interval stays 1 (light sweeps: %d SMPs)" % extra)

    # a trap-driven sweep after the failed reload: still updn, fabric correct
    c0 = sm.counts()
    sim.console('Unlink "s1"[6]')
    c, trapped = sm.wait_counts(lambda c: (c - c0).count(h.TRAPREPRESS) >= 1 and (c - c0).sets(h.LFT) >= 1,
                                POLL_S)
    snap, _ = du.poll_fabric(sim, lambda s: engine_of(s)[0] == "updn" and h.check_switch_routes(s)[0], POLL_S)
    eng, why = engine_of(snap)
    tap.ok(trapped, "broken file on disk: the link's trap is answered and LFT blocks rewritten (SMP counter: "
           "%s)" % (c - c0).summary(), h.tail(log, 10))
    tap.ok(eng == "updn", "broken file on disk: the trap's re-route is still updn's (%s)" % why, h.tail(log, 10))
    tap.check("broken file on disk: every pair delivered after the link went down", h.check_routes(snap))
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0, "the daemon exits 0 on SIGTERM (status %s)" % rc, sm.output()[-500:])
tap.done()
