#!/usr/bin/env python3
"""69-sa-db.t - what the SA keeps across a restart and a failover (OpenSM 3.3.23's sa_db_dump,
sa_db_file, sminfo_polling_timeout, polling_retry_number, honor_guid2lid_file, no_clients_rereg),
judged by what clients see (saquery with the SM_Key, the SMP trace, the MFTs the switches hold).
Fabric ftree-small; clients: tests/clients/sa_mad (ServiceRecord Set, InformInfo Set) and
mc_member (joins).
O. OpenSM 3.3.23 with sa_db_dump: two ServiceRecords (one for ever, one for 600 s), a
   subscription, a group of its own (two full members) and a non-member in the IPoIB group;
   its opensm-sa.dump after a light sweep; saquery's answers taken under OpenSM.
A. ibsm (another simulator, a fresh fabric) with sa_db_file = OpenSM's dump and sa_db_dump:
   saquery SR, MCMR and IIR answer what OpenSM answered (the lease left of the 600 s service
   at most 600); the MFTs carry the restored groups to their members (flooded from each member);
   a trace of the SMPs: ClientReregister in PortInfo Sets, the default (ibsim's ports do not
   claim CapabilityMask bit 25: tests/tools/smp_rewrite.so sets it in the PortInfo the SM reads). Then a client registers one more service and h6 joins the group: the
   next light sweep writes opensm-sa.dump (mode 0600, no .tmp left) in OpenSM's format with
   them; SIGTERM.
B. ibsm again (a third simulator) with sa_db_file = that dump and no_clients_rereg: the same
   answers as before its restart, the MFTs too; not one PortInfo Set carries ClientReregister
   (the trace). A dump with bad lines: each named FILE:LINE in the log, the good lines loaded,
   the SM up.
C. Failover: ibsm master on h1 (dump directory D) and ibsm standby on h2 (sa_db_file
   D/opensm-sa.dump, sminfo_polling_timeout 300, polling_retry_number 2, a guid2lid of its own
   that gives h3 LID 200); clients register with the master; the master is killed by pid: the
   standby logs one unanswered poll (LOOP-0010 1 of 2), then takes over after 2 (LOOP-0008);
   saquery shows the same records, the MFTs reach the members, and h3 keeps its LID
   (honor_guid2lid_file false: the ports' LIDs, not the standby's guid2lid).
D. The same with honor_guid2lid_file (-x) and polling_retry_number 3: two unanswered polls
   logged, taken over after 3, and h3 gets LID 200 from the standby's guid2lid."""
import os
import re
import shutil
import signal
import socket
import stat
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
NET = "ftree-small.net"
IPOIB = "ff12:401b:ffff::ffff:ffff"
OWN = "ff12:601b:ffff::1:1"
SR_ID_A, SR_ID_B, SR_ID_C = 0x1000000000000abc, 0x22, 0x33

tap = h.start(plan=24, timeout=900, need=("opensm", "saquery", "smpquery"))
net = h.need_fabric(tap, NET)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: this test is about ibsm's own SA database")
sa_mad = os.path.join(h.build_dir(), "tests", "clients", "sa_mad")
mc_member = os.path.join(h.build_dir(), "tests", "clients", "mc_member")
for tool in (sa_mad, mc_member):
    if not os.access(tool, os.X_OK):
        tap.bail_out("%s not built (run make)" % tool)
scratch = h.Scratch("ibsm-sadb.")


def conf(name, text):
    path = scratch.path(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def sr_line(guid, sid, name, lease=0xffffffff):
    r = bytearray(176)
    r[0:8] = sid.to_bytes(8, "big")
    r[8:16] = (0xfe80000000000000).to_bytes(8, "big")
    r[16:24] = guid.to_bytes(8, "big")
    r[24:26] = b"\xff\xff"
    r[28:32] = lease.to_bytes(4, "big")
    r[48:48 + len(name)] = name.encode()
    r[112] = 0xab
    r[160:168] = (0x1122334455667788).to_bytes(8, "big")
    mask = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 4) | (1 << 6) | (1 << 7) | (1 << 35)
    return "2 0x31 %d full %s\n" % (mask, r.hex())


