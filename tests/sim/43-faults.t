#!/usr/bin/env python3
"""43-faults.t - faults that must not damage a running fabric.

1. Loss: a daemon on ftree-3l-partial (48 switches, 56 hosts: few spare paths), up without
   loss, then 30% SMP loss at every switch (ibsim's console `Error`) for a minute while SIGHUP
   forces a heavy sweep every 2 s and light sweeps run every 3 s. Live nodes must not be taken
   for gone: at each checkpoint the daemon is frozen (SIGSTOP, so what the fabric holds is what
   the loss left, not what a sweep repaired since) and the loss lifted just long enough for the
   diags: LIDs, port states and LFTs as before the loss, every pair delivered. The SMP counter
   must show the loss was met and that no LFT block or PortInfo was written while it lasted;
   no node may be reported unreachable or dropped; once the loss ends the subnet is up again.
2. Partitions at start: a file with one bad line, on tiny.net. With the copy of the last
   policy that loaded (written to the cache directory by a run with the good file), that copy
   is in force (the hosts keep 0x8010) and the ERROR names FILE:LINE and the copy; without one,
   every table is what OpenSM 3.3.23 writes for the same file (it falls back to its default
   partition, every end port full) and the ERROR says so.
3. An outsider on a daemon whose heavy sweeps come only from changes (-s 2, no SIGHUP): first,
   idle light sweeps write nothing and ask for no heavy sweep; then `ibportstate` disables a
   leaf's uplink (ibsim raises no PortStateChange and no trap for a PortInfo Set), and every
   pair must be delivered again within a few light-sweep intervals, by a heavy sweep that
   completes (ibsim keeps the far end LinkUp: a NodeInfo that fails there toward a port read
   Disabled is not a loss); then it gives a host port
   and a switch other LIDs, which must be set back as before within a few intervals."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

LOSS = 30             # percent, at every switch
LOSS_S = 60           # how long part 1 keeps the loss on
CHECKPOINTS = 3       # the loss lifted this many times (evenly) to read the fabric
HUP_EVERY_S = 2.0
LIGHT_S = 2           # part 3's sweep interval
REPAIR_S = 5 * LIGHT_S + 10   # a few light-sweep intervals and the heavy sweep they ask for

tap = h.start(plan=7 + 2 * CHECKPOINTS + 5 + 7 + 9, timeout=1200, need=("smpquery", "ibportstate"))


def switch_names(net):
    return re.findall(r'^Switch\s+\d+\s+"([^"]+)"', h.read(net), re.M)


def set_loss(sim, names, rate):
    for name in names:
        sim.console('Error "%s" %d' % (name, rate))


# ---- 1. 30% loss on a running daemon
net = h.need_fabric(tap, "ftree-3l-partial.net")
with h.Sim(net) as sim:
    switches = switch_names(net)
    log = sim.path("ibsmd.log")
    sm = sim.start_sm(["-f", log, "-s", "3"], name="ibsmd")
    up = sm.wait_for(log, r"SUBNET UP", 120)
    idle = sm.wait_idle(1.0, 120)
    tap.ok(up and idle is not None, "daemon comes up without loss and goes idle", h.tail(log))
    base, _ = h.fabric_checks(tap, sim, diag_log=log, switches=True)
    off, c0 = du.size(log), sm.counts()
    hups, d = 0, None
    for cp in range(CHECKPOINTS):
        set_loss(sim, switches, LOSS)
        end = time.time() + LOSS_S / CHECKPOINTS  # a schedule: how long the loss stays on
        while time.time() < end and sm.alive():
            sm.popen.send_signal(signal.SIGHUP)
            hups += 1
            time.sleep(HUP_EVERY_S)
        sm.popen.send_signal(signal.SIGSTOP)  # what the loss left, not what a sweep repairs next
        try:
            set_loss(sim, switches, 0)
            snap = sim.collect()
            if cp == CHECKPOINTS - 1:
                d = sm.counts() - c0
                during = du.since(log, off)
                off = du.size(log)
        finally:
            sm.popen.send_signal(signal.SIGCONT)
        tap.check("checkpoint %d (after %d s of %d%% loss): LIDs, port states and LFTs as before"
                  % (cp + 1, (cp + 1) * LOSS_S // CHECKPOINTS, LOSS), h.check_unchanged(base, snap))
        tap.check("checkpoint %d: every pair delivered" % (cp + 1), h.check_routes(snap))
    lost = d.requests() - d.responses()
    tap.ok(d.valid and lost > 0 and hups >= 10,
           "the %d SIGHUP sweeps met the loss: %d of %d SMPs unanswered" % (hups, lost, d.requests()),
           "since the loss began: %s" % d.summary())
    tap.ok(d.sets(h.LFT) == 0 and d.sets(h.PORTINFO) == 0,
           "nothing rewritten while the loss lasted: %d LFT blocks, %d PortInfo Sets" %
           (d.sets(h.LFT), d.sets(h.PORTINFO)), d.describe_sets(base) + "\n" + h.tail(log, 15))
    gone = re.findall(r".*(?:SWP-0008|SWP-0009|CRY-0002).*", during)
    tap.ok(not gone, "no live node reported unreachable or dropped while the loss lasted (%d "
           "heavy sweeps)" % during.count("SWP-0005"), "\n".join(gone[:10]))
    # the loss is over: the subnet is declared up again (the incomplete sweep is retried)
    m = du.wait_text(log, off, r"SWP-0002 SUBNET UP", 60, sm.alive)
    snap = sim.collect()
    tap.ok(m is not None and h.check_unchanged(base, snap)[0] and h.check_routes(snap)[0],
           "after the loss: SUBNET UP, nothing changed, every pair delivered",
           du.since(log, off)[-1500:] + h.check_unchanged(base, snap)[1])
    rc = du.signal_and_wait(sm, signal.SIGTERM, 60)
    tap.ok(rc == 0, "the daemon stops cleanly on SIGTERM (exit %s)" % rc, h.tail(log))

# ---- 2. a partitions file with one bad line, at start
PKEY_LINE = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{1,4})+)\s*$")
GOOD = "Default=0x7fff, ipoib : ALL=full ;\nStorage=0x0010 : ALL_CAS=full ;\n"
BAD = "Default=0x7fff, ipoib : ALL=full ;\nStorage=0x0010 ALL_CAS=full ;\n"   # line 2: no ':'
HOSTS = ("h1", "h2", "h3", "h4")


def pkeys(sim):
    """{host: {index: key}} of every host's port 1, and of the switch port facing it."""
    snap = sim.collect()
    out = {}
    for ca in HOSTS:
        p = sim.node(snap, ca).ports[1]
        sw = snap.nodes[p.peer[0]]
        for label, args in ((ca, [str(p.lid)]), ("%s's switch port" % ca, [str(sw.lid), str(p.peer[1])])):
            r = sim.run(["smpquery", "pkeys"] + args, timeout=30)
            tab = {}
            for line in r.out.splitlines():
                mm = PKEY_LINE.match(line)
                for j, w in enumerate(mm.group(2).split() if mm else []):
                    if int(w, 16):
                        tab[int(mm.group(1)) + j] = int(w, 16)
            out[label] = tab if r.rc == 0 else None
    return out


