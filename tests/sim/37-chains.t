#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""37-chains.t - routing chains on ibsim, judged by the tables read back. chain-mixed.net is a
2-level fat tree and an irregular part joined by one cable. Port groups pick the parts by
node name, two topologies name them, and the chain runs minhop over everything, then ftree on
the tree, then updn on the rest (with its own configuration file giving its root). Verdicts:
every CA port reaches every LID and every switch every CA LID (infiniband-diags), the
CA-to-CA channel dependency graph on one VL is acyclic, the tree's hosts see worst shift load 1
(what ftree alone gives), and each step's own dump files exist and list exactly what the
tables read back hold for that step's part. Then: ftree on the irregular part declines, the
log names the rule, and its fallback-to step routes the part; lmc 1 with a second step on path
bit 1 (updn): both LIDs of every port are delivered, the first LIDs by minhop's entries and
the second ones by updn's; a bad policy refuses to start with FILE:LINE:COL; and a test
orchestrator from tests/plugins, named with -R, replaces the default one.
The routes between the parts (minhop's, the whole-fabric step's) are the core's: dealt out over
the tree's spines on chain-mixed.net, and over all three cables of chain-joined.net, each way
within one LID's routes of each other (with rch_balance_joins FALSE one cable carries more than
twice each other's); the final tables' credit-loop check agrees with the graph read back (free
on chain-mixed.net, an ERROR naming a cycle on chain-joined.net); a fallback-to step that never
ran is named."""
import collections
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

NO_PORT = 0xFF
ISW1 = 0x80008   # the irregular part's switch cabled to the tree: updn's root

PGRP = """# the tree by name, the rest by subtraction
port-group
name: tree_switches
node-name: ^t(leaf|spine)
end-port-group
port-group
name: tree_hosts
node-name: ^th[0-9]
end-port-group
port-group
name: rest_switches
subtract-rule: ALL_SWITCHES, tree_switches
end-port-group
port-group
name: rest_hosts
subtract-rule: ALL_CAS, tree_hosts
end-port-group
"""

TOPO = """topology
id: 1
sw-grp: tree_switches
hca-grp: tree_hosts
end-topology
topology
id: 2
sw-grp: rest_switches
hca-grp: rest_hosts
end-topology
"""

CHAIN = """unicast-step
id: 1
engine: minhop
use: the whole fabric first
end-unicast-step
unicast-step
id: 2
engine: ftree
topology: 1
end-unicast-step
unicast-step
id: 3
engine: updn
topology: 2
config: {updn_conf}
end-unicast-step
"""

FALLBACK = """unicast-step
id: 1
engine: minhop
end-unicast-step
unicast-step
id: 2
engine: ftree
use: not a tree, so step 4 replaces it
topology: 2
end-unicast-step
unicast-step
id: 4
engine: updn
fallback-to: 2
end-unicast-step
"""

LMC = """unicast-step
id: 1
engine: minhop
end-unicast-step
unicast-step
id: 2
engine: updn
path-bit: 1
end-unicast-step
"""

STEPS = [(1, "minhop"), (2, "ftree"), (3, "updn")]
FILES = ["opensm-lfts.%s.dump", "opensm-lid-matrix.%s.dump", "opensm.fdbs.%s", "opensm-subnet.%s.lst"]


def write(sim, name, text):
    path = sim.path(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def policy_args(sim, chain_text, with_topo=True):
    args = ["--pgrp_policy_file", write(sim, "pgrp.conf", PGRP),
            "--rch_policy_file", write(sim, "chain.conf", chain_text)]
    if with_topo:
        args += ["--topo_policy_file", write(sim, "topo.conf", TOPO)]
    return args


def read_lfts_dump(path):
    """{(switch guid, LID): port} of an opensm-lfts dump."""
    out, sw = {}, None
    for line in h.read(path).splitlines():
        m = re.match(r"Unicast lids \[0-\d+\] of switch Lid \d+ guid 0x([0-9a-f]+)", line)
        if m:
            sw = int(m.group(1), 16)
            continue
        m = re.match(r"0x([0-9a-f]{4}) (\d{3}) #", line)
        if m and sw is not None:
            out[(sw, int(m.group(1), 16))] = int(m.group(2))
    return out


def table(snap, sw, lid):
    lft = snap.lfts.get(sw, b"")
    return lft[lid] if lid < len(lft) else NO_PORT


def mismatches(snap, entries, keep=lambda k: True):
    bad = [(sw, lid, port, table(snap, sw, lid)) for (sw, lid), port in sorted(entries.items())
           if keep((sw, lid)) and table(snap, sw, lid) != port]
    return bad, "%d of %d entries differ from the tables read back; e.g. %s" % (
        len(bad), len(entries), ", ".join("switch 0x%x LID %d: dump %d, table %d" % b for b in bad[:4]))


def tree_slots(sim, snap):
    """The tree's CA ports in leaf-port order (tleaf1..4, ports 1..4)."""
    order = []
    for leaf in range(1, 5):
        node = sim.node(snap, "tleaf%d" % leaf)
        for num in range(1, 5):
            port = node.ports.get(num) if node is not None else None
            peer = snap.nodes.get(port.peer[0]) if port is not None else None
            order.append(peer.ports.get(port.peer[1]) if peer is not None and peer.type != "SW" else None)
    return order