def inform_line(trap):
    ii = bytearray(36)
    ii[16:18] = b"\xff\xff"           # every LID
    ii[22], ii[23] = 1, 1              # generic, subscribe
    ii[24:26] = b"\xff\xff"           # any type
    ii[26:28] = trap.to_bytes(2, "big")
    ii[31] = 16
    ii[33:36] = b"\xff\xff\xff"
    return "2 0x03 0 full %s\n" % ii.hex()


def ask(sim, host, lines):
    r = h.run([sa_mad, "-t", str(int(h.patience(3000)))], env=sim.env(host, rmpp=True), cwd=sim.rundir,
              stdin_text="".join(lines), timeout=120)
    return [l.split()[1] for l in r.out.splitlines() if l.startswith("status")], r


def join(sim, host, mgid, create=False, state=1):
    argv = [mc_member] + (["-c"] if create else []) + ["-s", str(state), mgid]
    r = h.run(argv, env=sim.env(host, rmpp=True), cwd=sim.rundir, timeout=60)
    return r.rc == 0 and "status 0x0000" in r.out, r


def guid_of(sim, snap, name):
    node = sim.node(snap, name)
    return node.ports[min(node.ports)].guid


def lid_of(sim, snap, name):
    node = sim.node(snap, name)
    return node.ports[min(node.ports)].lid


def sa_view(sim, host="h9"):
    """What saquery (with the SM_Key) shows of the SA's state: {SR: [...], MCMR: [...], IIR:
    [...]}, each record as a sorted tuple of its fields, the ServiceLease of a finite lease as
    'finite <= N' (it runs down), and the raw outputs."""
    env = sim.env(host, rmpp=True)
    out = {}
    raw = []
    for kind, argv in (("SR", ["saquery", "SR", "--smkey", "1"]),
                       ("MCMR", ["saquery", "-m", "--smkey", "1"]),
                       ("IIR", ["saquery", "IIR", "--smkey", "1"])):
        r = sim.run(argv, host=host, timeout=30, env=env)
        raw.append(r.text)
        recs = []
        for block in re.split(r"(?m)^\S.*(?:dump|Record):?\s*$", r.out):
            fields = []
            for m in re.finditer(r"(?m)^\s+(\w+)\.+(.*\S)\s*$", block):
                k, v = m.group(1), m.group(2)
                if kind == "SR" and k == "ServiceLease" and int(v, 0) != 0xffffffff:
                    v = "finite" if 0 < int(v, 0) <= 600 else "bad %s" % v
                if kind == "IIR" and k in ("QPN", "RespTimeValue"):
                    continue  # the subscriber's QPN: the SM's own business (OpenSM 1, ibsm the MAD's)
                fields.append((k, v))
            if fields:
                recs.append(tuple(sorted(fields)))
        out[kind] = sorted(recs)
    out["raw"] = "\n".join(raw)
    return out


def same_view(a, b):
    bad = [k for k in ("SR", "MCMR", "IIR") if a[k] != b[k]]
    detail = "; ".join("%s: %d vs %d records, first differing %s / %s" %
                       (k, len(a[k]), len(b[k]),
                        next((x for x in a[k] if x not in b[k]), None),
                        next((x for x in b[k] if x not in a[k]), None)) for k in bad)
    return not bad, detail or "SR %d, MCMR %d, IIR %d records" % (len(a["SR"]), len(a["MCMR"]), len(a["IIR"]))


def members(view):
    """{MLID: set of member port GUIDs} from the MCMR records."""
    out = {}
    for rec in view["MCMR"]:
        d = dict(rec)
        gid = d.get("PortGid", "")
        if "Mlid" in d and gid.startswith("fe80"):
            g = int.from_bytes(socket.inet_pton(socket.AF_INET6, gid)[8:], "big")
            out.setdefault(int(d["Mlid"], 16), set()).add(g)
    return out


def flood_ok(sim, snap, mem):
    """Every group's MFTs carry a copy from each member to every other member (harness)."""
    end = h.deadline(20)
    while True:
        mfts = h.read_mfts(sim, snap)
        bad = []
        for mlid, m in sorted(mem.items()):
            if len(m) < 2:
                continue
            ok, why, _ = h.mcast_flood(snap, mfts, mlid, m)
            if not ok:
                bad.append("0x%04x: %s" % (mlid, why))
        if not any(len(m) >= 2 for m in mem.values()):
            return False, "no group with two members to flood"
        if not bad or time.time() > end:
            return not bad, "; ".join(bad) or "%d groups flooded from every member" % len(mem)
        time.sleep(0.3)