def hosts_hold(tabs, want):
    bad = ["%s: %s" % (c, tabs.get(c)) for c in HOSTS if tabs.get(c) != want]
    return not bad, "; ".join(bad) if bad else "h1..h4 hold %s" % want


tiny = h.need_fabric(tap, "tiny.net")
with h.Sim(tiny, host="h1") as sim:
    good, bad = sim.path("good-partitions.conf"), sim.path("partitions.conf")
    with open(good, "w") as f:
        f.write(GOOD)
    with open(bad, "w") as f:
        f.write(BAD)
    cache, fresh = sim.path("cache"), sim.path("cache-fresh")
    copy = os.path.join(cache, "partitions.conf.last-good")
    osm = h.which("opensm")
    reference = None
    if osm:
        r = sim.run([osm, "-e", "-d", "2", "-s", "0", "--once", "-f", sim.path("osm.log"), "-P", bad],
                    timeout=120)
        reference = pkeys(sim) if r.rc == 0 else None
    log1 = sim.path("ibsm-good.log")
    r = sim.run_sm(["--once", "-f", log1, "-P", good, "--cache-dir", cache], timeout=120)
    tabs = pkeys(sim)
    tap.ok(r.rc == 0 and hosts_hold(tabs, {0: 0xffff, 1: 0x8010})[0] and os.path.isfile(copy),
           "the good file: taken (hosts hold 0xffff and 0x8010), a copy kept in the cache directory",
           r.describe() + hosts_hold(tabs, {0: 0xffff, 1: 0x8010})[1] + h.tail(log1))
    log2 = sim.path("ibsm-bad.log")
    r = sim.run_sm(["--once", "-f", log2, "-P", bad, "--cache-dir", cache], timeout=120)
    tabs = pkeys(sim)
    tap.ok(r.rc == 0, "the bad file at start, with the copy: ibsm --once exits 0", r.describe() + h.tail(log2))
    tap.check("... the copy is in force: the hosts keep 0xffff and 0x8010 (no outage)",
              hosts_hold(tabs, {0: 0xffff, 1: 0x8010}))
    said = re.search(r"ERR\s+POL-0002 .*%s.*in force.*%s:2:" % (re.escape(copy), re.escape(bad)), h.read(log2))
    tap.ok(said is not None, "... the ERROR names %s:2 and says the copy is in force" %
           os.path.basename(bad), h.tail(log2))
    log3 = sim.path("ibsm-bad-nocopy.log")
    r = sim.run_sm(["--once", "-f", log3, "-P", bad, "--cache-dir", fresh], timeout=120)
    ours = pkeys(sim)
    tap.ok(r.rc == 0 and hosts_hold(ours, {0: 0xffff})[0],
           "the bad file at start, no copy: every host a full member of the default partition only",
           r.describe() + hosts_hold(ours, {0: 0xffff})[1] + h.tail(log3))
    said = re.search(r"ERR\s+POL-0002 .*OpenSM.*full member.*%s:2:" % re.escape(bad), h.read(log3))
    tap.ok(said is not None, "... the ERROR names %s:2 and says the full default partition is in force"
           % os.path.basename(bad), h.tail(log3))
    if reference is None:
        tap.skip("... every table as OpenSM 3.3.23's with the same file", "opensm did not run")
    else:
        diff = ["%s: ibsm %s, OpenSM %s" % (k, ours.get(k), reference[k]) for k in sorted(reference)
                if ours.get(k) != reference[k]]
        tap.ok(not diff and None not in reference.values(),
               "... every table as OpenSM 3.3.23's with the same file (%d tables)" % len(reference),
               "; ".join(diff) or "OpenSM's unreadable: %s" % reference)

