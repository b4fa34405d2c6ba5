#!/usr/bin/env python3
"""34-qos.t - SL2VL and VL arbitration programming under -Q, judged by what the ports hold
(`smpquery sl2vl`, `smpquery vlarb`) and by OpenSM 3.3.23 beside it, on qos.net: CA ports, a
router port, an enhanced port 0 switch and a base port 0 switch (SM on h1).

The expected tables are computed here from the options (the port type's qos_<type>_ value,
else the qos_ value, else OpenSM's default; short lists padded with zeros; every VL fitted to
the port's OperVLs the way OpenSM masks it). Runs, each changing what the run before left:
  1. OpenSM --once without -Q: writes nothing (ibsim's defaults stay) - the reference for
     "no -Q";
  2. OpenSM --once -Q with opensm.conf A: the reference tables;
  3. ibsm --once -Q with YAML B: every table as B says;
  4. ibsm --once -Q with opensm.conf A: every table as A says, and equal to OpenSM's;
  5. the same again: every table read, none written (only what differs is written);
  6. ibsm --once without -Q: no SL2VL/VLArb Set at all, the tables stay as A left them;
  7. osmtest -f q (SL2VLTableRecords and VLArbitrationTableRecords through the SA) against
     ibsm and against OpenSM, both with A: the same tables (LIDs mapped to node GUIDs);
  8. ibsm -Q with A and the test engine qoshook (tests/plugins/qoshook.c), whose sl2vl/vlarb
     hooks claim the switch external ports: its tables there, A's everywhere else."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SM_HOST = "h1"
CONF_A = """# opensm.conf syntax, read by both SMs
qos_max_vls 8
qos_high_limit 4
qos_vlarb_high 0:4,1:0
qos_vlarb_low 0:0,1:64,2:128,3:192,4:0,5:64,6:64,7:64
qos_sl2vl 0,1,2,3,4,5,6,7,15,15,15,15,15,15,15,15
qos_ca_sl2vl 0,1,2,3,5,5,5,12,12,0,
qos_ca_vlarb_high 0:9,1:8,2:7
qos_rtr_sl2vl 7,6,5,4,3,2,1,0,7,6,5,4,3,2,1,0
qos_sw0_sl2vl 3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3
qos_sw0_vlarb_low 3:33,
qos_swe_sl2vl 1,2,3,4,5,6,7,0,1,2,3,4,5,6,7,15
qos_swe_vlarb_low 0:1,1:2,2:3,3:4,4:5,5:6,6:7,7:8,0:9
qos_swe_high_limit 255
"""
CONF_B = """# YAML, ibsm only
qos_sl2vl: "7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7"
qos_vlarb_low: "0:1,1:1,2:1,3:1,4:1,5:1,6:1,7:1"
qos_vlarb_high: "5:5"
qos_ca_sl2vl: "1,1,2,2,3,3"
"""
DEFAULTS = {
    "max_vls": "15", "high_limit": "0",
    "vlarb_high": "0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0",
    "vlarb_low": "0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4",
    "sl2vl": "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7",
}
IBSIM_SL2VL = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7]
OPERVLS = {"VL0": 1, "VL0-1": 2, "VL0-3": 4, "VL0-7": 8, "VL0-14": 15}


def parse_conf(text):
    """{key: value} of an opensm.conf or the simple YAML above."""
    out = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.match(r'(\w+)\s*:\s*"(.*)"$', line) or re.match(r"(\w+)\s+(\S+)$", line)
        out[m.group(1)] = m.group(2)
    return out


def setting(conf, typ, param):
    return conf.get("qos_%s_%s" % (typ, param)) or conf.get("qos_" + param) or DEFAULTS[param]


def fit(vl, count):
    """OpenSM's masking: VL 15 stays, VLs below the usable count stay, others masked."""
    if vl == 15 or vl < count:
        return vl
    p2 = 1
    while p2 * 2 <= count:
        p2 *= 2
    return vl & (p2 - 1)


