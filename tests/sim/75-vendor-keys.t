#!/usr/bin/env python3
"""75-vendor-keys.t - OpenSM keys that were "no effect" in ibsm (issue 30, item 8), judged on the
wire (the SMP counter's trace, tests/tools/smpcount.c) and read back with infiniband-diags,
beside OpenSM 3.3.23 on the same fabric:
  1. fdr10: ibsim's nodes report DeviceID 0, which neither SM sends MlnxExtPortInfo (0xFF90)
     to: not one such MAD. With tests/tools/smp_rewrite.so making every node a ConnectX-3 (0x1003)
     and every MlnxExtPortInfo answer claim FDR10 in LinkSpeedSupported, both SMs send a Get
     to the same ports and a Set (StateChangeEnable 1, LinkSpeedEnabled FDR10) to the same
     ports; `smpquery MEPI` then reads LinkSpeedEnabled 1 (ibsim keeps what is set). A second
     ibsm run sends Gets and no Set; `fdr10 2` sets LinkSpeedEnabled 0 (read back 0).
  2. lmc_esp0: with -l 1 on qos.net, TRUE gives the enhanced switch port 0 of sw1 LMC 1 and an
     even base LID (read with smpquery), the base port 0 of sw2 LMC 0, as OpenSM does; FALSE
     leaves sw1 at LMC 0.
  3. m_key_lookup: ibsim keeps no M_Key, so the keys are judged on the wire and in the files:
     ibsm with m_key (one key everywhere, as OpenSM) writes guid2mkey and neighbors equal to
     OpenSM's (ibsim answers every PortInfo with M_Key 0 and ProtectBits 0, and both SMs record
     the key a port shows); started again with a guid2mkey naming another key for h2's port, it
     presents that key to h2 (the SMP trace's M_Key field) and records what h2 shows
     afterwards; with m_key_lookup FALSE it never presents the old key and leaves the file."""
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

REC = 280
EPI = 0xFF90
OLD_KEY = 0x0123456789abcdef
M_KEY = 0x1234

tap = h.start(plan=16, timeout=600, need=("opensm", "smpquery"))
tiny = h.need_fabric(tap, "tiny.net")
qos = h.need_fabric(tap, "qos.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the comparison is between ibsm and OpenSM")


def mads(trace):
    """(direction, method, attr, mod, DR path, M_Key, data) of every SMP in the trace."""
    out = []
    data = open(trace, "rb").read() if os.path.exists(trace) else b""
    for off in range(0, len(data) - REC + 1, REC):
        mad = data[off + 24:off + REC]
        if mad[1] not in (0x01, 0x81):
            continue
        out.append((data[off + 12], mad[3], struct.unpack_from(">H", mad, 16)[0],
                    struct.unpack_from(">I", mad, 20)[0], tuple(mad[129:129 + mad[7]]),
                    struct.unpack_from(">Q", mad, 24)[0], bytes(mad[64:128])))
    return out


def epi(trace, method):
    """{(DR path, modifier): data} of the MlnxExtPortInfo requests of METHOD sent."""
    return {(m[4], m[3]): m[6] for m in mads(trace) if m[0] == 0 and m[1] == method and m[2] == EPI}


def run_sm(sim, sm, args=(), conf=None, shim=True, name=None):
    """One SM run to completion on SIM from h1 (OpenSM -o, ibsm --once), its trace recorded;
    SHIM: every node a ConnectX-3 whose MlnxExtPortInfo claims FDR10. Returns (Result, trace)."""
    name = name or sm
    trace = sim.path("%s.trace" % name)
    if os.path.exists(trace):
        os.unlink(trace)
    env = h.with_counter(sim.env("h1"), sim.count_file(name))
    if shim:
        env["LD_PRELOAD"] = os.path.join(h.build_dir(), "tests", "tools", "smp_rewrite.so") + " " + env["LD_PRELOAD"]
        env["DEVID"], env["EPI_SUPPORTED"] = "0x1003", "0x1"
    env["SMPCOUNT_TRACE"] = trace
    argv = ([h.which("opensm"), "-e", "-o"] if sm == "opensm" else [h.ibsm_path(), "--once"])
    argv += ["-f", sim.path("%s.log" % name)] + list(args)
    if conf is not None:
        path = sim.path("%s.conf" % name)
        with open(path, "w") as f:
            f.write(conf)
        argv += ["-F", path]
    return h.run(argv, env=env, cwd=sim.rundir, timeout=120), trace