# ---- 3. an outsider's PortInfo Sets on a daemon that sweeps heavily only on a change
small = h.need_fabric(tap, "ftree-small.net")
with h.Sim(small, host="h1") as sim:
    log = sim.path("ibsmd.log")
    sm = sim.start_sm(["-f", log, "-s", str(LIGHT_S)], name="ibsmd")
    up = sm.wait_for(log, r"SUBNET UP", 60) and sm.wait_idle(LIGHT_S / 2.0, 60) is not None
    tap.ok(up, "daemon (-s %d) comes up" % LIGHT_S, h.tail(log))
    base = sim.collect()
    off, c0 = du.size(log), sm.counts()
    time.sleep(3 * LIGHT_S + 1)  # an observation window for what must not happen; then the event
    sm.wait_counts(lambda c: (c - c0).gets(h.PORTINFO) > 0, 60)
    d = sm.counts() - c0
    quiet = du.since(log, off)
    tap.ok(d.valid and d.gets(h.PORTINFO) > 0 and d.sets() == 0 and "LSW-0001" not in quiet
           and "SWP-0005" not in quiet,
           "idle: light sweeps read ports (%d PortInfo Gets), write nothing, ask for no heavy sweep"
           % d.gets(h.PORTINFO), d.summary() + "\n" + quiet[-1500:])

    # a leaf's uplink disabled by another program: routes through it are black holes until seen
    leaf2 = sim.node(base, "leaf2")
    off = du.size(log)
    t0 = time.time()
    r = sim.run(["ibportstate", str(leaf2.lid), "6", "disable"], host="h5")
    after = sim.run(["smpquery", "portinfo", str(leaf2.lid), "6"], host="h5")
    tap.ok(r.rc == 0 and re.search(r"PhysLinkState:\.*Disabled", after.out) is not None,
           "ibportstate disabled leaf2 port 6 (its uplink to spine2)", r.describe() + after.describe())
    ok, detail, snap = False, "", None
    while time.time() < t0 + h.patience(REPAIR_S) and not ok:
        time.sleep(1.0)
        snap = sim.collect()
        ok, detail = h.check_routes(snap)
    tap.ok(ok, "every pair delivered again %.1f s after the disable (light sweeps every %d s, no "
           "SIGHUP)" % (time.time() - t0, LIGHT_S), detail + "\n" + du.since(log, off)[-2000:])
    tap.ok(re.search(r"LSW-0002 port 6 of switch .*\(leaf2\).*Disabled", du.since(log, off)) is not None,
           "the light sweep said what it saw (LSW-0002: leaf2 port 6 Disabled)", du.since(log, off)[-2000:])
    # ibsim leaves spine2's end LinkUp: NodeInfo through it fails, and must not keep every sweep
    # incomplete (the far end was read Disabled; later sweeps know it as a dead end)
    text = du.since(log, off)
    tap.ok("SWP-0002 SUBNET UP" in text and "SWP-0004" not in text,
           "the heavy sweep it asked for completes (SUBNET UP, no sweep incomplete)", text[-2000:])

    # LIDs changed by another program (DR, from h1: leaf1 port 5 -> spine1 port 3 -> leaf3 port 1 -> h9)
    h9, leaf3 = sim.node(base, "h9").ports[1].lid, sim.node(base, "leaf3").lid
    off = du.size(log)
    t0 = time.time()
    r1 = sim.run(["ibportstate", "-D", "0,1,5,3,1", "1", "lid", "0x77"])
    r2 = sim.run(["ibportstate", "-D", "0,1,5,3", "0", "lid", "0x78"])
    moved = sim.run(["smpquery", "-D", "portinfo", "0,1,5,3", "0"])
    tap.ok(re.search(r"^Lid:\.*120$", moved.out, re.M) is not None,
           "ibportstate gave h9 LID 0x77 and leaf3 LID 0x78", r1.describe() + r2.describe() + moved.out)
    lids = None
    while time.time() < t0 + h.patience(REPAIR_S):
        time.sleep(1.0)
        snap = sim.collect()
        lids = (sim.node(snap, "h9").ports[1].lid, sim.node(snap, "leaf3").lid)
        if lids == (h9, leaf3) and h.check_routes(snap)[0]:
            break
    tap.ok(lids == (h9, leaf3) and h.check_routes(snap)[0],
           "both LIDs set back (h9 %s, leaf3 %s) and every pair delivered %.1f s later"
           % (lids and lids[0], lids and lids[1], time.time() - t0),
           "want %s\n%s" % ((h9, leaf3), du.since(log, off)[-2000:]))
    rc = du.signal_and_wait(sm, signal.SIGTERM, 60)
    tap.ok(rc == 0, "the daemon stops cleanly on SIGTERM (exit %s)" % rc, h.tail(log))
tap.done()
