#!/usr/bin/env python3
"""71-routing-keys.t - OpenSM 3.3.23's routing and multicast keys on a live simulated fabric.

A. guid_routing_order_file (-X), port_shifting (--port-shifting), both, hop_weights_file (-w)
   and port_search_ordering_file (-O, minhop): OpenSM 3.3.23
   (opensm -o) and ibsm (--once, minhop) each bring up a fresh ftree-small; the switches' LFTs
   are read back (dump_fts) and every CA destination leaves every switch by the same port under
   both SMs (switch LIDs are balanced apart in ibsm, a documented difference). Each key changes
   the tables (so the comparison can fail).
B. scatter_ports (--scatter-ports 5): two runs give the same tables, other than without it, and
   every route is delivered on a shortest path.
C. disable_multicast (-d 3): the SA's ClassPortInfo (saquery -c) does not claim
   IsUDMulticastSupported (without -d 3 it does); the broadcast group is kept (saquery -g), a
   join is answered, and not one MulticastForwardingTable Set goes out (SMP counter).
E. prefix_routes_file: on tiny.net with two routers (r1 on sw2, r2 on sw1; r1 the first by
   GUID), a file routing fec0::/64 to r2: saquery's PathRecord to fec0::1234 leads to r2's LID,
   one to fec0:0:0:1::1234 (no line matches) finds no path; a file named but not there: every
   off-subnet DGID goes to the first router, r1.
F. node_name_map_name: OpenSM 3.3.23 (opensm -o -D 0x43) and ibsm (--once -D 0x43) on tiny.net
   with one node-name-map (two nodes named, a GUID without a name, a GUID named twice): the
   names opensm-subnet.lst prints are the same under both, the mapped names among them; ibsm's
   opensm-lfts.dump uses them too. A map with a line that is no GUID is dropped whole under both
   (ibsm: NNM-0001 with FILE:LINE).
D. ipoib_mcgroup_creation_validation: a client creating ff12:401b:8001::1 (an IPoIB MGID of a
   partition without a broadcast group) is refused by ibsm (status 0x0200), as by OpenSM; with
   the key FALSE in the configuration file, the group is created.
"""
import os
import re
import socket
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=16, timeout=900, need=("opensm", "saquery", "dump_fts"))
scratch = tempfile.mkdtemp(prefix="ibsm-routing-keys.")
NET = h.fabric("ftree-small.net")
client = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
UD_MCAST = 0x0200  # ClassPortInfo:CapabilityMask IsUDMulticastSupported


def ca_routes(snap):
    """{(switch GUID, CA node GUID, port): out port} from the LFTs read back."""
    own = snap.lid_owners()
    out = {}
    for g, t in snap.lfts.items():
        for lid, p in enumerate(t):
            if p == h.NO_PORT or lid not in own:
                continue
            typ, n, num = own[lid][0]
            if typ == "CA":
                out[(g, n.guid, num)] = p
    return out


def routes_of(sm, args):
    with h.Sim(NET, lmc=0) as sim:
        log = sim.path("sm.log")
        if sm == "opensm":
            r = sim.run([h.which("opensm"), "-o", "-f", log] + args, timeout=180)
        else:
            r = sim.run_sm(["--once", "-f", log] + args, timeout=180)
        snap = sim.collect()
        ok, why = h.check_routes(snap)
        return ca_routes(snap), r, ok, why


def diff(a, b):
    keys = sorted(set(a) | set(b))
    return ["sw 0x%x -> 0x%x/%d: %s vs %s" % (k[0], k[1], k[2], a.get(k), b.get(k))
            for k in keys if a.get(k) != b.get(k)]


# ---- A. the order file and port shifting, side by side with OpenSM
order = os.path.join(scratch, "guid-order")
# hosts h16, h12, h8, h4, h15, ... first (port GUID 0x10000 + 2 (N - 1) + 1)
with open(order, "w") as fh:
    fh.write("# routed first\n" + "".join("0x%x\n" % (0x10000 + 2 * (n - 1) + 1)
                                         for n in (16, 12, 8, 4, 15, 11, 7, 3)))
