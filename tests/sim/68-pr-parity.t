#!/usr/bin/env python3
"""68-pr-parity.t - PathRecord answers of ibsm against OpenSM 3.3.23's on the same small fabric
(tiny.net, LMC 2, -Q with a QoS policy that limits the MTU from h2 to h3 to 512 only), the SM on h1,
the questions from h2: saquery (with the RMPP test library) and tests/clients/sa_mad for what
saquery cannot ask (Preference, RawTraffic, a Get). Asked of each SM on a fresh ibsim:
- every path (GetTable naming no end: every LID of every LMC range to every other), -n 2,
  --slid a non-base LID, a NodeRecord by a non-base LID;
- an unknown LID or GID (GetTable: an empty table, saquery exits 0; Get: NO_RECORDS);
- a multicast DGID (the IPoIB broadcast group), a link-local DGID with a non-default prefix,
  a site-local (off-subnet) DGID with no router;
- ServiceID, FlowLabel, TClass and HopLimit in the query (answered 0), Preference and
  RawTraffic set (answered, RawTraffic with P_Key 0), NumbPath 0, a Get naming one end;
- the multicast DGID asked with a source that is no member, another P_Key, SL and P_Key;
  a P_Key named limited (0x7fff) on ports that hold 0xffff (answered as asked);
- MTU > 512 from h3 to h2 (sa_mad: saquery sends no MTU selector): the way back (h2 to h3)
  falls under the policy's 512-byte level, so the paths are not reversible, and with
  Reversible 1 there is none; MTU > 512 from h2 to h3: none.
The two SMs number LIDs differently: every LID is replaced by the port GUID it names and its
offset in the port's LMC range (each SM's own NodeRecords give the map). Records are compared
as sorted lists, with the exit status (saquery) or SA status (sa_mad). What must differ is
left out, and said here (doc/opensm-dropin.md lists it): nothing in these answers; the
MLID of the broadcast group is compared as "an MLID" (each SM picks its own)."""
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from saquery_text import blocks, need_clients  # noqa: E402

SM_HOST, CLIENT = "h1", "h2"
LMC = 2
GETTABLE, GET = 0x12, 0x01
BCAST = "ff12:401b:ffff::ffff:ffff"
LIDISH = re.compile(r"^(\s*)([A-Za-z_ ]*lid[A-Za-z_ ]*?)(:?\.{2,}:?\s*|\s*[:=]\s*)(0x[0-9a-fA-F]+|\d+)\s*$",
                    re.I)
POLICY = """port-groups
    port-group
        name: H2
        port-guid: %(h2)s
    end-port-group
    port-group
        name: H3
        port-guid: %(h3)s
    end-port-group
end-port-groups
qos-levels
    qos-level
        name: DEFAULT
        sl: 0
    end-qos-level
    qos-level
        name: SMALL
        sl: 0
        mtu-limit: 2
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        source: H2
        destination: H3
        qos-level-name: SMALL
    end-qos-match-rule
end-qos-match-rules
"""

tap = h.start(plan=None, timeout=900, need=("opensm", "saquery"))
net = h.need_fabric(tap, "tiny.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the comparison is between ibsm and OpenSM")
[tool] = need_clients(tap, "sa_mad")


def nodes(text):
    """From saquery NR: {description: (base LID, port GUID, node type)}."""
    m = {}
    for b in blocks(text):
        f = {}
        for line in b:
            x = re.match(r"^\s*(\w+)\.+(.*)$", line)
            if x:
                f[x.group(1)] = x.group(2).strip()
        if "lid" in f and "port_guid" in f:
            m[f.get("NodeDescription", "?")] = (int(f["lid"], 0), f["port_guid"], 1 if "Channel" in f.get("node_type", "") or f.get("node_type") in ("1", "0x1") else 2)
    return m


def lid_map(nr):
    """LID -> 'GUID+offset' over every LMC range (CAs LMC 2, switches one LID)."""
    m = {}
    for lid, guid, typ in nr.values():
        for k in range(1 << LMC if typ == 1 else 1):
            m[lid + k] = "%s+%d" % (guid, k)
    return m


def normalize(text, lids):
    out = []
    for b in blocks(text):
        nb = []
        for line in b:
            x = LIDISH.match(line)
            if x and int(x.group(4), 0) in lids:
                line = "%s%s=%s" % (x.group(1), x.group(2).strip(), lids[int(x.group(4), 0)])
            nb.append(line.strip())
        out.append("\n".join(nb))
    return sorted(out)


