#!/usr/bin/env python3
"""18-partitions.t - partitions.conf (-P) on ibsim, end to end: ftree-small.
A policy with the default partition and three more (full, limited and both members, a keyword
group ALL_CAS, an indx0 partition, defmember=full); ibsm runs as a daemon until SUBNET UP, then
`smpquery pkeys` reads the P_Key table of every CA port, of every switch port facing a CA
(same table as that CA port) and of every switch port 0, and each must equal, entry by entry,
the table computed here from the policy and the index rules (indx0 key at index 0, else the
default key; a key the port holds keeps its index; new keys at the lowest free index, in
policy order; `both` = key|0x8000 then key). Then the file is edited (a partition added, a
membership changed, a member removed, a GUID not in the fabric) and SIGHUP: the tables follow
(kept indices leave holes, a new key fills the lowest hole) and the unknown GUID is logged
with file:line (that message is the feature checked in the log). Then a broken edit (a
definition without ':') and SIGHUP: the error is logged with file:line, the daemon keeps
running, the sweep that follows sends not one Set SMP (the SMP counter shim) and no table,
LID, port state or LFT changes."""
import os
import re
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

DEFAULT, FULL = 0x7fff, 0x8000
SM_HOST = "h1"
IBSIM_INITIAL = {0: 0xffff}     # what ibsim's ports hold before any SM wrote them


def pguid(n):
    """Port GUID of host hN in ftree-small.net (node GUID 0x10000 + 2*(N-1), port GUID + 1)."""
    return 0x10000 + 2 * (n - 1) + 1


# A policy is a list of partitions: (name, pkey, indx0, defmember, [(selector, membership)]).
# selector: a port GUID, "ALL", "ALL_CAS" or "SELF"; membership "full", "limited", "both" or
# None (the partition's defmember). It is rendered to partitions.conf text (one definition a
# line, so that line numbers are known) and expanded here independently of ibsm.
P_DEFAULT = ("Default", DEFAULT, False, None, [("ALL", None), ("SELF", "full")])
P_COMPUTE = ("Compute", 0x0020, True, "full", [(pguid(2), None), (pguid(3), "limited")])
P_STORAGE = ("Storage", 0x0030, False, None, [(pguid(1), "full"), (pguid(4), None),
                                               (pguid(6), "both"), (pguid(10), "both")])
P_EVERYONE = ("Everyone", 0x0040, False, None, [("ALL_CAS", None)])
# the edit: h4 limited -> full, h10 leaves Storage, Extra is new (h10 gets it in a hole)
P_STORAGE2 = ("Storage", 0x0030, False, None, [(pguid(1), "full"), (pguid(4), "full"),
                                                (pguid(6), "both")])
P_EXTRA = ("Extra", 0x0050, False, None, [(pguid(5), "full"), (pguid(16), None), (pguid(10), None)])
GHOST_GUID = 0x99999            # in no fabric: that entry is skipped and logged, the rest applies
P_GHOST = ("Ghost", 0x0060, False, None, [(GHOST_GUID, "full")])

POLICY1 = [P_DEFAULT, P_COMPUTE, P_STORAGE, P_EVERYONE]
POLICY2 = [P_DEFAULT, P_COMPUTE, P_STORAGE2, P_EVERYONE, P_EXTRA, P_GHOST]


def render(policy, broken_at=None):
    """partitions.conf text; {name: line number}. BROKEN_AT: a partition name whose
    definition loses its ':' (a structural error on that line)."""
    lines = ["# 18-partitions.t policy (generated)"]
    where = {}
    for name, pkey, indx0, defm, members in policy:
        head = "%s=0x%04x" % (name, pkey)
        if indx0:
            head += ", indx0"
        if defm:
            head += ", defmember=%s" % defm
        mem = []
        for sel, m in members:
            s = sel if isinstance(sel, str) else "0x%x" % sel
            mem.append(s + ("=%s" % m if m else ""))
        sep = " " if name == broken_at else " : "
        lines.append(head + sep + ", ".join(mem) + " ;")
        where[name] = len(lines)
    return "\n".join(lines) + "\n", where


