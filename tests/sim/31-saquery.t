#!/usr/bin/env python3
"""31-saquery.t - the same questions to OpenSM 3.3.23's SA and to ibsm's, on the same fabric in
the same run, and the same answers. saquery (with the RMPP test library on every end) asks for
every record kind it knows: NR, PIR, SL2VL, PKTR (with the SM_Key), VLAR, IIR, LR, SR, PR,
LFTR, MFTR, GIR, SWIR, SMIR, CPI, and -s, -L, -G, --src-to-dst. The two SMs number LIDs
differently, so every LID in an answer is replaced by the port GUID it names (each SM's own
NodeRecords give the map); records are compared as sorted lists. What must differ is left
out, and said here:
- SMInfoRecord: ActCount (each SM counts its own changes);
- LFTR: the routes themselves (the two minhop implementations may balance ties differently;
  sim tests 01-13 judge ibsm's routes): compared are the switches and their number of blocks;
- CPI: the capability masks (each SA claims what it does: OpenSM multicast and more);
- PIR: LocalPort, the port the SM's own SMP entered the switch by (IBA 14.2.5.6, LocalPortNum):
  it names the path each SM's discovery first reached a switch on, and with several reads in
  flight either SM may reach a spine switch through any of its leaves first.
ibsm's LFTR entries are also judged on their own: they equal what dump_fts reads from the switches."""
import collections
import difflib
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from saquery_text import blocks, lid_map, need_clients  # noqa: E402

SM_HOST, CLIENT = "h1", "h5"
QUERIES = ["NR", "PIR", "SL2VL", "VLAR", "IIR", "LR", "SR", "PR", "LFTR", "MFTR", "GIR", "SWIR",
           "SMIR", "CPI", "-s", "-L h3", "-G h7", "--src-to-dst h2:h9", "PKTR --smkey 1"]
LIDISH = re.compile(r"^(\s*)([A-Za-z_ ]*lid[A-Za-z_ ]*?)(:?\.{2,}:?\s*|\s*[:=]\s*)(0x[0-9a-fA-F]+|\d+)\s*$",
                    re.I)

tap = h.start(plan=len(QUERIES) + 2, timeout=600, need=("opensm", "saquery"))
net = h.need_fabric(tap, "ftree-small.net")
need_clients(tap)


def normalize(text, lids, query):
    if query.startswith("-L"):  # bare LIDs, one a line
        return sorted(lids.get(int(x), x) for x in text.split() if x.isdigit())
    out = []
    for b in blocks(text):
        nb = []
        for line in b:
            x = LIDISH.match(line)
            if x and int(x.group(4), 0) in lids:
                line = "%s%s=%s" % (x.group(1), x.group(2).strip(), lids[int(x.group(4), 0)])
            if query == "SMIR" and "ActCount" in line:
                continue
            if query == "CPI" and "Capability mask" in line:
                continue
            if query == "PIR" and line.strip().startswith("LocalPort:"):
                continue
            nb.append(line.strip())
        out.append("\n".join(nb))
    return sorted(out)


def ask_all(sim):
    env = sim.env(CLIENT, rmpp=True)
    res = {}
    for q in QUERIES + ["NR"]:
        r = sim.run(["saquery"] + q.split(), host=CLIENT, timeout=60, env=env)
        res[q] = r
    return res


answers = {}
for sm_name in ("opensm", "ibsm"):
    with h.Sim(net, host=SM_HOST) as sim:
        log = sim.path("%s.log" % sm_name)
        sm = sim.start_sa_sm(sm_name, SM_HOST, log)
        up = sm.wait_for(log, r"SUBNET UP", 90)
        if not up:
            tap.bail_out("%s did not bring the subnet up: %s" % (sm_name, h.tail(log)))
        answers[sm_name] = ask_all(sim)
        if sm_name == "ibsm":
            # ibsm's LFTR against what the switches hold
            lids = lid_map(answers["ibsm"]["NR"].out)
            fts = sim.run(["dump_fts"], host=CLIENT, timeout=60)
            held = set()
            sw = None
            for line in fts.out.splitlines():
                x = re.match(r"^Unicast lids .*guid (0x[0-9a-f]+)", line)
                if x:
                    sw = int(x.group(1), 16)
                x = re.match(r"^(0x[0-9a-f]+)\s+(\d+)\s", line)
                if x and sw is not None:
                    held.add((sw, int(x.group(1), 16), int(x.group(2))))
            said = set()
            for b in blocks(answers["ibsm"]["LFTR"].out):
                text = "\n".join(b)
                lid = re.search(r"LID\.+(\d+)", text)
                if not lid or int(lid.group(1)) not in lids:
                    continue
                sw = int(lids[int(lid.group(1))], 16)
                for dest, port in re.findall(r"^\s*(\d+)\s+(\d+)\s*$", text, re.M):
                    if int(port) != 255:
                        said.add((sw, int(dest), int(port)))
            held = {x for x in held if x[1] in lids}
            tap.ok(fts.rc == 0 and held and said == held, "ibsm's LFTR records hold the %d entries dump_fts "
                   "reads from the switches, and no other" % len(held),
                   "only LFTR: %s\nonly dump_fts: %s\n%s" % (sorted(said - held)[:5], sorted(held - said)[:5],
                                                          fts.describe()[-600:]))
        sm.stop()

o, i = answers["opensm"], answers["ibsm"]
omap, imap = lid_map(o["NR"].out), lid_map(i["NR"].out)
tap.ok(omap and sorted(omap.values()) == sorted(imap.values()),
       "both SAs' NodeRecords name the same %d end ports (LIDs mapped to GUIDs)" % len(omap),
       "%s\n%s" % (sorted(omap.values()), sorted(imap.values())))
for q in QUERIES:
    no, ni = normalize(o[q].out, omap, q), normalize(i[q].out, imap, q)
    if q == "LFTR":
        def shape(recs):
            return collections.Counter(re.sub(r"\n.*", "", r.split("LID=", 1)[-1]) for r in recs)
        same = o[q].rc == i[q].rc == 0 and len(no) == len(ni) and shape(no) == shape(ni)
        detail = "%d vs %d records" % (len(no), len(ni))
    else:
        same = o[q].rc == i[q].rc and no == ni
        only_i, only_o = [x for x in ni if x not in no], [x for x in no if x not in ni]
        diff = "\n".join(difflib.unified_diff(only_o[0].splitlines(), only_i[0].splitlines(), "OpenSM", "ibsm",
                                              lineterm="", n=2)) if only_i and only_o else \
            "\n".join(only_i[:2] + ["--- OpenSM:"] + only_o[:2])
        detail = "rc %s/%s, %d/%d records, %d only from ibsm, %d only from OpenSM; the first pair:\n%s" % (
            o[q].rc, i[q].rc, len(no), len(ni), len(only_i), len(only_o), diff)
    tap.ok(same, "saquery %s: the same answer from ibsm as from OpenSM (%d records)" % (q, len(ni)),
           detail[-3000:])
tap.done()