def want_sl2vl(conf, typ, count):
    vals = [int(x) for x in setting(conf, typ, "sl2vl").split(",") if x.strip()]
    vals += [0] * (16 - len(vals))
    count = min(count, int(setting(conf, typ, "max_vls")))
    return [fit(v, count) for v in vals]


def want_vlarb(conf, typ, count, caps):
    """{'low': [(vl, w)...], 'high': [...]} cut to the port's caps."""
    count = min(count, int(setting(conf, typ, "max_vls")))
    out = {}
    for which in ("low", "high"):
        ents = [tuple(int(y) for y in x.split(":")) for x in setting(conf, typ, "vlarb_" + which).split(",")
                if x.strip()]
        ents += [(0, 0)] * (64 - len(ents))
        out[which] = [(fit(v, count), w) for v, w in ents[:caps[which]]]
    return out


def parse_sl2vl(text):
    """smpquery sl2vl -> {(in, out): [16 VLs]}."""
    rows = {}
    for m in re.finditer(r"ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})", text):
        rows[(int(m.group(1)), int(m.group(2)))] = [int(x) for x in m.group(3).split("|") if x.strip()]
    return rows


def parse_vlarb(text):
    """smpquery vlarb -> {'low': [(vl, w)...], 'high': [...]} or None."""
    out, cur = {}, None
    for line in text.splitlines():
        if "Low priority" in line:
            cur = "low"
        elif "High priority" in line:
            cur = "high"
        elif cur and line.startswith("VL"):
            vls = [int(x, 16) for x in line.split("|")[1:] if x.strip()]
        elif cur and line.startswith("WEIGHT"):
            ws = [int(x, 16) for x in line.split("|")[1:] if x.strip()]
            out[cur] = out.get(cur, []) + list(zip(vls, ws))
    return out or None


def portinfo(sim, lid, port):
    r = sim.query(["smpquery", "portinfo", str(lid), str(port)], timeout=20)
    m = re.search(r"OperVLs:\.*(\S+)", r.out)
    lo = re.search(r"VLArbLowCap:\.*(\d+)", r.out)
    hi = re.search(r"VLArbHighCap:\.*(\d+)", r.out)
    return (OPERVLS.get(m.group(1), 1) if m else 1,
            {"low": int(lo.group(1)) if lo else 0, "high": int(hi.group(1)) if hi else 0})


def read_all(sim):
    """Every table of qos.net: {label: value} and the port facts {label: (opervls, caps, type)}."""
    snap = sim.collect()
    tabs, facts = {}, {}
    for node in sorted(snap.nodes.values(), key=lambda n: n.desc):
        if node.type != "SW":
            for pn, p in sorted(node.ports.items()):
                if not p.lid:
                    continue
                typ = "rtr" if node.type == "RT" else "ca"
                vls, caps = portinfo(sim, p.lid, pn)
                label = "%s[%d]" % (node.desc.split()[0], pn)
                r = sim.query(["smpquery", "sl2vl", str(p.lid)], timeout=20)
                tabs[label + " sl2vl"] = parse_sl2vl(r.out).get((0, 0))
                r = sim.query(["smpquery", "vlarb", str(p.lid)], timeout=20)
                tabs[label + " vlarb"] = parse_vlarb(r.out)
                facts[label] = (vls, caps, typ)
            continue
        esp0 = node.desc == "sw1"  # qos.net: sw1 has an enhanced port 0, sw2 a base one
        for out in range(0, node.nports + 1):
            vls, caps = portinfo(sim, node.lid, out)
            label = "%s[%d]" % (node.desc, out)
            r = sim.query(["smpquery", "sl2vl", str(node.lid), str(out)], timeout=20)
            tabs[label + " sl2vl"] = parse_sl2vl(r.out)
            if out or esp0:
                r = sim.query(["smpquery", "vlarb", str(node.lid), str(out)], timeout=20)
                tabs[label + " vlarb"] = parse_vlarb(r.out)
            typ = "swe" if out in node.ports else "down" if out else "sw0" if esp0 else "bsp0"
            facts[label] = (vls, caps, typ)
    return tabs, facts, snap