def by_desc(nr, name):
    for d, v in nr.items():
        if d.split()[0] == name:
            return v
    return None


def gid_bytes(prefix, guid):
    return prefix.to_bytes(8, "big") + int(guid, 16).to_bytes(8, "big")


def pr_rec(sgid=None, dgid=None, extra=None):
    rec = bytearray(64)
    if dgid:
        rec[8:24] = dgid
    if sgid:
        rec[24:40] = sgid
    for off, val in (extra or {}).items():
        rec[off] = val
    return bytes(rec)


def ask(sim, reqs):
    """sa_mad from CLIENT: per request (status, [record hex])."""
    lines = "".join("%d 0x35 %d full %s\n" % (m, mask, rec.hex()) for m, mask, rec in reqs)
    r = h.run([tool, "-v", "-w", "1", "-t", str(int(h.patience(3000)))], env=sim.env(CLIENT, rmpp=True), cwd=sim.rundir,
              stdin_text=lines, timeout=300)
    got = []
    for line in r.out.splitlines():
        x = re.match(r"status (0x[0-9a-f]+) method", line)
        if x:
            got.append((int(x.group(1), 16), []))
        elif line.startswith("timeout"):
            got.append((None, []))
        elif line.startswith("rec ") and got:
            got[-1][1].append(line.split()[1])
    return got + [(None, [])] * (len(reqs) - len(got))


def norm_rec(hexrec, lids):
    """A PathRecord's bytes with DLID and SLID as GUID+offset (an MLID stays as 'MLID')."""
    b = bytes.fromhex(hexrec)
    dlid, slid = int.from_bytes(b[40:42], "big"), int.from_bytes(b[42:44], "big")
    d = "MLID" if dlid >= 0xc000 else lids.get(dlid, "?%d" % dlid)
    return "%s dlid=%s slid=%s %s" % (b[:40].hex(), d, lids.get(slid, "?%d" % slid), b[44:64].hex())