def expand(policy, ca_guids, sm_guid, n_switches_port0):
    """{end port key: ([keys in policy order], indx0 key or 0)}; end port keys are CA port
    GUIDs and ('sw0', switch guid) for switch port 0 (listed in n_switches_port0)."""
    ends = list(ca_guids) + [("sw0", g) for g in n_switches_port0]
    want = {e: [] for e in ends}
    indx0 = {e: 0 for e in ends}
    have_default = any(p[1] == DEFAULT for p in policy)
    parts = list(policy) if have_default else \
        [("Default", DEFAULT, False, None, [("ALL", None), ("SELF", "full")])] + list(policy)
    for name, pkey, ix0, defm, members in parts:
        memb = {}
        for sel, m in members:
            m = m or defm or "limited"
            if sel == "ALL":
                targets = ends
            elif sel == "ALL_CAS":
                targets = list(ca_guids)
            elif sel == "SELF":
                targets = [sm_guid]
            else:
                targets = [sel] if sel in want else []
            for t in targets:
                old = memb.get(t)
                # a port listed twice: the stronger membership (partition-config.txt: "ALL, SELF=full" = SM full)
                rank = {"limited": 1, "full": 2, "both": 3}
                memb[t] = m if old is None or rank[m] > rank[old] else old
        for t, m in memb.items():
            keys = {"full": [pkey | FULL], "limited": [pkey], "both": [pkey | FULL, pkey]}[m]
            want[t].extend(keys)
            if ix0:
                indx0[t] = keys[0]
    return {e: (want[e], indx0[e]) for e in ends}


def layout(cur, want, indx0):
    """The index rules: {index: key} (non-zero entries) for a port holding CUR ({index: key})
    that must hold WANT (policy order) with indx0 key INDX0 (0: none)."""
    out = {}
    rest = list(want)
    first = indx0 or next((k for k in want if k & 0x7fff == DEFAULT), 0)
    if first:
        out[0] = first
        rest.remove(first)
    pending = []
    for k in rest:                                  # keep the index it has (exact key)
        i = next((i for i, v in sorted(cur.items()) if v == k and i not in out), None)
        if i is None:
            pending.append(k)
        else:
            out[i] = k
    later = []
    for k in pending:                               # same key, other membership
        i = next((i for i, v in sorted(cur.items())
                  if v == k ^ FULL and i not in out and v not in want), None)
        if i is None:
            later.append(k)
        else:
            out[i] = k
    for k in later:                                 # lowest free index
        i = 0
        while i in out:
            i += 1
        out[i] = k
    return out


PKEY_LINE = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{1,4})+)\s*$")


def parse_pkeys(text):
    """smpquery pkeys output -> {index: key} of the non-zero entries, or None if no table."""
    tab, seen = {}, False
    for line in text.splitlines():
        m = PKEY_LINE.match(line)
        if not m:
            continue
        seen = True
        for j, w in enumerate(m.group(2).split()):
            v = int(w, 16)
            if v:
                tab[int(m.group(1)) + j] = v
    return tab if seen else None


def fmt(tab):
    if tab is None:
        return "(unreadable)"
    return "{" + ", ".join("%d:0x%04x" % (i, k) for i, k in sorted(tab.items())) + "}"


class Targets:
    """The ports whose tables are read: (label, kind, lid, port, end port key)."""

    def __init__(self, sim, snap):
        self.items = []
        for n in range(1, 17):
            node = sim.node(snap, "h%d" % n)
            p = node.ports.get(1) if node else None
            if p is None or p.guid != pguid(n):
                tap.bail_out("h%d: port 1 GUID %s, expected 0x%x" % (n, p and hex(p.guid), pguid(n)))
            sw = snap.nodes.get(p.peer[0])
            self.items.append(("h%d[1]" % n, "ca", p.lid, 1, p.guid))
            self.items.append(("%s[%d] (faces h%d)" % (sw.desc, p.peer[1], n), "leaf", sw.lid,
                               p.peer[1], p.guid))
        for sw in snap.switches():
            self.items.append(("%s[0]" % sw.desc, "sw0", sw.lid, 0, ("sw0", sw.guid)))
        self.ca_guids = [pguid(n) for n in range(1, 17)]
        self.sw_guids = [sw.guid for sw in snap.switches()]