def names_of(sim, snap, prefix):
    return {n.guid for n in snap.switches() if n.desc.startswith(prefix)}


tap = h.start(plan=56, timeout=600, need=("smpquery",))
net = h.need_fabric(tap, "chain-mixed.net")
tplugins = os.path.join(h.build_dir(), "tests", "plugins")

# ---- the chain: minhop, ftree on the tree, updn on the rest ----
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    roots = write(sim, "roots", "0x%x\n" % ISW1)
    updn_conf = write(sim, "updn.conf", "root_guid_file %s\n" % roots)
    r = sim.run_sm(["--once", "-f", log, "-D", "0x43"] +
                   policy_args(sim, CHAIN.format(updn_conf=updn_conf)), timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "mixed: ibsm --once with the chain exits 0", r.describe())
    text = h.read(log)
    tap.ok("routed by chain" in text and "3 steps routed, 0 failed" in text,
           "mixed: the log says the chain's three steps routed", h.tail(log, 12))
    snap, rep = h.fabric_checks(tap, sim, diag_log=log, switches=True)
    cyc = h.ca_cdg_cycle(snap)
    tap.ok(cyc is None, "mixed: CA-to-CA channel dependency graph on one VL acyclic", str(cyc))
    shift = h.shift_loads(snap, tree_slots(sim, snap))
    tap.ok(shift.worst == 1 and not shift.undelivered and shift.n == 16,
           "mixed: the tree's 16 hosts see worst shift load 1, as ftree alone gives", shift.summary())
    # the updn step read its own configuration file: its root is isw1
    tap.ok("updn: roots from the root GUID file: 1: 0x%016x" % ISW1 in text,
           "mixed: the updn step's own configuration file (root_guid_file) was used", h.tail(log, 12))
    missing = [f % ("%d.%s" % s) for s in STEPS for f in FILES
               if not os.path.isfile(os.path.join(sim.osmdir, f % ("%d.%s" % s)))]
    tap.ok(not missing, "mixed: every step wrote its four dump files", "missing: %s" % missing)
    dumps = {s: read_lfts_dump(os.path.join(sim.osmdir, "opensm-lfts.%d.%s.dump" % s)) for s in STEPS}
    tree_sw, rest_sw = names_of(sim, snap, "t"), names_of(sim, snap, "isw")
    ftree_keys = set(dumps[(2, "ftree")])
    updn_keys = set(dumps[(3, "updn")])
    tap.ok({sw for sw, _ in ftree_keys} == tree_sw and {sw for sw, _ in updn_keys} == rest_sw,
           "mixed: ftree's dump lists the tree's 8 switches, updn's the rest's 6",
           "ftree: %s; updn: %s" % (sorted({sw for sw, _ in ftree_keys}), sorted({sw for sw, _ in updn_keys})))
    bad, why = mismatches(snap, dumps[(2, "ftree")])
    tap.ok(not bad and len(ftree_keys) == 8 * 24, "mixed: ftree's 192 dump entries (8 switches x 24 "
           "tree LIDs) are what the tree's tables hold", "%d entries; %s" % (len(ftree_keys), why))
    bad, why = mismatches(snap, dumps[(3, "updn")])
    tap.ok(not bad and len(updn_keys) == 6 * 16, "mixed: updn's 96 dump entries (6 switches x 16 "
           "LIDs of the rest) are what the rest's tables hold", "%d entries; %s" % (len(updn_keys), why))
    # the routes between the parts (minhop's, the whole-fabric step's) are the core's: into the
    # rest over its one joining cable, and across the tree dealt out over the four spines
    n_minhop = len(dumps[(1, "minhop")])
    rest_lids = sorted({lid for _, lid in updn_keys})
    spread = {}
    for leaf in ("tleaf1", "tleaf2", "tleaf3"):
        g = sim.node(snap, leaf).guid
        spread[leaf] = sorted(collections.Counter(table(snap, g, lid) for lid in rest_lids).items())
    even = [(p, 4) for p in (5, 6, 7, 8)]
    tap.ok(n_minhop == 14 * 40 and len(rest_lids) == 16 and all(v == even for v in spread.values()),
           "mixed: routes from the tree's leaves to the rest's 16 LIDs: 4 over each spine (the "
           "core spreads the routes between parts)", "minhop dump %d entries; %s" % (n_minhop, spread))
    tap.ok(re.search(r"RCH-0007 step 3's part: its 16 LIDs reached from outside over its 1 joining links", text)
           and "RCH-0009 routing chain chain: final tables free of credit loops" in text,
           "mixed: the log says how the rest is reached (one joining link) and that the final tables "
           "are free of credit loops (as the CA-to-CA graph read back says)", h.tail(log, 12))

