#!/usr/bin/env python3
"""42-sa-partitions.t - what the SA shows a host follows its partitions, as on
OpenSM 3.3.23 (doc/sa-partitions.md). ftree-small, the SM on h1, one partitions.conf for both
SMs: A = h5 and h10 full members of 0x8001, B = h6 and h14 full members of 0x8002, every end
port a limited member of the default partition (the SM's port a full one, as OpenSM always
makes it), so h3 (C) is in neither A nor B. OpenSM, then ibsm, each on a fresh ibsim, the same
questions from A (h5), C (h3) and B (h6), and from the SM's host (h1) for the LID map:
- saquery NR, PIR, PR (GetTable), LR, GIR, MCMR: compared as sorted record lists, every LID
  replaced by the port GUID it names (each SM's own NodeRecords seen from h1 give the map);
- with tests/clients/sa_mad: a third party's PathRecord Get between A's two hosts (from C,
  from B: no record; from the SM's host and A: the path); ServiceRecords: A registers with its
  own GID and P_Key (OK), with B's GID and A's P_Key, with B's P_Key (REQ_INVALID); B registers
  one in 0x8002; A's Delete of component mask 0 (NO_RECORDS, nothing deleted); A's Delete of
  B's service by ID, GID and P_Key (REQ_INVALID); then saquery SR from each host.
Every status and every record list must be OpenSM's, except where ibsm is stricter on
purpose, each of which is checked to be as written here (and in doc/sa-partitions.md):
- B also registers a service without a P_Key: OpenSM shows it to every host; ibsm only to the
  hosts that share a partition with its port (B and the SM's host), not to A or C;
- A's Delete of B's service naming ID and GID but not the P_Key in the mask: OpenSM deletes
  it; ibsm answers NO_RECORDS (a service A may not see) and keeps it;
- A's Set naming B's GID without a P_Key: OpenSM registers it; ibsm answers REQ_INVALID (a
  port registers services of its own node only);
- 65 services from one port: OpenSM takes them all; ibsm refuses the 65th NO_RESOURCES
  (SR_MAX_PER_PORT, 64 a port)."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from saquery_text import blocks, lid_map, need_clients  # noqa: E402

SM_HOST = "h1"
A, B, C = ("h5", "h10"), ("h6", "h14"), "h3"
VIEWERS = {"A": A[0], "C": C, "B": B[0]}
QUERIES = ["NR", "PIR", "PR", "LR", "GIR", "MCMR"]
LIDISH = re.compile(r"^(\s*)([A-Za-z_ ]*lid[A-Za-z_ ]*?)(:?\.{2,}:?\s*|\s*[:=]\s*)(0x[0-9a-fA-F]+|\d+)\s*$",
                    re.I)
NO_RECORDS, REQ_INVALID, NO_RESOURCES = 0x0300, 0x0200, 0x0100
SET, GETTABLE, GET, DELETE = 0x02, 0x12, 0x01, 0x15
SR_ID, SR_GID, SR_PKEY, SR_NAME = 1, 2, 4, 0x40


def pguid(name):
    """Port GUID of host hN in ftree-small.net (node GUID 0x10000 + 2*(N-1), port GUID + 1)."""
    return 0x10000 + 2 * (int(name[1:]) - 1) + 1


POLICY = ("Default=0x7fff, ipoib : ALL=limited, SELF=full ;\n"
          "A=0x8001, ipoib : 0x%x=full, 0x%x=full ;\n"
          "B=0x8002, ipoib : 0x%x=full, 0x%x=full ;\n") % (pguid(A[0]), pguid(A[1]), pguid(B[0]), pguid(B[1]))

tap = h.start(plan=len(VIEWERS) * len(QUERIES) + 14, timeout=900, need=("opensm", "saquery"))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the comparison is between ibsm and OpenSM")
[tool] = need_clients(tap, "sa_mad")


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


def gid(name):
    return (0xfe80000000000000).to_bytes(8, "big") + pguid(name).to_bytes(8, "big")


def sr(sid, port, pkey, name):
    """A ServiceRecord: ServiceID, the GID of PORT's host, P_Key, no lease (kept), the name."""
    rec = bytearray(176)
    rec[0:8] = sid.to_bytes(8, "big")
    rec[8:24] = gid(port)
    rec[24:26] = pkey.to_bytes(2, "big")
    rec[48:48 + len(name)] = name.encode()
    return bytes(rec)


def pr(src, dst):
    rec = bytearray(64)
    rec[8:24] = gid(dst)
    rec[24:40] = gid(src)
    return bytes(rec)


def ask(sim, host, reqs):
    """sa_mad from HOST, one request at a time (Sets and Deletes in order): the status of
    each answer (None: no answer) and the number of records."""
    lines = "".join("%d 0x%x %d full %s\n" % (m, attr, mask, rec.hex()) for m, attr, mask, rec in reqs)
    r = h.run([tool, "-w", "1", "-t", str(int(h.patience(2000)))], env=sim.env(host, rmpp=True), cwd=sim.rundir,
              stdin_text=lines, timeout=300)
    got = []
    for line in r.out.splitlines():
        x = re.match(r"status (0x[0-9a-f]+) method 0x[0-9a-f]+ records (\d+)", line)
        got.append((int(x.group(1), 16), int(x.group(2))) if x else (None, 0))
    return got + [(None, 0)] * (len(reqs) - len(got))