def read_tables(sim, targets):
    """{label: {index: key} or None}, smpquery pkeys on every target (a few in parallel)."""
    def one(t):
        label, kind, lid, port, _ = t
        argv = ["smpquery", "pkeys", str(lid)] + ([str(port)] if kind != "ca" else [])
        r = sim.run(argv, timeout=30)
        return label, (parse_pkeys(r.out) if r.rc == 0 else None)
    with ThreadPoolExecutor(4) as ex:
        return dict(ex.map(one, targets.items))


def expected_tables(targets, policy, prev):
    """{label: {index: key}}: each end port laid out from PREV ({end key: table}); the leaf
    port gets its CA's table. Returns (by label, by end key)."""
    exp = expand(policy, targets.ca_guids, pguid(int(SM_HOST[1:])), targets.sw_guids)
    by_end = {e: layout(prev.get(e, IBSIM_INITIAL), w, ix0) for e, (w, ix0) in exp.items()}
    return {t[0]: by_end[t[4]] for t in targets.items}, by_end


def compare(kind, got, want, targets):
    labels = [t[0] for t in targets.items if t[1] == kind]
    bad = ["%s: got %s, want %s" % (l, fmt(got.get(l)), fmt(want[l])) for l in labels
           if got.get(l) != want[l]]
    if not labels:
        return False, "no %s ports" % kind
    return (not bad), ("%d tables exact" % len(labels) if not bad else
                       "%d of %d differ: %s" % (len(bad), len(labels), "; ".join(bad[:6]) +
                                                  (" (+%d more)" % (len(bad) - 6) if len(bad) > 6 else "")))


def poll_tables(sim, targets, want, timeout):
    """Read the tables until they equal WANT or TIMEOUT seconds passed; returns the last read."""
    end = h.deadline(timeout)
    while True:
        got = read_tables(sim, targets)
        if all(got.get(l) == want[l] for l in want) or time.time() > end:
            return got
        time.sleep(0.3)


def check_three(tap, what, got, want, targets):
    tap.check("%s: every CA port's P_Key table is exact" % what, compare("ca", got, want, targets))
    tap.check("%s: every switch port facing a CA holds that CA's table" % what,
              compare("leaf", got, want, targets))
    tap.check("%s: every switch port 0 holds the default partition's table" % what,
              compare("sw0", got, want, targets))


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)     # as an editor would: never half a file


POLL_S = 60           # generous bound for each condition; the speed belongs in make bench
tap = h.start(plan=18, timeout=600, need=("smpquery",))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: ibsm's index rules and log lines")