def session(sm_name):
    res = {}
    with h.Sim(net, lmc=LMC, host=SM_HOST) as sim:
        log = sim.path("%s.log" % sm_name)
        env = sim.env(SM_HOST, rmpp=True)
        # the port GUIDs of tiny.net (node GUID + port number; h2 is 0x100003)
        pol = sim.path("qos-policy.conf")
        with open(pol, "w") as f:
            f.write(POLICY % {"h2": "0x100004", "h3": "0x100006"})
        if sm_name == "opensm":
            sm = sim.start_sm(["-e", "-f", log, "-d", "2", "-s", "0", "-l", str(LMC), "-Q", "-Y", pol],
                              host=SM_HOST, name="opensm", cmd=[h.which("opensm")], count=False, env=env)
        else:
            sm = sim.start_sm(["-f", log, "-l", str(LMC), "-Q", "-Y", pol], host=SM_HOST, name="ibsm", env=env)
        try:
            if not sm.wait_for(log, r"SUBNET UP", 90):
                tap.bail_out("%s did not bring the subnet up: %s" % (sm_name, h.tail(log)))

            def saquery(q):
                return sim.run(["saquery"] + q, host=CLIENT, timeout=120, env=sim.env(CLIENT, rmpp=True))

            nr = nodes(saquery(["NR"]).out)
            res["nr"] = nr
            h2, h3 = by_desc(nr, "h2"), by_desc(nr, "h3")
            if not h2 or not h3:
                tap.bail_out("%s: no NodeRecord of h2 or h3: %s" % (sm_name, sorted(nr)))
            qs = {
                "PR (every path)": ["PR"],
                "PR -n 2": ["PR", "-n", "2"],
                "PR --slid h2+1": ["PR", "--slid", str(h2[0] + 1)],
                "PR --slid h2+1 --dlid h3+2": ["PR", "--slid", str(h2[0] + 1), "--dlid", str(h3[0] + 2)],
                "NR by h3+2": ["NR", str(h3[0] + 2)],
                "PR --slid unknown": ["PR", "--slid", "999"],
                "PR --dgid unknown": ["PR", "--dgid", "fe80::dead:beef"],
                "PR --dgid link-local, prefix fe80:0:0:1234": ["PR", "--dgid", "fe80:0:0:1234:%s" % (
                    ":".join("%04x" % ((int(h3[1], 16) >> s) & 0xffff) for s in (48, 32, 16, 0)))],
                "PR sid/flow/tclass/hop": ["PR", "--slid", str(h2[0]), "--dlid", str(h3[0]), "--service_id", "0x10",
                                           "-F", "5", "-T", "3", "-H", "7"],
                "PR -r 1 h2 to h3": ["PR", "-r", "1", "--slid", str(h2[0]), "--dlid", str(h3[0])],
            }
            for name, q in qs.items():
                r = saquery(q)
                res[name] = (r.rc, normalize(r.out, lid_map(nr)))
            pre = 0xfe80000000000000
            s2, d3 = gid_bytes(pre, h2[1]), gid_bytes(pre, h3[1])
            s3, d2 = gid_bytes(pre, h3[1]), gid_bytes(pre, h2[1])
            both = (1 << 2) | (1 << 3)
            bcast = bytes.fromhex("ff12401bffff000000000000ffffffff")
            raw = [
                ("Get, unknown DGID", GET, both, pr_rec(s2, gid_bytes(pre, "0xdead"))),
                ("GetTable, unknown DGID", GETTABLE, both, pr_rec(s2, gid_bytes(pre, "0xdead"))),
                ("Get, SGID only", GET, 1 << 3, pr_rec(s2)),
                ("GetTable, Preference 1", GETTABLE, both | (1 << 22), pr_rec(s2, d3, {57: 1})),
                ("GetTable, RawTraffic", GETTABLE, both | (1 << 6), pr_rec(s2, d3, {44: 0x80})),
                ("GetTable, NumbPath 0", GETTABLE, both | (1 << 12), pr_rec(s2, d3)),
                ("GetTable, NumbPath 3", GETTABLE, both | (1 << 12), pr_rec(s2, d3, {49: 3})),
                ("Get, broadcast group", GET, 1 << 2, pr_rec(None, bcast)),
                ("GetTable, broadcast group", GETTABLE, 1 << 2, pr_rec(None, bcast)),
                ("GetTable, broadcast group, SL 0, P_Key", GETTABLE, (1 << 2) | (1 << 13) | (1 << 15),
                 pr_rec(None, bcast, {50: 0xff, 51: 0xff})),
                ("GetTable, broadcast group, from h2 (no member)", GETTABLE, both, pr_rec(s2, bcast)),
                ("GetTable, broadcast group, other P_Key", GETTABLE, (1 << 2) | (1 << 13),
                 pr_rec(None, bcast, {50: 0x80, 51: 0x01})),
                # saquery sends no MTU selector: MTU > 512 (selector 0, MTU 2) from h3 to h2, whose
                # way back falls under the 512-byte level
                ("GetTable, h3 to h2, MTU > 512", GETTABLE, both | (1 << 16) | (1 << 17),
                 pr_rec(s3, d2, {54: 0x02})),
                ("GetTable, h3 to h2, MTU > 512, reversible", GETTABLE, both | (1 << 11) | (1 << 16) | (1 << 17),
                 pr_rec(s3, d2, {49: 0x80, 54: 0x02})),
                ("GetTable, h2 to h3, MTU > 512", GETTABLE, both | (1 << 16) | (1 << 17),
                 pr_rec(s2, d3, {54: 0x02})),
                # a P_Key named limited (0x7fff) where both ports hold 0xffff: answered as asked
                ("GetTable, h2 to h3, P_Key 0x7fff", GETTABLE, both | (1 << 13), pr_rec(s2, d3, {50: 0x7f, 51: 0xff})),
                ("GetTable, site-local DGID", GETTABLE, both, pr_rec(s2, gid_bytes(0xfec0000000000000, h3[1]))),
                ("Get, site-local DGID", GET, both, pr_rec(s2, gid_bytes(0xfec0000000000000, h3[1]))),
            ]
            got = ask(sim, [(m, mask, rec) for _, m, mask, rec in raw])
            for (name, _, _, _), (st, recs) in zip(raw, got):
                res["sa_mad " + name] = (st, sorted(norm_rec(x, lid_map(nr)) for x in recs))
        finally:
            sm.stop()
    return res


RTR_NET = """
rtguid=0x300000
Rt	2 "r1"
[1]	"sw2"[3]
"""
RTR_CFG = "rtr_pr_flow_label: 0x12345\nrtr_pr_tclass: 7\nrtr_pr_sl: 3\nrtr_pr_mtu: 2\nrtr_pr_rate: 3\n"