got = {}
weights = os.path.join(scratch, "hop-weights")
with open(weights, "w") as fh:  # leaf1's up ports 5 and 6, leaf3's port 8 weigh more
    fh.write("# switch port weights\n0x20000 5 3\n0x20000 6 2\n0x20002 8 4\n")
search = os.path.join(scratch, "port-search-order")
with open(search, "w") as fh:  # leaf1 searches its up ports backwards, spine1 from leaf 3 on
    fh.write("0x20000 8 7 6 5\n0x20004 3 4 # the rest follow\n")
for name, args in (("default", []), ("guid_routing_order_file", ["-X", order]),
                   ("port_shifting", ["--port-shifting"]),
                   ("both", ["-X", order, "--port-shifting"]),
                   ("hop_weights_file", ["-w", weights]),
                   ("port_search_ordering_file", ["-O", search])):
    osm, ro, _, _ = routes_of("opensm", args)
    ibsm, ri, ok, why = routes_of("ibsm", args)
    got[name] = ibsm
    d = diff(osm, ibsm)
    tap.ok(ro.rc == 0 and ri.rc == 0 and ok and len(ibsm) >= 16 * 8 and not d,
           "%s: every CA route of every switch as OpenSM 3.3.23 sets it (%d routes)" %
           (name, len(ibsm)), "; ".join(d[:8]) + " " + why + ro.describe()[-300:] +
           ri.describe()[-300:])
tap.ok(diff(got["default"], got["hop_weights_file"]) and
       diff(got["default"], got["port_search_ordering_file"]) and
       diff(got["default"], got["guid_routing_order_file"]) and
       diff(got["default"], got["port_shifting"]) and
       diff(got["guid_routing_order_file"], got["both"]),
       "the order file and port shifting each change the tables",
       "default vs order: %d, default vs shifting: %d" %
       (len(diff(got["default"], got["guid_routing_order_file"])),
        len(diff(got["default"], got["port_shifting"]))))

# ---- B. scatter_ports
s1, r1, ok1, why1 = routes_of("ibsm", ["--scatter-ports", "5"])
s2, r2, ok2, why2 = routes_of("ibsm", ["--scatter-ports", "5"])
tap.ok(r1.rc == 0 and r2.rc == 0 and ok1 and ok2 and not diff(s1, s2) and diff(s1, got["default"]),
       "--scatter-ports 5: the same tables twice, not the unscattered ones, every route delivered",
       "%s %s; runs differ in %d, from default in %d" % (why1, why2, len(diff(s1, s2)),
                                                        len(diff(s1, got["default"]))))


# ---- C. disable_multicast
def cap_mask(sim, host):
    r = sim.run(["saquery", "-c"], host=host, timeout=30, env=sim.env(host, rmpp=True))
    m = re.search(r"Capability mask\.+(0x[0-9A-Fa-f]+)", r.out)
    return (int(m.group(1), 16) if m else None), r


with h.Sim(NET) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0"], host="h1", name="ibsm", env=sim.env("h1", rmpp=True))
    up = sm.wait_for(log, r"SUBNET UP", 60)
    cm_on, r_on = cap_mask(sim, "h2")
    sm.stop()
with h.Sim(NET) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-f", log, "-s", "0", "-d", "3"], host="h1", name="ibsm",
                      env=sim.env("h1", rmpp=True))
    up3 = sm.wait_for(log, r"SUBNET UP", 60)
    cm_off, r_off = cap_mask(sim, "h2")
    gs = sim.run(["saquery", "-g"], host="h2", timeout=30, env=sim.env("h2", rmpp=True))
    j = sim.run([client, "ff12:401b:ffff::ffff:ffff"], host="h3", timeout=30)
    tap.ok(up and up3 and cm_on is not None and cm_on & UD_MCAST and cm_off is not None and
           not cm_off & UD_MCAST, "-d 3: ClassPortInfo does not claim IsUDMulticastSupported "
           "(0x%x; without it 0x%x)" % (cm_off or 0, cm_on or 0),
           r_on.describe()[-500:] + r_off.describe()[-500:] + h.tail(log))
    sm.wait_idle(quiet=1.0, timeout=20)
    counts = sm.counts()
    mft_sets = counts.sets(attr=h.MFT) if counts else None
    tap.ok("ff12:401b:ffff::ffff:ffff" in gs.out and j.rc == 0 and "status 0x0000" in j.out and
           mft_sets == 0 and "MCG-0005" in h.read(log),
           "-d 3: the broadcast group is kept and a join answered, no MFT Set sent (%s)" % mft_sets,
           gs.describe()[-400:] + j.describe()[-300:] + h.tail(log))
    sm.stop()