def session(sm_name):
    """Everything asked of one SM on a fresh ibsim; a dict of answers."""
    res = {}
    with h.Sim(net, host=SM_HOST) as sim:
        pfile = sim.path("partitions.conf")
        with open(pfile, "w") as f:
            f.write(POLICY)
        log = sim.path("%s.log" % sm_name)
        env = sim.env(SM_HOST, rmpp=True)
        if sm_name == "opensm":
            sm = sim.start_sm(["-e", "-f", log, "-d", "2", "-s", "0", "-P", pfile], host=SM_HOST,
                              name="opensm", cmd=[h.which("opensm")], count=False, env=env)
        else:
            sm = sim.start_sm(["-f", log, "-P", pfile], host=SM_HOST, name="ibsm", env=env)
        try:
            if not sm.wait_for(log, r"SUBNET UP", 90):
                tap.bail_out("%s did not bring the subnet up: %s" % (sm_name, h.tail(log)))

            def saquery(host, q):
                return sim.run(["saquery"] + q.split(), host=host, timeout=60, env=sim.env(host, rmpp=True))

            res["lids"] = lid_map(saquery(SM_HOST, "NR").out)
            for who, host in VIEWERS.items():
                for q in QUERIES:
                    res[(who, q)] = saquery(host, q)
            # a third party's PathRecord between A's two hosts
            get_pr = [(GET, 0x35, (1 << 2) | (1 << 3), pr(A[0], A[1]))]
            for who, host in list(VIEWERS.items()) + [("SM", SM_HOST)]:
                res[("PR Get A0-A1", who)] = ask(sim, host, get_pr)[0][0]
            # ServiceRecords
            rid = SR_ID | SR_GID | SR_PKEY | SR_NAME
            res["A sets"] = ask(sim, A[0], [
                (SET, 0x31, rid, sr(0xa1, A[0], 0x8001, "A-own")),
                (SET, 0x31, rid, sr(0xa2, B[0], 0x8001, "A-with-B-gid")),
                (SET, 0x31, rid, sr(0xa3, A[0], 0x8002, "A-with-B-pkey"))])
            res["B sets"] = ask(sim, B[0], [
                (SET, 0x31, rid, sr(0xb1, B[0], 0x8002, "B-own")),
                (SET, 0x31, SR_ID | SR_GID | SR_NAME, sr(0xb2, B[0], 0, "B-nokey"))])
            res["A deletes"] = ask(sim, A[0], [
                (DELETE, 0x31, 0, bytes(176)),
                (DELETE, 0x31, rid, sr(0xb1, B[0], 0x8002, ""))])
            res["SR still"] = [ask(sim, A[0], [(GET, 0x31, SR_ID, sr(0xa1, A[0], 0, ""))])[0][0],
                               ask(sim, B[0], [(GET, 0x31, SR_ID, sr(0xb1, B[0], 0, ""))])[0][0],
                               ask(sim, B[0], [(GET, 0x31, SR_ID, sr(0xb2, B[0], 0, ""))])[0][0]]
            for who, host in list(VIEWERS.items()) + [("SM", SM_HOST)]:
                res[(who, "SR")] = saquery(host, "SR")
            # where ibsm is stricter (last: OpenSM's answers change what there is)
            res["A deletes B's, no P_Key in the mask"] = ask(sim, A[0], [
                (DELETE, 0x31, SR_ID | SR_GID, sr(0xb1, B[0], 0x8002, ""))])[0][0]
            res["B-own left"] = ask(sim, B[0], [(GET, 0x31, SR_ID, sr(0xb1, B[0], 0, ""))])[0][0]
            res["A sets B's GID, no P_Key"] = ask(sim, A[0], [
                (SET, 0x31, SR_ID | SR_GID | SR_NAME, sr(0xa4, B[0], 0, "A-as-B"))])[0][0]
            res["quota"] = ask(sim, A[1], [(SET, 0x31, rid, sr(0x1000 + i, A[1], 0x8001, "q%d" % i))
                                           for i in range(65)])
            res["alive"] = sm.alive()
        finally:
            sm.stop()
    return res


o, i = session("opensm"), session("ibsm")
tap.ok(o["lids"] and sorted(o["lids"].values()) == sorted(i["lids"].values()),
       "from the SM's host both SAs' NodeRecords name the same %d ports" % len(o["lids"]),
       "%s\n%s" % (sorted(o["lids"].values()), sorted(i["lids"].values())))