def rereg_sets(trace):
    """(PortInfo Sets sent, those with ClientReregister) in an SMPCOUNT_TRACE file."""
    with open(trace, "rb") as f:
        data = f.read()
    sets = rereg = 0
    for off in range(0, len(data) - 279, 280):
        rec = data[off:off + 280]
        direction = rec[12]
        mad = rec[24:]
        if direction != 0 or mad[1] not in (0x01, 0x81) or mad[3] != 0x02:
            continue
        if struct.unpack(">H", mad[16:18])[0] != 0x0015:
            continue
        sets += 1
        rereg += bool(mad[64 + 51] & 0x80)
    return sets, rereg


def start_ibsm(sim, host, name, args, trace=None, **env_extra):
    env = sim.env(host, rmpp=True, **env_extra)
    if trace:
        env["SMPCOUNT_TRACE"] = trace
        env["LD_PRELOAD"] = os.path.join(h.build_dir(), "tests", "tools", "smp_rewrite.so") + " " + env["LD_PRELOAD"]
        env["CAPBITS"] = "0x02000000"   # IsClientReregistrationSupported
    log = sim.path("%s.log" % name)
    return sim.start_sm(["-f", log, "-s", "1"] + args, host=host, env=env, name=name), log


def up(sm, log, mark=0):
    return du.wait_text(log, mark, r"SWP-0002 SUBNET UP", POLL_S, sm.alive) is not None


def register(sim, snap, host):
    g = guid_of(sim, snap, host)
    return ask(sim, host, [sr_line(g, SR_ID_A, "svc-a"), sr_line(g, SR_ID_B, "svc-b", 600),
                           inform_line(64)])


# ---- O. OpenSM writes its dump
osm_conf = conf("opensm.conf", "sa_db_dump TRUE\n")
with h.Sim(net) as sim:
    log = sim.path("opensm.log")
    osm = sim.start_sm(["-F", osm_conf, "-e", "-f", log, "-d", "2", "-s", "1"], host="h1",
                       cmd=[h.which("opensm")], count=False, env=sim.env("h1", rmpp=True), name="opensm")
    ready = osm.wait_for(log, r"SUBNET UP", POLL_S)
    snap = sim.collect()
    st, r = register(sim, snap, "h3")
    j = [join(sim, "h3", OWN, create=True)[0], join(sim, "h4", OWN)[0], join(sim, "h5", IPOIB, state=2)[0]]
    dump = os.path.join(sim.osmdir, "opensm-sa.dump")
    end = h.deadline(POLL_S)
    while time.time() < end and ("svc-b" not in h.read(dump) or h.read(dump).count("mcm_port") < 3 or
                                 "InformInfo Record" not in h.read(dump)):
        time.sleep(0.3)
    osm_dump = scratch.path("opensm-sa.dump")
    if os.path.exists(dump):
        shutil.copy(dump, osm_dump)
    osm_view = sa_view(sim)
    osm.stop()
tap.ok(ready and st == ["0x0000"] * 3 and all(j) and os.path.exists(osm_dump) and
       h.read(osm_dump).count("mcm_port") >= 3,
       "OpenSM 3.3.23: two services, a subscription, joins; its opensm-sa.dump has them",
       "%s %s\n%s" % (st, j, h.read(osm_dump) if os.path.exists(osm_dump) else h.tail(log)))

