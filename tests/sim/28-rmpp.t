#!/usr/bin/env python3
"""28-rmpp.t - SA answers longer than one MAD on the simulated test bed, through the RMPP
library (tests/tools/rmpp.c, preloaded before libumad2sim.so). umad2sim has no RMPP: without
the library a GetTable answer reaches the client as its first MAD, one NodeRecord. OpenSM
(the SA, on h1) and the clients (on h5) run with the library: saquery -N gets a NodeRecord
for every end port, equal to what ibnetdiscover reads (GUIDs and descriptions, so the MAD ends
umad2sim loses are back too), saquery PR a PathRecord for every pair of end-port LIDs, and
the transfer took several RMPP segments; without the library on the client the same query
gets one record, which shows the checks can fail. Then OpenSM's own SA test suite: osmtest -f c
writes an inventory of every node, port, link and path, and osmtest -f v validates it against
the SA (its GetMulti requests go to the SA by RMPP, the other direction)."""
import collections
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SM_HOST, CLIENT = "h1", "h5"
NODE_RECORD_BYTES = 112   # NodeRecord, 8-byte aligned (attribute offset 14)
SA_HEADERS = 56           # MAD + RMPP + SA headers
RMPP_DATA = 200           # data bytes per SA segment
# the library's counters, printed at exit with RMPP_DEBUG=1
STATS = re.compile(r"messages sent (?P<sent>\d+) received (?P<received>\d+);.*ABORTs sent "
                   r"(?P<aborts>\d+ received \d+),.*timed out: (?P<timeouts>sends \d+ receives \d+)")

tap = h.start(plan=13, timeout=400, need=("opensm", "osmtest", "saquery"))
net = h.need_fabric(tap, "ftree-small.net")
if not os.path.isfile(h.rmpp_path()):
    tap.bail_out("%s not built (run make)" % h.rmpp_path())


def records(text, kind):
    """saquery's dump -> list of {field: value} per 'KIND dump:' block."""
    out = []
    for block in re.split(r"^%s dump:\s*$" % kind, text, flags=re.M)[1:]:
        out.append(dict((m.group(1), m.group(2).strip())
                        for m in re.finditer(r"^\s+(\w+)\.{2,}(.*)$", block, re.M)))
    return out


def inventory(path):
    """osmtest's inventory file -> Counter of its DEFINE_* blocks."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
    except OSError:
        return collections.Counter()
    return collections.Counter(re.findall(r"^(DEFINE_\w+)", text, re.M))


with h.Sim(net, host=SM_HOST) as sim:
    nodes, switches, ports, ca_ports = sim.netfile.sizes()
    end_ports = ca_ports + switches        # a NodeRecord and LID each (switch port 0)
    log = sim.path("opensm.log")
    osm = sim.start_sm(["-e", "-f", log, "-d", "2", "-s", "0"], host=SM_HOST, name="opensm",
                       cmd=[h.which("opensm")], count=False,
                       env=sim.env(SM_HOST, rmpp=True, RMPP_DEBUG=1))
    tap.ok(osm.wait_for(log, r"SUBNET UP", 60), "OpenSM with the RMPP library brings the fabric up "
           "(readiness of the SA)", osm.output()[-1500:] + h.tail(log))
    snap = sim.collect()
    want_nodes = sorted((n.guid, n.desc) for n in snap.nodes.values())
    lids = sorted({n.lid for n in snap.switches()} | {p.lid for p in snap.ca_ports()})

    # ---- without the library on the client: umad2sim's cut, one record
    r = sim.run(["saquery", "-N"], host=CLIENT, timeout=60)
    got = records(r.out, "NodeRecord")
    tap.ok(r.rc == 0 and len(got) == 1, "without the library saquery -N gets 1 NodeRecord (the "
           "first MAD of the answer)", "%d records\n%s" % (len(got), r.describe()))

    # ---- with it: all of them, whole
    r = sim.run(["saquery", "-N"], host=CLIENT, timeout=60,
                env=sim.env(CLIENT, rmpp=True, RMPP_DEBUG=1))
    got = records(r.out, "NodeRecord")
    tap.is_(len(got), end_ports, "with the library saquery -N gets a NodeRecord for every end "
            "port (%d: %d hosts, %d switches)" % (end_ports, ca_ports, switches), r.describe())
    seen = sorted((int(x.get("node_guid", "0"), 16), x.get("NodeDescription", "")) for x in got)
    tap.is_(seen, want_nodes, "the NodeRecords name every node once, GUIDs and descriptions as "
            "ibnetdiscover reads them (descriptions end past byte 224 of their MAD)")
    length = SA_HEADERS + end_ports * NODE_RECORD_BYTES
    segments = -(-(length - SA_HEADERS) // RMPP_DATA)
    m = re.search(r"received tid \S+ class 0x03 from lid \d+: (\d+) bytes in (\d+) segments", r.err)
    tap.ok(m and int(m.group(1)) == length and int(m.group(2)) == segments > 1,
           "the answer came in %d RMPP segments, %d bytes reassembled" % (segments, length),
           r.err[-1500:])
    stats = STATS.search(r.err)
    tap.ok(r.rc == 0 and stats and stats.group("aborts") == "0 received 0" and
           stats.group("timeouts") == "sends 0 receives 0",
           "saquery exits 0; no ABORT either way, no transfer timed out (the library's counters)",
           r.describe())

    r = sim.run(["saquery", "PR"], host=CLIENT, timeout=60, env=sim.env(CLIENT, rmpp=True))
    got = records(r.out, "PathRecord")
    pairs = sorted((int(x.get("slid", "0")), int(x.get("dlid", "0"))) for x in got)
    tap.is_(len(got), len(lids) ** 2, "with the library saquery PR gets a PathRecord for every "
            "pair of the %d end-port LIDs" % len(lids), r.describe())
    tap.is_(pairs, sorted((s, d) for s in lids for d in lids), "each pair once")

    # ---- OpenSM's SA test suite, both ends with the library
    inv = sim.path("osmtest.dat")
    cenv = sim.env(CLIENT, rmpp=True, RMPP_DEBUG=1)
    r = sim.run(["osmtest", "-f", "c", "-i", inv], host=CLIENT, timeout=120, env=cenv)
    tap.ok(r.rc == 0 and 'TEST "Create Inventory" PASS' in r.out, "osmtest -f c passes",
           r.describe())
    n_links = len(sim.netfile.links)
    want = collections.Counter(DEFINE_NODE=end_ports, DEFINE_PORT=ports, DEFINE_LINK=2 * n_links,
                               DEFINE_PATH=len(lids) ** 2)
    tap.is_(inventory(inv), want, "its inventory holds every node, port (switch port 0 too), "
            "link (both ways) and path")
    r = sim.run(["osmtest", "-f", "v", "-i", inv], host=CLIENT, timeout=180, env=cenv)
    tap.ok(r.rc == 0 and 'TEST "Validate Inventory" PASS' in r.out, "osmtest -f v passes (the "
           "SA's answers equal the inventory)", r.describe())
    m = STATS.search(r.err)
    tap.ok(m and int(m.group("sent")) > 0 and int(m.group("received")) > 0, "osmtest sent requests by RMPP "
           "(GetMulti) and received answers by RMPP", r.err[-1500:])
    rc = osm.stop()
    m = STATS.search(osm.output())
    tap.ok(m and int(m.group("sent")) > 0 and int(m.group("received")) > 0, "OpenSM's SA sent answers and "
           "received requests by RMPP (the library's counters at its exit)",
           "exit %s\n%s" % (rc, osm.output()[-1500:]))
tap.done()