hidden = {pguid(x) for x in B}  # what A must not see
for who in VIEWERS:
    for q in QUERIES:
        ro, ri = o[(who, q)], i[(who, q)]
        no, ni = normalize(ro.out, o["lids"]), normalize(ri.out, i["lids"])
        same = ro.rc == ri.rc == 0 and no == ni
        diff = "\n".join([x for x in ni if x not in no][:2] + ["--- OpenSM only:"] +
                         [x for x in no if x not in ni][:2])
        tap.ok(same, "%s (%s) saquery %s: what ibsm shows is what OpenSM shows (%d records)"
               % (who, VIEWERS[who], q, len(ni)),
               "rc %s/%s, %d/%d records; ibsm only:\n%s" % (ro.rc, ri.rc, len(no), len(ni), diff[-2500:]))
leak = [x for x in normalize(i[("A", "NR")].out, i["lids"]) + normalize(i[("A", "PR")].out, i["lids"])
        if any(("0x%016x" % g) in x or ("%016x" % g) in x for g in hidden)]
tap.ok(not leak and "NodeRecord" in i[("A", "NR")].out,
       "A's NodeRecords and PathRecords name no port of B", "\n".join(leak[:3]))
want = {"A": 0, "C": NO_RECORDS, "B": NO_RECORDS, "SM": 0}
got_o = {w: o[("PR Get A0-A1", w)] for w in want}
got_i = {w: i[("PR Get A0-A1", w)] for w in want}
tap.ok(got_o == got_i == want,
       "a PathRecord Get between A's hosts: the path for A and the SM's host, NO_RECORDS for C and B",
       "OpenSM %s, ibsm %s" % (got_o, got_i))
st = [s for s, _ in i["A sets"]]
tap.ok(st == [s for s, _ in o["A sets"]] == [0, REQ_INVALID, REQ_INVALID],
       "A's Sets: its own service OK, with B's GID or with B's P_Key REQ_INVALID, as on OpenSM",
       "OpenSM %s, ibsm %s" % (o["A sets"], i["A sets"]))
tap.ok([s for s, _ in i["B sets"]] == [s for s, _ in o["B sets"]] == [0, 0], "B registers its two services",
       "OpenSM %s, ibsm %s" % (o["B sets"], i["B sets"]))
tap.ok([s for s, _ in i["A deletes"]] == [s for s, _ in o["A deletes"]] == [NO_RECORDS, REQ_INVALID]
       and i["SR still"] == o["SR still"] == [0, 0, 0],
       "A's Delete of mask 0: NO_RECORDS; of B's service by ID, GID and P_Key: REQ_INVALID; the 3 "
       "services all still there (each found by its owner), as on OpenSM",
       "OpenSM %s %s, ibsm %s %s" % (o["A deletes"], o["SR still"], i["A deletes"], i["SR still"]))
for who in list(VIEWERS) + ["SM"]:
    no, ni = normalize(o[(who, "SR")].out, o["lids"]), normalize(i[(who, "SR")].out, i["lids"])
    stricter = True
    if who in ("A", "C"):  # ibsm is stricter: B's service without a P_Key is not theirs to see
        stricter = any("B-nokey" in x for x in no)
        no = [x for x in no if "B-nokey" not in x]
    names = sorted(re.findall(r"ServiceName\.+(\S+)", "\n".join(ni)))
    tap.ok(o[(who, "SR")].rc == i[(who, "SR")].rc == 0 and no == ni and stricter,
           "%s's ServiceRecords: %s (OpenSM's%s)" % (who, ", ".join(names) or "none",
                                                     " but B-nokey" if who in ("A", "C") else ""),
           "ibsm %s\nOpenSM %s" % (ni, normalize(o[(who, "SR")].out, o["lids"])))
KEYLESS = "A deletes B's, no P_Key in the mask"
tap.ok(o[KEYLESS] == 0 and i[KEYLESS] == NO_RECORDS and o["B-own left"] == NO_RECORDS and i["B-own left"] == 0,
       "stricter: A's Delete of B's service by ID and GID (no P_Key in the mask): OpenSM deletes it, "
       "ibsm answers NO_RECORDS and keeps it",
       "OpenSM %s / B finds it: %s; ibsm %s / %s" % (o[KEYLESS], o["B-own left"], i[KEYLESS], i["B-own left"]))
tap.ok(o["A sets B's GID, no P_Key"] == 0 and i["A sets B's GID, no P_Key"] == REQ_INVALID,
       "stricter: A's Set naming B's GID without a P_Key: OpenSM registers it, ibsm REQ_INVALID",
       "OpenSM %s, ibsm %s" % (o["A sets B's GID, no P_Key"], i["A sets B's GID, no P_Key"]))
tap.ok([s for s, _ in o["quota"]] == [0] * 65 and [s for s, _ in i["quota"]] == [0] * 64 + [NO_RESOURCES],
       "stricter: 65 services from one port: OpenSM takes all, ibsm 64 and the 65th NO_RESOURCES",
       "OpenSM %s\nibsm %s" % ([s for s, _ in o["quota"]], [s for s, _ in i["quota"]]))
tap.ok(o["alive"] and i["alive"], "both SMs ran to the end")
tap.done()