# ---- A. ibsm loads OpenSM's dump
with h.Sim(net) as sim:
    trace = sim.path("a.trace")
    sm, log = start_ibsm(sim, "h1", "ibsm-a", ["-F", conf("a.conf", "sa_db_dump TRUE\nsa_db_file %s\n" % osm_dump)],
                         trace=trace)
    ok = up(sm, log)
    text = h.read(log)
    m = re.search(r"SDB-0001 SA database .* restored: (\d+) multicast groups \((\d+) members\), (\d+) "
                  r"ServiceRecords, (\d+) subscriptions", text)
    tap.ok(ok and m and int(m.group(3)) == 2 and int(m.group(4)) == 1 and "SDB-0002" not in text,
           "ibsm with sa_db_file = OpenSM's dump comes up and says what it restored (%s)" %
           (m.group(0) if m else "no SDB-0001"), h.tail(log, 15))
    view_a = sa_view(sim)
    tap.check("saquery SR, MCMR and IIR answer under ibsm what they answered under OpenSM",
              same_view(osm_view, view_a))
    snap = sim.collect()
    mem = members(view_a)
    tap.ok(len(mem.get(0xC001, ())) == 2, "the restored group 0xC001 has its two members",
           str({hex(k): len(v) for k, v in mem.items()}))
    tap.check("the switches' MFTs carry each restored group to its members", flood_ok(sim, snap, mem))
    sets, rereg = rereg_sets(trace)
    tap.ok(sets > 0 and rereg > 0, "by default the new master sets ClientReregister (%d of %d PortInfo Sets)"
           % (rereg, sets))
    # more state, then the dump ibsm writes
    g3 = guid_of(sim, snap, "h3")
    st, _ = ask(sim, "h3", [sr_line(g3, SR_ID_C, "svc-c", 600)])
    jn = join(sim, "h6", OWN)[0]
    dump = os.path.join(sim.osmdir, "opensm-sa.dump")
    end = h.deadline(POLL_S)
    while time.time() < end and ("svc-c" not in h.read(dump) or h.read(dump).count("mcm_port") < 4):
        time.sleep(0.3)
    text = h.read(dump)
    mode = stat.S_IMODE(os.stat(dump).st_mode) if os.path.exists(dump) else None
    tap.ok(st == ["0x0000"] and jn and "svc-c" in text and mode == 0o600 and
           not os.path.exists(dump + ".tmp"),
           "after a service and a join, a light sweep writes opensm-sa.dump (mode %s, no .tmp left)" %
           (oct(mode) if mode is not None else None), text[-600:] + h.tail(log, 8))
    rx = {"MC Group": r"^MC Group 0x[0-9a-f]{4} (?: \(well known\))?: mgid=0x[0-9a-f]{16}:0x[0-9a-f]{16} "
                      r"port_gid=0x[0-9a-f]{16}:0x[0-9a-f]{16} qkey=0x[0-9a-f]{8} mlid=0x[0-9a-f]{4} mtu=0x[0-9a-f]{2} "
                      r"tclass=0x[0-9a-f]{2} pkey=0x[0-9a-f]{4} rate=0x[0-9a-f]{2} pkt_life=0x[0-9a-f]{2} "
                      r"sl_flow_hop=0x[0-9a-f]{8} scope_state=0x[0-9a-f]{2} proxy_join=0x[01]$",
          "mcm_port": r"^mcm_port: port_gid=0x[0-9a-f]{16}:0x[0-9a-f]{16} scope_state=0x[0-9a-f]{2} proxy_join=0x[01]$",
          "InformInfo": r"^InformInfo Record: subscriber_gid=0x[0-9a-f]{16}:0x[0-9a-f]{16} subscriber_enum=0x[0-9a-f]+ "
                        r"InformInfo: gid=0x[0-9a-f]{16}:0x[0-9a-f]{16} lid_range_begin=0x[0-9a-f]+ lid_range_end=0x[0-9a-f]+ "
                        r"is_generic=0x1 subscribe=0x1 trap_type=0x[0-9a-f]+ trap_num=0x40 qpn_resp_time_val=0x[0-9a-f]+ "
                        r"node_type=0x[0-9a-f]{6} rep_addr: lid=0x[0-9a-f]{4} path_bits=0x00 static_rate=0x00 "
                        r"remote_qp=0x[0-9a-f]{8} remote_qkey=0x[0-9a-f]{8} pkey_ix=0x0000 sl=0x00$",
          "Service": r"^Service Record: id=0x[0-9a-f]{16} gid=0x[0-9a-f]{16}:0x[0-9a-f]{16} pkey=0x[0-9a-f]+ "
                     r"lease=0x[0-9a-f]+ key=0x[0-9a-f]{16}:0x[0-9a-f]{16} name='svc-[abc]' data8=0x[0-9a-f]{16}:0x[0-9a-f]{16} "
                     r"data16=0x[0-9a-f]{16}:0x[0-9a-f]{16} data32=0x[0-9a-f]{16}:0x[0-9a-f]{16} "
                     r"data64=0x[0-9a-f]{16}:0x[0-9a-f]{16} modified_time=0x[0-9a-f]+ lease_period=0x[0-9a-f]+$"}
    lines = [l for l in text.splitlines() if l]
    odd = [l for l in lines if not any(re.match(x, l) for x in rx.values())]
    kinds = {k: sum(1 for l in lines if re.match(x, l)) for k, x in rx.items()}
    tap.ok(not odd and kinds["MC Group"] == 2 and kinds["mcm_port"] == 4 and kinds["InformInfo"] == 1 and
           kinds["Service"] == 3 and all(b == "" for b in text.split("\n")[1::2]),
           "every line of it in OpenSM's format, each followed by a blank line (%s)" % kinds,
           "\n".join(odd[:4]))
    view_a2 = sa_view(sim)
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    ibsm_dump = scratch.path("ibsm-sa.dump")
    shutil.copy(dump, ibsm_dump)