def mepi_enabled(sim, path, port):
    r = sim.run(["smpquery", "-D", "MEPI", path, str(port)], host="h1", timeout=20)
    for line in r.out.splitlines():
        k, _, v = line.partition(":")
        if k.strip() == "LinkSpeedEnabled":
            try:
                return int(v.strip(". "), 0)
            except ValueError:
                break
    return r.text.strip()[-200:]


# 1. fdr10
with h.Sim(tiny, lmc=0, host="h1") as sim:
    r, trace = run_sm(sim, "ibsm", shim=False, name="plain")
    n = len([m for m in mads(trace) if m[2] == EPI])
    tap.ok(r.rc == 0 and n == 0, "ibsim's nodes (DeviceID 0): not one MlnxExtPortInfo MAD (%d)" % n, r.describe())
with h.Sim(tiny, lmc=0, host="h1") as sim:
    r, trace = run_sm(sim, "opensm")
    osm_gets, osm_sets = epi(trace, 0x01), epi(trace, 0x02)
tap.ok(r.rc == 0 and len(osm_gets) >= 8 and len(osm_sets) >= 8,
       "OpenSM, ConnectX-3 nodes: %d MlnxExtPortInfo Gets, %d Sets" % (len(osm_gets), len(osm_sets)), r.describe())
with h.Sim(tiny, lmc=0, host="h1") as sim:
    r, trace = run_sm(sim, "ibsm")
    gets, sets = epi(trace, 0x01), epi(trace, 0x02)
    log = h.read(sim.path("ibsm.log"))
    tap.ok(r.rc == 0 and sorted(gets) == sorted(osm_gets),
           "ibsm: a MlnxExtPortInfo Get to the ports OpenSM asks (%d)" % len(gets),
           "ibsm %s\nOpenSM %s\n%s" % (sorted(gets), sorted(osm_gets), r.describe()))
    tap.ok(sorted(sets) == sorted(osm_sets),
           "ibsm: a Set to the ports OpenSM sets (%d)" % len(sets), "ibsm %s\nOpenSM %s" % (sorted(sets), sorted(osm_sets)))
    bad = [k for k, d in sets.items() if d[3] != 1 or d[11] != 1 or d[7] != 1 or d != osm_sets.get(k, d)]
    tap.ok(sets and not bad, "every Set: StateChangeEnable 1, LinkSpeedEnabled FDR10, the rest as read "
           "(OpenSM's bytes)", str(bad[:4]))
    seen = (mepi_enabled(sim, "0,1", 2), mepi_enabled(sim, "0,1", 7), mepi_enabled(sim, "0", 1))
    tap.ok(seen == (1, 1, 1), "smpquery MEPI: LinkSpeedEnabled 1 on sw1 ports 2 and 7 and h1 "
           "(%s)" % (seen,), h.tail(sim.path("ibsm.log")))
    r, trace = run_sm(sim, "ibsm", name="again")
    tap.ok(r.rc == 0 and len(epi(trace, 0x01)) == len(gets) and not epi(trace, 0x02),
           "ibsm again: the Gets, no Set (the ports hold FDR10)", "%d Sets" % len(epi(trace, 0x02)))
    r, trace = run_sm(sim, "ibsm", conf="fdr10 2\n", name="off")
    off = epi(trace, 0x02)
    seen = (mepi_enabled(sim, "0,1", 2), mepi_enabled(sim, "0", 1))
    tap.ok(r.rc == 0 and len(off) == len(sets) and all(d[11] == 0 for d in off.values()) and seen == (0, 0),
           "fdr10 2: a Set of LinkSpeedEnabled 0 to each port, read back 0 (%s)" % (seen,), r.describe())

# 2. lmc_esp0
def switch0(sm, value):
    with h.Sim(qos, lmc=1, host="h1") as sim:
        r, _ = run_sm(sim, sm, args=("-l", "1"), conf="lmc_esp0 %s\n" % value, shim=False)
        out = []
        for path in ("0,1", "0,1,7"):  # sw1 (enhanced port 0), sw2 (base port 0)
            q = sim.run(["smpquery", "-D", "portinfo", path, "0"], host="h1", timeout=20)
            v = dict((k.strip(), val.strip(". ")) for k, _, val in (ln.partition(":") for ln in q.out.splitlines()))
            out.append((int(v.get("Lid", "0") or 0), v.get("LMC")))
        return r, out