def router_session():
    """ibsm alone (OpenSM 3.3.23 has no rtr_pr_* keys) on tiny.net with a router on sw2 port
    3: a site-local DGID from h2 -> the path to the router with the configured values."""
    tmp = tempfile.mkdtemp(prefix="ibsm-68.")
    netf = os.path.join(tmp, "tiny-router.net")
    with open(net) as f:
        text = f.read().replace('[2]\t"h4"[1]\n[7]', '[2]\t"h4"[1]\n[3]\t"r1"[1]\n[7]')
    with open(netf, "w") as f:
        f.write(text + RTR_NET)
    try:
        with h.Sim(netf, host=SM_HOST) as sim:
            log, cfg = sim.path("ibsm.log"), sim.path("ibsm.yaml")
            with open(cfg, "w") as f:
                f.write(RTR_CFG)
            sm = sim.start_sm(["-F", cfg, "-f", log], host=SM_HOST, name="ibsm", env=sim.env(SM_HOST, rmpp=True))
            try:
                if not sm.wait_for(log, r"SUBNET UP", 90):
                    return None, "no subnet: %s" % h.tail(log)
                nr = nodes(sim.run(["saquery", "NR"], host=CLIENT, timeout=60, env=sim.env(CLIENT, rmpp=True)).out)
                h2, r1 = by_desc(nr, "h2"), by_desc(nr, "r1")
                if not h2 or not r1:
                    return None, "no NodeRecord of h2 or r1: %s" % sorted(nr)
                dg = gid_bytes(0xfec0000000000000, "0x1234")
                got = ask(sim, [(GETTABLE, (1 << 2) | (1 << 3), pr_rec(gid_bytes(0xfe80000000000000, h2[1]), dg))])
                return (got[0], r1, dg), ""
            finally:
                sm.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


answers = {sm: session(sm) for sm in ("opensm", "ibsm")}
o, i = answers["opensm"], answers["ibsm"]
tap.ok(sorted(v[1] for v in o["nr"].values()) == sorted(v[1] for v in i["nr"].values()),
       "both SAs' NodeRecords name the same %d ports" % len(o["nr"]))
for name in [k for k in o if k != "nr"]:
    same = o[name] == i[name]
    ro, ri = o[name][1], i[name][1]
    only_o, only_i = [x for x in ro if x not in ri], [x for x in ri if x not in ro]
    detail = "status/rc %s vs %s, %d vs %d records; only OpenSM: %s\nonly ibsm: %s" % (
        o[name][0], i[name][0], len(ro), len(ri), only_o[:2], only_i[:2])
    tap.ok(same, "%s: ibsm answers as OpenSM (status %s, %d records)" % (name, i[name][0], len(ri)),
           detail[-3000:])
# what the comparison rests on: the answers are not trivially empty
tap.ok(len(i["PR (every path)"][1]) == (4 * 4 + 2) ** 2,
       "every path: 18 LIDs (4 CA ports x 4, 2 switches) to 18: %d records" % len(i["PR (every path)"][1]))
fw = i["sa_mad GetTable, h3 to h2, MTU > 512"][1]
tap.ok(len(fw) == 16 and all(r.split()[3][10:12] == "00" for r in fw)
       and i["sa_mad GetTable, h3 to h2, MTU > 512, reversible"][1] == []
       and i["sa_mad GetTable, h2 to h3, MTU > 512"][1] == [],
       "h3 to h2 above 512: 16 paths, none reversible (the way back is limited to 512; with Reversible: none)",
       "%s" % fw[:2])
tap.ok(len(i["sa_mad Get, broadcast group"][1]) == 1 and i["sa_mad Get, broadcast group"][0] == 0,
       "the path to the IPoIB broadcast group: one record")
rtr, why = router_session()
if rtr is None:
    tap.ok(False, "a site-local DGID with a router in the fabric", why)
else:
    (st, recs), r1, dg = rtr
    b = bytes.fromhex(recs[0]) if len(recs) == 1 else bytes(64)
    word = int.from_bytes(b[44:48], "big")
    fields = {"status": st, "records": len(recs), "dgid": b[8:24] == dg,
              "dlid": int.from_bytes(b[40:42], "big") == r1[0], "flow": (word >> 8) & 0xfffff,
              "hop": word & 0xff, "tclass": b[48], "sl": b[53] & 0xf, "mtu": b[54], "rate": b[55]}
    want = {"status": 0, "records": 1, "dgid": True, "dlid": True, "flow": 0x12345, "hop": 0xff,
            "tclass": 7, "sl": 3, "mtu": 0x82, "rate": 0x83}
    tap.ok(fields == want, "a site-local DGID with a router in the fabric: the path to the router "
           "port, the DGID asked for, HopLimit 255 and the rtr_pr_* values (ibsm alone)",
           "got %s\nwant %s" % (fields, want))
tap.done()