# ---- B. ibsm restarts from its own dump, no_clients_rereg
with h.Sim(net) as sim:
    trace = sim.path("b.trace")
    sm, log = start_ibsm(sim, "h1", "ibsm-b", ["-F", conf("b.conf", "sa_db_file %s\nno_clients_rereg TRUE\n" % ibsm_dump)],
                         trace=trace)
    ok = up(sm, log)
    view_b = sa_view(sim)
    tap.ok(ok and rc == 0, "ibsm stopped by SIGTERM (exit %s) starts again from its dump" % rc, h.tail(log, 10))
    tap.check("after the restart: the same ServiceRecords, MCMemberRecords and InformInfoRecords",
              same_view(view_a2, view_b))
    snap = sim.collect()
    mem = members(view_b)
    tap.ok(len(mem.get(0xC001, ())) == 3, "the group 0xC001 has its three members again")
    tap.check("the MFTs carry every restored group to its members", flood_ok(sim, snap, mem))
    sm.wait_idle(1.0, 10)
    sets, rereg = rereg_sets(trace)
    tap.ok(sets > 0 and rereg == 0, "no_clients_rereg: not one of %d PortInfo Sets has ClientReregister (%d)"
           % (sets, rereg))
    sm.stop()

# ---- B2. a dump with bad lines
bad_dump = scratch.path("bad-sa.dump")
good = [l for l in h.read(ibsm_dump).splitlines() if l]
svc = [l for l in good if l.startswith("Service Record:")]
grp = [i for i, l in enumerate(good) if l.startswith("MC Group")]
broken = list(good)
broken[grp[-1]] = broken[grp[-1]].replace(" qkey=0x", " qkey=0xzz")           # a group unreadable
broken.insert(0, "Servic Record: garbage")                                        # no record at all
broken = [l.replace("name='svc-a'", "name='svc-a") if "svc-a" in l else l for l in broken]  # unterminated
with open(bad_dump, "w") as f:
    f.write("\n\n".join(broken) + "\n\n")
with h.Sim(net) as sim:
    sm, log = start_ibsm(sim, "h1", "ibsm-bad", ["-F", conf("bad.conf", "sa_db_file %s\n" % bad_dump)])
    ok = up(sm, log)
    text = h.read(log)
    errs = re.findall(r"ERR  SDB-0002 %s:(\d+): " % re.escape(bad_dump), text)
    view = sa_view(sim)
    names = sorted(dict(r).get("ServiceName", "") for r in view["SR"])
    tap.ok(ok and sm.alive() and len(errs) == 3 and names == ["svc-b", "svc-c"],
           "a dump with 3 bad lines: each named FILE:LINE (lines %s), the rest loaded (services %s), the SM up"
           % (",".join(errs), names), h.tail(log, 12))
    sm.stop()