def expected(conf, facts):
    """The tables CONF asks for, from the port facts (left out: what is not programmed - a base
    port 0, an external port whose link is down - as OpenSM)."""
    want = {}
    for label, (vls, caps, typ) in facts.items():
        if typ in ("bsp0", "down"):
            continue
        sl = want_sl2vl(conf, typ, vls)
        if label.startswith("sw"):
            want[label + " sl2vl"] = {(i, int(label[4:-1])): sl for i in range(0, 9)}
        else:
            want[label + " sl2vl"] = sl
        want[label + " vlarb"] = want_vlarb(conf, typ, vls, caps)
    return want


def compare(got, want, keys=None):
    bad = []
    for k in sorted(keys if keys is not None else want):
        if got.get(k) != want.get(k):
            bad.append("%s: got %s, want %s" % (k, got.get(k), want.get(k)))
    return not bad, ("%d tables differ: " % len(bad) + "; ".join(bad[:6])) if bad else \
        "%d tables as wanted" % len(keys if keys is not None else want)


def osmtest_tables(sim, sm_name, log, conf_path, snap_env):
    """osmtest -f c then -f q against SM_NAME (-Q, CONF): (passed, {record key: table}, detail)."""
    env = sim.env(SM_HOST, rmpp=True)
    args = ["-Q", "-F", conf_path]
    if sm_name == "opensm":
        sm = sim.start_sm(["-e", "-f", log, "-d", "2", "-s", "0"] + args, host=SM_HOST, name="opensm-q",
                          cmd=[h.which("opensm")], count=False, env=env)
    else:
        sm = sim.start_sm(["-f", log] + args, host=SM_HOST, name="ibsm-q", env=env)
    try:
        if not sm.wait_for(log, r"SUBNET UP", 90):
            return False, {}, "no SUBNET UP: " + h.tail(log)
        lid2guid = {}
        for node in sim.collect().nodes.values():
            if node.lid:
                lid2guid[node.lid] = node.guid
            for p in node.ports.values():
                if p.lid:
                    lid2guid[p.lid] = node.guid
        inv = sim.path("osmtest-%s.dat" % sm_name)
        cenv = sim.env("h2", rmpp=True)
        # -t: osmtest's own request timeout (1 s, 3 retries) is a wait too: a ceiling for a hang
        tmo = ["-t", str(int(h.patience(10) * 1000))]
        rc = sim.run(["osmtest", "-f", "c", "-i", inv] + tmo, host="h2", timeout=120, env=cenv)
        qdir = sim.path("q-" + sm_name)
        os.makedirs(qdir, exist_ok=True)
        rq = h.run([h.which("osmtest"), "-f", "q", "-i", inv] + tmo, env=cenv, cwd=qdir, timeout=120)
        ok = rc.rc == 0 and rq.rc == 0 and 'TEST "QoS: VLArb and SLtoVL" PASS' in rq.out
        recs = {}
        text = h.read(os.path.join(qdir, "qos.txt"))
        for blk in text.split("END"):
            m = re.search(r"lid\s+0x([0-9A-F]+)", blk)
            if not m:
                continue
            lid = int(m.group(1), 16)
            head = re.sub(r"lid\s+0x[0-9A-F]+", "node 0x%x" % lid2guid.get(lid, 0), blk.strip().split("\n")[0:4].__str__())
            recs[head] = re.sub(r"\s+", " ", blk.strip().split("\n", 4)[-1])
        return ok, recs, (rc.describe()[-800:] + rq.describe()[-1500:])
    finally:
        sm.stop()


tap = h.start(plan=15, timeout=900, need=("smpquery", "opensm", "osmtest"))
net = h.need_fabric(tap, "qos.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the comparison is between ibsm and OpenSM")

