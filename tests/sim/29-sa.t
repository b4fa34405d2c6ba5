#!/usr/bin/env python3
"""29-sa.t - ibsm's SA (management class 0x03) judged by infiniband-diags, which know nothing
of ibsm, against what the fabric itself says (smpquery/ibnetdiscover through the harness):
- `saquery NR <lid>` for every end port: the node GUID, port GUID and NodeDescription of the
  port that LID belongs to;
- `saquery -s` (PortInfoRecords whose CapabilityMask has IsSM): the SM's port;
- `saquery PR --slid A --dlid B` from six hosts to every host: SLID/DLID as asked,
  reversible, MTU and rate set;
- `saquery CPI`: class version 2;
- `smpquery -G` and `ibtracert -G` by port GUID (both resolve GUIDs through the SA), and
  `ibqueryerrors` (its node list from the SA, with the RMPP library) checks every node;
- a standby ibsm's port does not answer as SA (only the master does), and `saquery SMIR`
  lists it beside the master (state STANDBY, its port's LID and GUID).
Tables longer than one MAD need RMPP, which umad2sim lacks: the SM and the clients that read
tables run with the RMPP test library (see tests/sim/README.md)."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=11, timeout=300, need=("saquery", "smpquery", "ibtracert", "ibqueryerrors"))
net = h.need_fabric(tap, "ftree-small.net")


def field(text, name):
    m = re.search(r'^\s*%s:?\.+\s*(\S+)' % re.escape(name), text, re.M)
    return m.group(1) if m else None


with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sa_sm("ibsm", "h1", log)  # with the RMPP library: whole tables
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    snap, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    tap.ok(up and h.check_routes(snap)[0], "ibsm on h1 brings the subnet up", h.tail(log))

    # NodeRecord by LID for every end port
    bad, n = [], 0
    for node in snap.nodes.values():
        ports = [(node.lid, None)] if node.type == "SW" else [(p.lid, p) for p in node.ports.values()]
        for lid, port in ports:
            r = sim.run(["saquery", "NR", str(lid)], host="h3", timeout=20)
            n += 1
            got = (field(r.out, "node_guid"), field(r.out, "port_guid"), field(r.out, "NodeDescription"))
            want_port = node.guid if port is None else port.guid
            if r.rc or not got[0] or int(got[0], 16) != node.guid or int(got[1], 16) != want_port or \
               got[2] != node.desc.split()[0]:
                bad.append("LID %d: got %s, want node %016x port %016x %r (%s)" %
                           (lid, got, node.guid, want_port, node.desc, r.text.strip()[-200:]))
    tap.ok(n > 0 and not bad, "saquery NR <lid> for all %d end ports names the node and port the fabric "
           "has at that LID" % n, "; ".join(bad[:4]))

    r = sim.run(["saquery", "-s"], host="h3", timeout=20)
    sm_port = h.sm_port(sim, snap, "h1")
    lids = [int(x) for x in re.findall(r'EndPortLid\.+\s*(\d+)', r.out)]
    tap.ok(r.rc == 0 and sm_port is not None and sm_port.lid in lids,
           "saquery -s lists the SM's port (LID %s) among the IsSM ports" % (sm_port.lid if sm_port else "?"),
           r.text[-600:])

    # PathRecords between every pair of hosts
    hosts = [n for n in snap.nodes.values() if n.type != "SW"]
    cas = [(n, p) for n in hosts for p in n.ports.values()]
    bad, n = [], 0
    for (na, pa) in cas[:6]:
        for (nb, pb) in cas:
            r = sim.run(["saquery", "PR", "--slid", str(pa.lid), "--dlid", str(pb.lid)], host="h3", timeout=20)
            n += 1
            slid, dlid, rev = field(r.out, "slid"), field(r.out, "dlid"), field(r.out, "num_path_revers")
            mtu, rate = field(r.out, "mtu"), field(r.out, "rate")
            if r.rc or slid != str(pa.lid) or dlid != str(pb.lid) or rev is None or \
               not int(rev, 16) & 0x80 or not mtu or int(mtu, 16) & 0x3f == 0 or int(rate, 16) & 0x3f == 0:
                bad.append("%d->%d: %s" % (pa.lid, pb.lid, r.text.strip()[-300:]))
    tap.ok(n > 0 and not bad, "saquery PR --slid --dlid: %d host pairs, each one reversible path with "
           "MTU and rate" % n, "; ".join(bad[:3]))

    r = sim.run(["saquery", "CPI"], host="h3", timeout=20)
    tap.ok(r.rc == 0 and re.search(r'Class version\.+\s*2', r.out) is not None, "saquery CPI: class version 2",
           r.text[-400:])

    a, b = cas[1][1], max((p for _, p in cas), key=lambda p: p.lid)
    r = sim.run(["smpquery", "-G", "nodeinfo", "0x%016x" % b.guid], host="h3", timeout=20)
    tap.ok(r.rc == 0 and field(r.out, "PortGuid") is not None and int(field(r.out, "PortGuid"), 16) == b.guid,
           "smpquery -G nodeinfo <port GUID> (GUID resolved by a PathRecord query) reaches that port",
           r.text[-400:])
    r = sim.run(["ibtracert", "-G", "0x%016x" % a.guid, "0x%016x" % b.guid], host="h3", timeout=20)
    tap.ok(r.rc == 0 and ("lid %d" % b.lid) in r.out, "ibtracert -G <src GUID> <dst GUID> traces to the "
           "destination's LID %d" % b.lid, r.text[-500:])

    r = sim.run(["ibqueryerrors"], host="h3", timeout=60, env=sim.env("h3", rmpp=True))
    m = re.search(r"(\d+) nodes checked, (\d+) bad nodes", r.out)
    tap.ok(r.rc == 0 and m and int(m.group(1)) == len(snap.nodes) and m.group(2) == "0",
           "ibqueryerrors checks all %d nodes, none bad (node list from the SA)" % len(snap.nodes),
           r.text[-500:])

    # a standby ibsm does not answer SA requests: its port is not the SA
    log2 = sim.path("ibsm2.log")
    sb = sim.start_sm(["-f", log2, "-p", "0"], host="h9", name="standby")
    ok = sb.wait_for(log2, r"SWP-0015", POLL_S)
    c0 = sb.counts()
    r = sim.run(["saquery", "NR", str(cas[0][1].lid)], host="h3", timeout=20)
    sb.wait_idle(1.0, 10)
    d = sb.counts() - c0
    tap.ok(ok and r.rc == 0 and d.valid and d.count(method=0x81, attr=0x11, classes=(0x03,)) == 0,
           "with a standby ibsm beside it, SA queries are answered by the master alone (the standby sent "
           "no SA response)", d.summary() + "\n" + h.tail(log2, 5))
    # the master finds the standby at its next SMInfo poll (a sweep: the trap 144 of IsSM);
    # a poll made while the standby was still discovering says state 1 until the next one (a
    # light sweep's): wait for the record to say STANDBY
    end = h.deadline(POLL_S)
    while True:
        r = sim.run(["saquery", "SMIR"], host="h3", timeout=20, env=sim.env("h3", rmpp=True))
        states = {int(g, 16): int(st) for g, st in
                  re.findall(r"GUID\.+(0x[0-9a-f]+)\s.*?SMState\.+(\d+)", r.out, re.S)}
        if sorted(states.values()) == [2, 3] or time.time() > end:
            break
        time.sleep(1)
    tap.ok(r.rc == 0 and len(states) == 2 and sorted(states.values()) == [2, 3],
           "saquery SMIR lists the master (state 3) and the standby the SMInfo poll found (state 2)",
           r.text[-800:])
    rc = du.signal_and_wait(sb, signal.SIGTERM)
    sb.stop()
    rc2 = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0 and rc2 == 0, "both exit 0 on SIGTERM (%s, %s)" % (rc, rc2), h.tail(log))
tap.done()