with h.Sim(net) as sim:
    n_nodes = len(sim.netfile.nodes)
    log = sim.path("ibsm.log")
    conf = sim.path("partitions.conf")
    text1, _ = render(POLICY1)
    write(conf, text1)
    sm = sim.start_sm(["-f", log, "-s", "0", "-P", conf], host=SM_HOST, name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)      # readiness only
    idle = sm.wait_idle(1.0, POLL_S)
    tap.ok(up and idle is not None, "daemon (-s 0 -P partitions.conf) comes up and goes idle (its SMP counter "
           "stands still)", h.tail(log) + sm.output()[-500:])
    if not up:
        tap.bail_out("ibsm did not come up")
    snap1 = sim.collect()
    tap.check("every linked port ACTIVE", h.check_ports_active(snap1))
    targets = Targets(sim, snap1)

    # ---- the first policy
    want1, end1 = expected_tables(targets, POLICY1, {})
    got1 = poll_tables(sim, targets, want1, POLL_S)
    unread = [l for l, t in got1.items() if t is None]
    tap.ok(not unread, "smpquery pkeys reads all %d tables" % len(got1),
           "unreadable: %s" % ", ".join(unread[:8]))
    check_three(tap, "policy 1", got1, want1, targets)

    # ---- edit + SIGHUP: the tables follow
    text2, where2 = render(POLICY2)
    write(conf, text2)
    off = du.size(log)
    c0 = sm.counts()
    sm.popen.send_signal(signal.SIGHUP)
    c1, swept = sm.wait_counts(lambda c: (c - c0).gets(h.NODEINFO) >= n_nodes and (c - c0).sets(h.PKEYTABLE) > 0,
                               POLL_S)
    c1 = sm.wait_idle(1.0, POLL_S) or sm.counts()
    tap.ok(swept, "SIGHUP after an edit: a new sweep that writes P_Key tables (SMP counter: %d P_KeyTable "
           "blocks written)" % (c1 - c0).sets(h.PKEYTABLE), (c1 - c0).summary() + "\n" + du.since(log, off)[-1500:])
    want2, end2 = expected_tables(targets, POLICY2, end1)
    got2 = poll_tables(sim, targets, want2, POLL_S)
    check_three(tap, "edited policy", got2, want2, targets)
    text = du.since(log, off)
    # the message is the feature here: the administrator learns which line names no port
    rx = r"partitions\.conf:%d\b" % where2["Ghost"]
    tap.ok(re.search(rx, text) and re.search(r"0x0*99999\b", text, re.I),
           "edited policy: the GUID not in the fabric is logged with file:line (partitions.conf:%d)"
           % where2["Ghost"], text[-1500:])

    # ---- a broken edit + SIGHUP: nothing changes
    before = sim.collect()
    text3, where3 = render([P_DEFAULT, P_COMPUTE, P_STORAGE, P_EVERYONE, P_EXTRA], broken_at="Extra")
    write(conf, text3)
    off = du.size(log)
    c2 = sm.counts()
    sm.popen.send_signal(signal.SIGHUP)
    rx = r"partitions\.conf:%d\b" % where3["Extra"]
    m = du.wait_text(log, off, rx, POLL_S, sm.alive)
    c3, swept = sm.wait_counts(lambda c: (c - c2).gets(h.NODEINFO) >= n_nodes, POLL_S)  # the sweep that follows
    c3 = sm.wait_idle(1.0, POLL_S) or sm.counts()
    text = du.since(log, off)
    # the message is the feature here: the administrator learns where the file is wrong
    tap.ok(m, "broken edit (no ':'): the error names partitions.conf:%d" % where3["Extra"], text[-1500:])
    tap.ok(sm.alive(), "broken edit: ibsm keeps running", sm.output()[-800:])
    tap.ok(swept and (c3 - c2).sets() == 0, "broken edit: the sweep that follows sends not one Set SMP (%d)"
           % (c3 - c2).sets(), (c3 - c2).describe_sets(before, sim.node(before, SM_HOST)))
    got3 = read_tables(sim, targets)
    bad = ["%s: %s -> %s" % (l, fmt(got2.get(l)), fmt(got3.get(l))) for l in want2
           if got3.get(l) != got2.get(l)]
    tap.ok(not bad and got2 == want2,
           "broken edit: every P_Key table as before it (%d tables)" % len(got3),
           "; ".join(bad[:6]) if bad else "the tables before it were not the expected ones")
    after = sim.collect()
    tap.check("broken edit: no LID, port state or LFT changed", h.check_unchanged(before, after))

    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0, "SIGTERM: exit status 0 (got %s)" % rc, h.tail(log, 5))
    tap.ok(not re.search(r"AddressSanitizer|runtime error", sm.output()), "no sanitizer report",
           sm.output()[-800:])
tap.done()