# ---- D. ipoib_mcgroup_creation_validation, beside OpenSM
MGID = "ff12:401b:8001::1"


def create(sm_name, conf=None):
    with h.Sim(NET) as sim:
        log = sim.path("sm.log")
        if sm_name == "opensm":
            sm = sim.start_sa_sm("opensm", "h1", log)
            up = sm.wait_for(log, r"SUBNET UP", 60)
        else:
            sm = sim.start_sm(["-f", log, "-s", "0"] + (["-F", conf] if conf else []), host="h1",
                              name="ibsm", env=sim.env("h1", rmpp=True))
            up = sm.wait_for(log, r"SUBNET UP", 60)
        j = sim.run([client, "-c", MGID], host="h4", timeout=30)
        gs = sim.run(["saquery", "-g"], host="h2", timeout=30, env=sim.env("h2", rmpp=True))
        sm.stop()
        return up, j, MGID in gs.out


up_o, j_o, listed_o = create("opensm")
up_i, j_i, listed_i = create("ibsm")
tap.ok(up_o and up_i and "status 0x0200" in j_i.out and "status 0x0200" in j_o.out and
       not listed_i and not listed_o,
       "%s without its partition's broadcast group: refused (0x0200) by ibsm as by OpenSM" % MGID,
       j_i.describe()[-300:] + j_o.describe()[-300:])
conf = os.path.join(scratch, "opensm.conf")
with open(conf, "w") as fh:
    fh.write("ipoib_mcgroup_creation_validation FALSE\n")
up_n, j_n, listed_n = create("ibsm", conf)
tap.ok(up_n and "status 0x0000" in j_n.out and listed_n,
       "ipoib_mcgroup_creation_validation FALSE: %s is created" % MGID, j_n.describe()[-300:])


# ---- E. prefix_routes_file
RTR_NET = """
rtguid=0x300000
Rt	2 "r1"
[1]	"sw2"[3]

Rt	2 "r2"
[1]	"sw1"[3]
"""
netf = os.path.join(scratch, "tiny-routers.net")
with open(h.fabric("tiny.net")) as f:
    text = f.read()
text = text.replace('[2]\t"h4"[1]\n[7]', '[2]\t"h4"[1]\n[3]\t"r1"[1]\n[7]')
text = text.replace('[2]\t"h2"[1]\n[7]', '[2]\t"h2"[1]\n[3]\t"r2"[1]\n[7]')
with open(netf, "w") as f:
    f.write(text + RTR_NET)


def path_dlid(sim, dgid):
    r = sim.run(["saquery", "--sgid", sgid, "--dgid", dgid, "PR"], host="h2", timeout=30,
                env=sim.env("h2", rmpp=True))
    m = re.search(r"dlid\.+(0x[0-9A-Fa-f]+|\d+)", r.out)
    return (int(m.group(1), 0) if m else None), r