A, B = parse_conf(CONF_A), parse_conf(CONF_B)
with h.Sim(net, host=SM_HOST) as sim:
    conf_a, conf_b = sim.path("opensm-a.conf"), sim.path("ibsm-b.yaml")
    with open(conf_a, "w") as f:
        f.write(CONF_A)
    with open(conf_b, "w") as f:
        f.write(CONF_B)
    osm = [h.which("opensm"), "-e", "-d", "2", "-s", "0", "--once"]

    # 1-2. the reference
    r1 = sim.run(osm + ["-f", sim.path("osm-noq.log")], timeout=120)
    t_noq, facts, _ = read_all(sim)
    sw_sl2vl = [k for k in t_noq if k.endswith("sl2vl") and k.startswith("sw")]
    untouched = all(all(v == IBSIM_SL2VL for v in (t_noq[k] or {0: None}).values()) for k in sw_sl2vl)
    tap.ok(r1.rc == 0 and untouched, "OpenSM --once without -Q leaves the switches' SL2VL tables as "
           "ibsim starts them (OpenSM programs no QoS without -Q)", r1.describe()[-500:])
    r2 = sim.run(osm + ["-Q", "-F", conf_a, "-f", sim.path("osm-a.log")], timeout=120)
    t_osm, facts, _ = read_all(sim)
    want_a = expected(A, facts)
    tap.ok(r2.rc == 0, "OpenSM --once -Q with opensm.conf A runs (the reference)", r2.describe()[-500:])

    # 3. ibsm with B (YAML)
    logb = sim.path("ibsm-b.log")
    r = sim.run_sm(["--once", "-Q", "-F", conf_b, "-f", logb], timeout=120)
    t_b, facts_b, _ = read_all(sim)
    ok, why = compare(t_b, expected(B, facts_b))
    tap.ok(r.rc == 0 and ok, "ibsm -Q with YAML B: every CA, router, switch port 0 and external "
           "port table as B says (%s)" % why.split(":")[0], why + r.describe()[-300:] + h.tail(logb))

    # 4. ibsm with A
    loga = sim.path("ibsm-a.log")
    r = sim.run_sm(["--once", "-Q", "-F", conf_a, "-f", loga], timeout=120)
    t_a, facts, _ = read_all(sim)
    ok, why = compare(t_a, want_a)
    tap.ok(r.rc == 0 and ok, "ibsm -Q with opensm.conf A: every table as A says (per-type "
           "settings, defaults, partial lists, VLs fitted to OperVLs)", why + h.tail(loga))
    tap.ok(r.counts.valid and r.counts.sets(h.SL2VL) > 0 and r.counts.sets(h.VLARB) > 0,
           "ibsm wrote SL2VL and VLArb tables (B's tables were there)", r.counts.summary())
    # OpenSM writes an enhanced port 0's (input >= 1, output 0) tables with the external ports'
    # settings and only (0, 0) with qos_sw0_; ibsm gives output port 0 the port-0 settings
    # throughout (the VL a packet gets at port 0 is port 0's). Stated, then left out.
    esp0 = [k for k in t_a if k.startswith("sw1[0] ") and k.endswith("sl2vl")][0]
    vls0 = facts["sw1[0]"][0]
    osm_rows = {io: v for io, v in t_osm[esp0].items() if io[0] >= 1}
    tap.ok(osm_rows and all(v == want_sl2vl(A, "swe", vls0) for v in osm_rows.values()) and
           all(v == want_sl2vl(A, "sw0", vls0) for io, v in t_a[esp0].items()),
           "enhanced port 0, inputs 1-8: OpenSM's tables have qos_swe_sl2vl, ibsm's qos_sw0_sl2vl "
           "(the one difference, by design)", "OpenSM %s; ibsm %s" % (osm_rows, t_a[esp0]))
    t_a_cmp, t_osm_cmp = dict(t_a), dict(t_osm)
    t_a_cmp[esp0] = t_a[esp0].get((0, 0))
    t_osm_cmp[esp0] = t_osm[esp0].get((0, 0))
    ok, why = compare(t_a_cmp, t_osm_cmp, [k for k in want_a])
    tap.ok(ok, "ibsm's tables equal OpenSM's with the same file (CA, router, enhanced port 0, "
           "external ports)", why)
    base0 = [k for k in t_a if k.startswith("sw2[0] ") or facts[k.split()[0]][2] == "down"]
    tap.ok(all(t_a[k] == t_noq[k] for k in base0) and base0,
           "base port 0 (sw2) and switch ports whose link is down: not programmed, as OpenSM",
           "; ".join("%s: %s" % (k, t_a[k]) for k in base0))

    # 5. the same again: read, nothing written
    r = sim.run_sm(["--once", "-Q", "-F", conf_a, "-f", sim.path("ibsm-a2.log")], timeout=120)
    tap.ok(r.rc == 0 and r.counts.valid and r.counts.sets(h.SL2VL) == 0 and r.counts.sets(h.VLARB) == 0
           and r.counts.gets(h.SL2VL) > 0,
           "a second ibsm -Q with A reads the tables and writes none (only what differs is written)",
           r.counts.summary())

    # 6. without -Q
    r = sim.run_sm(["--once", "-f", sim.path("ibsm-noq.log")], timeout=120)
    t_n, _, _ = read_all(sim)
    tap.ok(r.rc == 0 and r.counts.valid and r.counts.sets(h.SL2VL) == 0 and r.counts.sets(h.VLARB) == 0,
           "ibsm without -Q sends no SL2VL or VLArb Set (as OpenSM)", r.counts.summary())
    ok, why = compare(t_n, t_a, list(t_a))
    tap.ok(ok, "without -Q the tables stay as A left them", why)

    # 7. osmtest -f q, both SMs
    ok_i, rec_i, why_i = osmtest_tables(sim, "ibsm", sim.path("ibsm-q.log"), conf_a, None)
    tap.ok(ok_i and rec_i, "osmtest -f q passes against ibsm (%d records)" % len(rec_i), why_i)
    ok_o, rec_o, why_o = osmtest_tables(sim, "opensm", sim.path("osm-q.log"), conf_a, None)
    bad = ["%s:\n  ibsm   %s\n  OpenSM %s" % (k, rec_i.get(k), rec_o.get(k))
           for k in sorted(set(rec_i) | set(rec_o)) if rec_i.get(k) != rec_o.get(k)]
    tap.ok(ok_o and rec_o and not bad, "osmtest -f q shows the same %d tables for ibsm and OpenSM "
           "(%d differ)" % (len(rec_o), len(bad)), "\n".join(bad[:8]) + why_o[-500:])
    # 8. an engine's hooks override the options for the ports it claims
    logh = sim.path("ibsm-hook.log")
    plugins = os.path.join(h.build_dir(), "tests", "plugins")
    r = sim.run_sm(["--once", "-Q", "-F", conf_a, "-R", "qoshook", "--plugin-dir", plugins, "-f", logh],
                   timeout=120)
    t_h, facts_h, _ = read_all(sim)
    want_h = expected(A, facts_h)
    for label, (vls, caps, typ) in facts_h.items():
        if typ != "swe":
            continue
        count = min(vls, int(setting(A, "swe", "max_vls")))
        engine_map = [fit(15 if sl == 15 else 7 - sl % 8, count) for sl in range(16)]
        want_h[label + " sl2vl"] = {(i, int(label[4:-1])): engine_map for i in range(0, 9)}
        want_h[label + " vlarb"] = {
            "high": ([(3, 99)] + [(0, 0)] * 63)[:caps["high"]],
            "low": ([(fit(v, count), 10 + v) for v in range(8)] + [(0, 0)] * 56)[:caps["low"]]}
    ok, why = compare(t_h, want_h)
    tap.ok(r.rc == 0 and ok,
           "with -R qoshook: the engine's SL2VL and VLArb on switch external ports, the options' "
           "on CA, router and port-0 tables", why + h.tail(logh))
    tap.ok(not re.search(r"AddressSanitizer|runtime error", h.read(loga) + h.read(logb) + h.read(logh)),
           "no sanitizer report", h.tail(loga))
tap.done()