# ---- C, D. failover
def failover(honor, retries):
    res = {}
    with h.Sim(net) as sim:
        shared = sim.osmdir
        sdir = os.path.join(sim.dir, "standby")
        os.makedirs(sdir)
        m, mlog = start_ibsm(sim, "h1", "master", ["-p", "1", "-F", conf("m.conf", "sa_db_dump TRUE\n")])
        res["up"] = up(m, mlog)
        snap = sim.collect()
        h3 = guid_of(sim, snap, "h3")
        res["lid_before"] = lid_of(sim, snap, "h3")
        with open(os.path.join(sdir, "guid2lid"), "w") as f:
            f.write("0x%016x 0x%04x 0x%04x\n\n" % (h3, 200, 200))
        s_args = ["-p", "0", "--sminfo_polling_timeout", "300", "--polling_retry_number", str(retries),
                  "-F", conf("s%d.conf" % retries, "sa_db_file %s\n" % os.path.join(shared, "opensm-sa.dump"))]
        if honor:
            s_args.append("-x")
        s, slog = start_ibsm(sim, "h2", "standby", s_args, OSM_CACHE_DIR=sdir, OSM_TMP_DIR=sdir)
        res["standby"] = du.wait_text(slog, 0, r"SWP-0015 entering STANDBY", POLL_S, s.alive) is not None
        st, _ = register(sim, snap, "h3")
        j = [join(sim, "h3", OWN, create=True)[0], join(sim, "h4", OWN)[0], join(sim, "h5", IPOIB, state=2)[0]]
        res["registered"] = st == ["0x0000"] * 3 and all(j)
        dump = os.path.join(shared, "opensm-sa.dump")
        end = h.deadline(POLL_S)
        while time.time() < end and ("svc-b" not in h.read(dump) or h.read(dump).count("mcm_port") < 3 or
                                     "InformInfo" not in h.read(dump)):
            time.sleep(0.3)
        res["before"] = sa_view(sim)
        mark = du.size(slog)
        m.popen.kill()                      # SIGKILL by pid: no handover, no dump at exit
        m.popen.wait(POLL_S)
        m.stop()
        res["took"] = du.wait_text(slog, mark, r"SWP-0002 SUBNET UP", POLL_S, s.alive) is not None
        tail = du.since(slog, mark)
        res["misses"] = re.findall(r"LOOP-0010 master 0x[0-9a-f]+ did not answer poll (\d+) of (\d+)", tail)
        t = re.search(r"LOOP-0008 master 0x[0-9a-f]+ stopped answering: taking over after (\d+)", tail)
        res["after_polls"] = int(t.group(1)) if t else None
        res["after"] = sa_view(sim)
        snap = sim.collect()
        res["lid_after"] = lid_of(sim, snap, "h3")
        res["flood"] = flood_ok(sim, snap, members(res["after"]))
        res["log"] = h.tail(slog, 15)
        s.stop()
    return res


c = failover(False, 2)
tap.ok(c["up"] and c["standby"] and c["registered"],
       "failover: ibsm master on h1, ibsm standby on h2, clients register with the master", c["log"])
tap.ok(c["misses"] == [("1", "2")] and c["after_polls"] == 2,
       "polling_retry_number 2: one unanswered poll logged, the standby takes over after 2 (%s, %s)"
       % (c["misses"], c["after_polls"]), c["log"])
tap.ok(c["took"], "the standby takes over: SUBNET UP", c["log"])
tap.check("after the failover: the same ServiceRecords, MCMemberRecords and InformInfoRecords",
          same_view(c["before"], c["after"]))
tap.check("after the failover: the MFTs carry every group to its members", c["flood"])
tap.ok(c["lid_after"] == c["lid_before"] and c["lid_after"] != 200,
       "honor_guid2lid_file false: h3 keeps the LID the master gave it (%s), not the standby's guid2lid's 200"
       % c["lid_after"])
d = failover(True, 3)
tap.ok(d["up"] and d["standby"] and d["took"], "again with -x (honor_guid2lid_file): the standby takes over",
       d["log"])
tap.ok(d["misses"] == [("1", "3"), ("2", "3")] and d["after_polls"] == 3,
       "polling_retry_number 3: two unanswered polls logged, taken over after 3 (%s, %s)"
       % (d["misses"], d["after_polls"]), d["log"])
tap.ok(d["lid_after"] == 200 and d["lid_before"] != 200,
       "honor_guid2lid_file true: h3 gets LID 200 from the standby's guid2lid (was %s, now %s)"
       % (d["lid_before"], d["lid_after"]))
tap.check("with -x too, the records survive the failover", same_view(d["before"], d["after"]))
tap.done()