for name, content in (("routes", None), ("missing", "absent")):
    with h.Sim(netf, host="h1") as sim:
        log = sim.path("ibsm.log")
        conf = sim.path("ibsm.yaml")
        snap = None
        if content is None:
            pr = sim.path("prefix-routes.conf")
        else:
            pr = sim.path("no-such-prefix-routes.conf")
        with open(conf, "w") as fh:
            fh.write("prefix_routes_file: %s\n" % pr)
        if content is None:
            with open(pr, "w") as fh:
                fh.write("# filled in once the routers' port GUIDs are known\n")
        sm = sim.start_sm(["-F", conf, "-f", log, "-s", "0"], host="h1", name="ibsm",
                          env=sim.env("h1", rmpp=True))
        up = sm.wait_for(log, r"SUBNET UP", 60)
        snap = sim.collect()
        r1, r2, h2 = sim.node(snap, "r1"), sim.node(snap, "r2"), sim.node(snap, "h2")
        sgid = socket.inet_ntop(socket.AF_INET6, bytes.fromhex("fe80000000000000%016x" %
                                                               (h2.ports[1].guid if h2 else 1)))
        if content is None:
            # r2's port GUID, read back: the file names it, and a SIGHUP reads it again
            with open(pr, "w") as fh:
                fh.write("# site-local prefix fec0::/64 leaves by r2\n0xfec0000000000000 0x%x\n"
                         % r2.ports[1].guid)
            sm.popen.send_signal(1)
            sm.wait_for(log, r"PFX-0003 .*: 1 routes", 30)
            d1, q1 = path_dlid(sim, "fec0::1234")
            d2, q2 = path_dlid(sim, "fec0:0:0:1::1234")
            tap.ok(up and d1 == r2.ports[1].lid and d2 is None,
                   "prefix_routes_file: fec0::1234 by r2 (LID %s), fec0:0:0:1::1234 no path (%s)"
                   % (d1, d2), q1.describe()[-600:] + q2.describe()[-400:] + h.tail(log))
        else:
            d2, q2 = path_dlid(sim, "fec0:0:0:1::1234")
            tap.ok(up and d2 == r1.ports[1].lid and "PFX-0004" in h.read(log),
                   "prefix_routes_file not there: fec0:0:0:1::1234 by the first router r1 (LID %s)" % d2,
                   q2.describe()[-600:] + h.tail(log))
        sm.stop()


# ---- F. node_name_map_name, beside OpenSM
NAMES = os.path.join(scratch, "ib-node-name-map")
with open(NAMES, "w") as fh:
    fh.write('# names\n0x200000 "spine-A rack 1"\n0x100000 "host one"   # h1\n'
             '0x100003\n0x200000 "second name"\n')


def lst_names(sm_name, names=NAMES):
    with h.Sim(h.fabric("tiny.net"), host="h1") as sim:
        log = sim.path("sm.log")
        if sm_name == "opensm":
            conf = sim.path("opensm.conf")
            with open(conf, "w") as fh:
                fh.write("node_name_map_name %s\n" % names)
            r = sim.run([h.which("opensm"), "-o", "-D", "0x43", "-F", conf, "-f", log], timeout=120)
        else:
            conf = sim.path("ibsm.yaml")
            with open(conf, "w") as fh:
                fh.write("node_name_map_name: %s\n" % names)
            r = sim.run_sm(["--once", "-D", "0x43", "-F", conf, "-f", log], timeout=120)
        lst = h.read(os.path.join(sim.osmdir, "opensm-subnet.lst"))
        lfts = h.read(os.path.join(sim.osmdir, "opensm-lfts.dump"))
        return sorted(set(re.findall(r"\{([^{}]*)\}", lst))), lfts, r, h.read(log)


on, _, ro, lo = lst_names("opensm")
names, lfts, ri, li = lst_names("ibsm")
tap.ok(ri.rc == 0 and names == on and "spine-A rack 1" in names and "host one" in names and
       "'host one'" in lfts and "('spine-A rack 1')" in lfts,
       "node_name_map_name: opensm-subnet.lst names the nodes as OpenSM's does (%s); "
       "opensm-lfts.dump too" % ", ".join(names),
       "OpenSM %s\nibsm %s\n%s%s" % (on, names, ro.describe()[-300:], li[-1500:]))
BAD = os.path.join(scratch, "bad-node-name-map")
with open(BAD, "w") as fh:
    fh.write('0x200000 "spine-A rack 1"\nsw2 "no GUID"\n')
on, _, _, _ = lst_names("opensm", BAD)
names, _, ri, li = lst_names("ibsm", BAD)
tap.ok(ri.rc == 0 and names == on and "sw1" in names and "NNM-0001" in li and ":2: " in li,
       "a map with a line that is no GUID is not used, by ibsm as by OpenSM (%s)" % ", ".join(names),
       "OpenSM %s\nibsm %s\n%s" % (on, names, li[-1500:]))
tap.done()
