#!/usr/bin/env python3
"""25-default-partition.t - the default partition as OpenSM 3.3.23 makes it, judged by
`smpquery pkeys` and compared with OpenSM on the same fabric. Without a partitions file every
end port is a FULL member (0xffff): hosts can talk to each other. With a file that does not
define the default partition, the SM's port is a full member and every other end port a
limited one (0x7fff), plus the file's partitions. On one ibsim (tiny.net, the SM on h1):
OpenSM --once with such a file, then with no file; then ibsm --once the same two ways. Each
run changes the tables the run before left (limited <-> full), so each verdict is on what that
SM wrote. Read: port 1 of every host, the switch port facing it, and port 0 of each switch;
ibsm's tables must equal OpenSM's, entry by entry."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SM_HOST = "h1"
HOSTS = ("h1", "h2", "h3", "h4")
POLICY = "# no Default partition here\nStorage=0x0010 : ALL_CAS=full ;\n"
PKEY_LINE = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{1,4})+)\s*$")

tap = h.start(plan=11, timeout=600, need=("smpquery", "opensm"))
net = h.need_fabric(tap, "tiny.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the comparison is between ibsm and OpenSM")


def parse_pkeys(text):
    """smpquery pkeys output -> {index: key} of the non-zero entries, or None."""
    tab, seen = {}, False
    for line in text.splitlines():
        m = PKEY_LINE.match(line)
        if m:
            seen = True
            for j, w in enumerate(m.group(2).split()):
                if int(w, 16):
                    tab[int(m.group(1)) + j] = int(w, 16)
    return tab if seen else None


def fmt(tab):
    if tab is None:
        return "(unreadable)"
    return "{" + ", ".join("%d:0x%04x" % (i, k) for i, k in sorted(tab.items())) + "}"


def targets(sim):
    """(label, lid, port or None) of every host's port 1, the switch port facing it, and
    every switch port 0."""
    snap = sim.collect()
    out = []
    for ca in HOSTS:
        p = sim.node(snap, ca).ports[1]
        sw = snap.nodes[p.peer[0]]
        out.append((ca, p.lid, None))
        out.append(("%s[%d]" % (sw.desc, p.peer[1]), sw.lid, p.peer[1]))
    for sw in snap.switches():
        out.append(("%s[0]" % sw.desc, sw.lid, 0))
    return out


def read_tables(sim):
    tabs = {}
    for label, lid, port in targets(sim):
        r = sim.run(["smpquery", "pkeys", str(lid)] + ([str(port)] if port is not None else []),
                    timeout=30)
        tabs[label] = parse_pkeys(r.out) if r.rc == 0 else None
    return tabs


def hosts_hold(tabs, want):
    """(ok, detail): host tables equal WANT {host: {index: key}}."""
    bad = ["%s: %s, want %s" % (c, fmt(tabs.get(c)), fmt(want[c])) for c in HOSTS
           if tabs.get(c) != want[c]]
    return not bad, "; ".join(bad) if bad else "h1..h4: " + ", ".join(fmt(tabs[c]) for c in HOSTS)


def same(ours, theirs):
    bad = ["%s: ibsm %s, OpenSM %s" % (l, fmt(ours.get(l)), fmt(theirs.get(l)))
           for l in sorted(theirs) if ours.get(l) != theirs.get(l)]
    unread = [l for l, t in theirs.items() if t is None]
    if unread:
        return False, "unreadable: " + ", ".join(unread)
    return not bad, "; ".join(bad) if bad else "%d tables equal" % len(theirs)


with h.Sim(net, host=SM_HOST) as sim:
    conf = sim.path("partitions.conf")
    with open(conf, "w") as f:
        f.write(POLICY)
    nofile = sim.path("no-such-partitions.conf")
    osm = [h.which("opensm"), "-e", "-d", "2", "-s", "0", "--once"]

    # ---- the reference: OpenSM with the file, then without
    r = sim.run(osm + ["-f", sim.path("osm1.log"), "-P", conf], timeout=120)
    osm_file = read_tables(sim)
    r2 = sim.run(osm + ["-f", sim.path("osm2.log"), "-P", nofile], timeout=120)
    osm_none = read_tables(sim)
    tap.ok(r.rc == 0 and r2.rc == 0, "OpenSM --once ran with a file without the default partition "
           "and with no file (readiness of the reference)", r.describe() + r2.describe())
    # what OpenSM does, stated (so that a different OpenSM is noticed, not silently followed)
    tap.check("OpenSM, file without Default: h1 (its port) 0xffff, the other hosts 0x7fff, "
              "and 0x8010", hosts_hold(osm_file, {c: {0: 0xffff if c == SM_HOST else 0x7fff,
                                                     1: 0x8010} for c in HOSTS}))
    tap.check("OpenSM, no file: every host 0xffff only",
              hosts_hold(osm_none, {c: {0: 0xffff} for c in HOSTS}))

    # ---- ibsm the same two ways, on the tables OpenSM left
    log1 = sim.path("ibsm1.log")
    r = sim.run_sm(["--once", "-f", log1, "-P", conf], timeout=120)
    tap.ok(r.rc == 0, "ibsm --once -P (file without the default partition) exits 0",
           r.describe() + h.tail(log1))
    ours_file = read_tables(sim)
    tap.check("ibsm, file without Default: h1 (the SM's port) 0xffff, h2..h4 0x7fff, all 0x8010",
              hosts_hold(ours_file, {c: {0: 0xffff if c == SM_HOST else 0x7fff, 1: 0x8010}
                                     for c in HOSTS}))
    tap.check("ibsm, file without Default: every table as OpenSM's (hosts, switch ports "
              "facing them, switch port 0)", same(ours_file, osm_file))

    log2 = sim.path("ibsm2.log")
    r = sim.run_sm(["--once", "-f", log2], timeout=120)
    tap.ok(r.rc == 0, "ibsm --once without -P exits 0", r.describe() + h.tail(log2))
    tap.ok(r.counts.valid and r.counts.sets(h.PKEYTABLE) > 0,
           "ibsm without -P wrote P_Key tables (the limited keys the run before left)",
           r.counts.summary())
    ours_none = read_tables(sim)
    tap.check("ibsm, no file: every host 0xffff only (full members: hosts can talk)",
              hosts_hold(ours_none, {c: {0: 0xffff} for c in HOSTS}))
    tap.check("ibsm, no file: every table as OpenSM's", same(ours_none, osm_none))
    tap.ok(not re.search(r"AddressSanitizer|runtime error", h.read(log1) + h.read(log2) + r.text),
           "no sanitizer report", r.text[-800:])
tap.done()