# ---- chain-joined.net: three cables join the parts; the routes between them use all three ----
JOINED = CHAIN.replace("config: {updn_conf}\n", "") + """unicast-step
id: 5
engine: minhop
use: never needed, step 3 routes its part
fallback-to: 3
end-unicast-step
"""


def join_loads(sim, snap):
    """{(from part, switch name, port): CA-to-CA routes} over the links joining the parts."""
    tree = {n.guid for n in snap.switches() if n.desc.startswith("t")}
    owners = snap.lid_owners()
    ca_lids = [l for l, o in owners.items() if len(o) == 1 and o[0][0] == "CA"]
    load = collections.Counter()
    for src in snap.ca_ports():
        for lid in ca_lids:
            if owners[lid][0][1].guid == src.node.guid:
                continue
            links, _ = h.route_links(snap, src, lid)
            for g, port in links:
                peer = snap.nodes.get(snap.nodes[g].ports[port].peer[0])
                if peer is not None and peer.type == "SW" and (g in tree) != (peer.guid in tree):
                    load[("tree" if g in tree else "rest", snap.nodes[g].desc, port)] += 1
    return load


def spread_of(load, side):
    v = [n for k, n in load.items() if k[0] == side]
    return (max(v) - min(v), len(v)) if v else (None, 0)


joined = h.need_fabric(tap, "chain-joined.net")
with h.Sim(joined) as sim:
    log = sim.path("ibsm.log")
    unb = write(sim, "unbalanced.conf", "rch_balance_joins FALSE\n")
    r = sim.run_sm(["--once", "-f", sim.path("unb.log"), "-F", unb] + policy_args(sim, JOINED), timeout=120)
    before = join_loads(sim, sim.collect())
    r = sim.run_sm(["--once", "-f", log] + policy_args(sim, JOINED), timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "joined: ibsm --once with the chain exits 0", r.describe())
    text = h.read(log)
    tap.ok("RCH-0007 step 2's part: its 24 LIDs reached from outside over its 3 joining links, 8 to 8 LIDs each" in text
           and "RCH-0007 step 3's part: its 16 LIDs reached from outside over its 3 joining links, 5 to 6 LIDs each" in text,
           "joined: the log says each part's LIDs were dealt out over its 3 joining links", h.tail(log, 12))
    # the harness's checks, but a route dealt to a farther joining link may be longer than the
    # fabric's diameter (the price of using every link): every pair delivered is the rule
    snap = sim.collect()
    rep = h.walk_routes(snap)
    for what, res in [("diags read the fabric", h.check_collected(snap)),
                      ("nodes and links as in chain-joined.net", h.check_inventory(snap, sim.netfile)),
                      ("every linked port ACTIVE", h.check_ports_active(snap)),
                      ("LIDs assigned, unique, aligned", h.check_lids(snap)),
                      ("every source CA port reaches every destination LID", (rep.ok(), rep.summary()))]:
        tap.check("joined: " + what, res)
    after = join_loads(sim, snap)
    # tree to rest: 16 sources x 10 CA LIDs over 3 links (4, 3, 3 LIDs): 64, 48, 48; rest to
    # tree: 10 sources x 16 CA LIDs (6, 5, 5): 60, 50, 50. Unbalanced (the shortest ways):
    # tleaf1's one cable carries more than twice what each of tleaf4's two does.
    tap.ok(spread_of(after, "tree") == (16, 3) and spread_of(after, "rest") == (10, 3),
           "joined: the CA-to-CA routes read back use all 3 joining links each way, within one "
           "LID's routes of each other", "balanced %s; unbalanced (rch_balance_joins FALSE) %s" % (
               sorted(after.items()), sorted(before.items())))
    tap.ok(spread_of(before, "tree")[0] > 2 * 16,
           "joined: with rch_balance_joins FALSE the shortest ways load one joining link most "
           "(what the balance removes)", str(sorted(before.items())))
    tap.ok("step 5 (minhop): the fallback-to of step 3, not run (step 3 routed its part)" in text,
           "joined: the fallback that never ran is named in the log", h.tail(log, 12))
    cyc = h.ca_cdg_cycle(snap)
    m = re.search(r"ERR  RCH-0006 routing chain chain: credit loops in the final tables: (\d+) of \d+ channels "
                  r".* e\.g\. (sw 0x[0-9a-f]+ port \d+ vl 0( -> sw 0x[0-9a-f]+ port \d+ vl 0)+)", text)
    tap.ok(m is not None and int(m.group(1)) > 0 and cyc is not None,
           "joined: routes entering the tree by one cable and leaving it by another close credit "
           "loops: the log says so (ERROR, count, one cycle by switch and port), as the graph read "
           "back does", "log: %s; read back: %s" % (m.group(0) if m else h.tail(log, 6), cyc))