r, ib = switch0("ibsm", "TRUE")
tap.ok(r.rc == 0 and ib[0][1] == "1" and ib[0][0] % 2 == 0 and ib[0][0] > 0 and ib[1][1] == "0",
       "lmc_esp0 TRUE, -l 1: sw1's enhanced port 0 LMC 1 at an even LID, sw2's base port 0 LMC 0 (%s)" % ib,
       r.describe())
r, osm = switch0("opensm", "TRUE")
tap.ok([x[1] for x in osm] == [x[1] for x in ib], "OpenSM gives the same LMCs (%s)" % osm, r.describe())
r, ib_off = switch0("ibsm", "FALSE")
tap.ok(r.rc == 0 and ib_off[0][1] == "0", "lmc_esp0 FALSE: sw1's port 0 LMC 0 (%s)" % ib_off, r.describe())


# 3. m_key_lookup
def db(path):
    try:
        with open(path) as f:
            return sorted(ln.strip() for ln in f if ln.strip())
    except OSError:
        return None


conf = "m_key 0x%x\nm_key_per_port FALSE\n" % M_KEY
with h.Sim(tiny, lmc=0, host="h1") as sim:
    run_sm(sim, "opensm", conf=conf.replace("m_key_per_port FALSE\n", ""), shim=False)
    osm_g2m, osm_nbr = db(os.path.join(sim.osmdir, "guid2mkey")), db(os.path.join(sim.osmdir, "neighbors"))
with h.Sim(tiny, lmc=0, host="h1") as sim:
    r, _ = run_sm(sim, "ibsm", conf=conf, shim=False)
    g2m, nbr = db(os.path.join(sim.osmdir, "guid2mkey")), db(os.path.join(sim.osmdir, "neighbors"))
    tap.ok(r.rc == 0 and g2m and g2m == osm_g2m, "guid2mkey as OpenSM writes it (%d ports, m_key 0x%x set)" %
           (len(g2m or []), M_KEY), "ibsm %s\nOpenSM %s" % (g2m, osm_g2m))
    tap.ok(nbr and nbr == osm_nbr, "neighbors as OpenSM writes it (%d lines)" % len(nbr or []),
           "ibsm %s\nOpenSM %s" % (nbr, osm_nbr))
    h2 = "0x0000000000100004"   # h2's port GUID (tiny.net: caguid 0x100000)
    lines = [("%s 0x%016x" % (h2, OLD_KEY)) if ln.startswith(h2) else ln for ln in g2m]
    for lookup in ("TRUE", "FALSE"):
        with open(os.path.join(sim.osmdir, "guid2mkey"), "w") as f:
            f.write("\n\n".join(lines) + "\n\n")
        r, trace = run_sm(sim, "ibsm", conf=conf + "m_key_lookup %s\n" % lookup, shim=False,
                          name="lookup-%s" % lookup)
        to_h2 = [m for m in mads(trace) if m[0] == 0 and m[4] == (1, 2) and m[2] == 0x15]
        old = [m for m in mads(trace) if m[0] == 0 and m[5] == OLD_KEY]
        after = db(os.path.join(sim.osmdir, "guid2mkey")) or []
        if lookup == "TRUE":
            tap.ok(r.rc == 0 and to_h2 and to_h2[0][5] == OLD_KEY and all(m[4] == (1, 2) for m in old),
                   "m_key_lookup TRUE: h2's port is first sent the key guid2mkey names (and no other port is)",
                   "%s\n%s" % ([hex(m[5]) for m in to_h2], r.describe()))
            tap.ok("%s 0x%016x" % (h2, 0) in after, "... and guid2mkey then records the key h2 shows "
                   "(0: ibsim keeps none), as OpenSM", str(after))
        else:
            tap.ok(r.rc == 0 and to_h2 and not old and "%s 0x%016x" % (h2, OLD_KEY) in after,
                   "m_key_lookup FALSE: the old key is never presented, guid2mkey neither read nor written",
                   "%d SMPs with it\n%s" % (len(old), after))
tap.done()