# ---- a step that fails falls back to its fallback-to step ----
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "-D", "0x43"] + policy_args(sim, FALLBACK), timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "fallback: ibsm --once exits 0", r.describe())
    text = h.read(log)
    tap.ok(re.search(r"step 2 \(ftree, topology 2\) failed: .*fat-tree rule", text) is not None,
           "fallback: the log says step 2 (ftree) failed, naming the fat-tree rule", h.tail(log, 12))
    tap.ok("step 2 (ftree) falls back to step 4 (updn, topology 2)" in text and
           "fallback step 4 (updn) routed step 2's part" in text,
           "fallback: step 4 (updn) routed step 2's part", h.tail(log, 12))
    both = all(os.path.isfile(os.path.join(sim.osmdir, "opensm-lfts.%s.dump" % t)) for t in ("2.ftree", "4.updn"))
    tap.ok(both, "fallback: the failed step and its fallback both dumped", str(os.listdir(sim.osmdir)))
    snap, rep = h.fabric_checks(tap, sim, diag_log=log)
    dump = read_lfts_dump(os.path.join(sim.osmdir, "opensm-lfts.4.updn.dump"))
    bad, why = mismatches(snap, dump)
    tap.ok(dump and not bad and {sw for sw, _ in dump} == names_of(sim, snap, "isw"),
           "fallback: the fallback's entries cover the rest's switches and are in the tables", why)

# ---- lmc 1: path bit 0 by minhop, path bit 1 by updn ----
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log, "-D", "0x43", "-l", "1", "--rch_policy_file",
                    write(sim, "chain.conf", LMC)], timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "lmc 1: ibsm --once exits 0", r.describe())
    snap, rep = h.fabric_checks(tap, sim, lmc=1, diag_log=log)
    base = {}
    for p in snap.ca_ports():
        base[p.lid] = p
    for n in snap.switches():
        base[n.lid] = n
    d1 = read_lfts_dump(os.path.join(sim.osmdir, "opensm-lfts.1.minhop.dump"))
    d2 = read_lfts_dump(os.path.join(sim.osmdir, "opensm-lfts.2.updn.dump"))
    second = {(n.guid, p.lid + 1) for n in snap.switches() for p in snap.ca_ports()}
    tap.ok(set(d2) == second, "lmc 1: updn's step lists exactly the second LID (offset 1) of every "
           "CA port, on every switch", "%d entries, %d expected; extra %s" % (
               len(d2), len(second), sorted(set(d2) - second)[:4]))
    bad2, why2 = mismatches(snap, d2)
    bad1, why1 = mismatches(snap, d1, keep=lambda k: k not in second)
    n_first = sum(1 for k in d1 if k not in second)
    tap.ok(not bad2 and not bad1 and n_first == 14 * (26 + 14),
           "lmc 1: the tables hold minhop's entries for every other LID and updn's for every second",
           "updn: %s; minhop (%d entries): %s" % (why2, n_first, why1))

# ---- a bad policy is refused with its place ----
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    bad = CHAIN.format(updn_conf="/nonexistent").replace("topology: 2\n", "topology: 9\n")
    r = sim.run_sm(["--once", "-f", log] + policy_args(sim, bad), timeout=60, count=False)
    out = r.text + h.read(log)
    tap.ok(r.rc != 0 and not r.crashed() and re.search(r"chain\.conf:\d+:\d+: .*topolog", out),
           "bad policy: an unknown topology refuses to start, naming chain.conf:LINE:COL", out[-600:])
    r = sim.run_sm(["--once", "-f", log, "--rch_policy_file",
                    write(sim, "chain2.conf", CHAIN.format(updn_conf=sim.path("no-such.conf")))] +
                   ["--pgrp_policy_file", sim.path("pgrp.conf"), "--topo_policy_file", sim.path("topo.conf")],
                   timeout=60, count=False)
    out = r.text + h.read(log)
    tap.ok(r.rc != 0 and not r.crashed() and "no-such.conf" in out,
           "bad policy: a step's missing configuration file refuses to start, naming it", out[-600:])

# ---- SIGHUP: a bad policy keeps the running chain; a good one replaces it ----
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    roots = write(sim, "roots", "0x%x\n" % ISW1)
    updn_conf = write(sim, "updn.conf", "root_guid_file %s\n" % roots)
    sm = sim.start_sm(["-f", log, "-s", "0"] + policy_args(sim, CHAIN.format(updn_conf=updn_conf)),
                      name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 60) and sm.wait_idle(1.0, 60) is not None
    before = sim.collect()
    write(sim, "chain.conf", CHAIN.format(updn_conf=updn_conf).replace("topology: 2\n", "topology: 9\n"))
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"LOOP-0006 [^\n]*chain\.conf:\d+:\d+: [^\n]*topolog", 60, alive=sm.alive)
    tap.ok(up and m is not None, "reload: a bad chain policy on SIGHUP is refused, naming chain.conf:LINE:COL",
           du.since(log, off)[-800:])
    du.wait_settled(sm, log, off, 60)  # the SIGHUP's heavy sweep is over
    after = sim.collect()
    ok, detail = h.check_unchanged(before, after)
    tap.ok(sm.alive() and ok, "reload: the daemon runs on with the previous chain's tables", detail)
    # a good policy: two steps (no updn on the rest) takes over with the sweep SIGHUP starts
    write(sim, "chain.conf", CHAIN.format(updn_conf=updn_conf).split("unicast-step\nid: 3")[0])
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"routed by chain [^\n]*\(2 steps routed, 0 failed", 60, alive=sm.alive)
    tap.ok(m is not None, "reload: a good policy on SIGHUP takes over (the next routing runs its 2 steps)",
           du.since(log, off)[-800:])
    du.wait_settled(sm, log, off, 60)  # the new chain's tables are written
    snap = sim.collect()
    tap.check("reload: after the new chain every CA port reaches every LID", h.check_routes(snap))
    rc = sm.stop()
    tap.ok(rc == 0, "reload: SIGTERM stops the daemon with exit 0 (%s)" % rc, h.tail(log, 6))

# ---- a third-party orchestrator replaces the default one ----
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", sim.path("updn.log"), "-R", "updn"], timeout=120)
    ref = sim.collect()
    r = sim.run_sm(["--once", "-f", log, "-D", "0x43", "--plugin-dir", tplugins, "-R", "orch_test"] +
                   policy_args(sim, CHAIN.format(updn_conf="")), timeout=120)
    text = h.read(log)
    tap.ok(r.rc == 0 and not r.crashed() and "orch_test: step 7 (updn) over the whole fabric" in text
           and "routed by orch_test" in text,
           "orchestrator: -R orch_test (tests/plugins) loads and routes", r.describe() + h.tail(log, 8))
    snap = sim.collect()
    diff = [g for g in ref.lfts if ref.lfts[g] != snap.lfts.get(g)]
    tap.ok(ref.lfts and not diff, "orchestrator: its tables are updn's over the whole fabric, not the "
           "default chain's", "%d switches differ" % len(diff))
    tap.ok(os.path.isfile(os.path.join(sim.osmdir, "opensm-lfts.7.updn.dump")) and
           not os.path.isfile(os.path.join(sim.osmdir, "opensm-lfts.2.ftree.dump")),
           "orchestrator: its step 7 dumped, the policy's steps did not run", str(os.listdir(sim.osmdir)))

tap.done()
