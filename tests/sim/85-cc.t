#!/usr/bin/env python3
"""85-cc.t - congestion control (issue 30; program/cc.h) beside OpenSM 3.3.23 on the same
fabric, judged on the wire: the SMP counter's trace of every MAD (tests/tools/smpcount.c with
SMPCOUNT_TRACE_ALL=1) holds each class 0x21 Set whole.
  1-4. OpenSM -o and ibsm --once on tiny.net with congestion_control TRUE and non-default cc_*
     values (CC_Key, Control_Map, a victim mask with high and low bits, threshold, packet size,
     credit starvation, marking rate, CA port control and map, per-SL entries, a CCT of 70
     entries: two blocks): the same Sets to the same ports in the same order, byte for byte.
     Normalised: the transaction ID (each SM numbers its own; the kernel's agent number is in
     its top half) and the LIDs (the two SMs may number the ports differently: each Set is
     named by the port GUID its LID had in that SM's guid2lid); an attempt sent again after a
     timeout counts once.
  5. ibsim answers the CA Sets with status 0 and the switches' with 0x0008 (it does not keep
     what is set, so nothing is read back): ibsm names each switch once (CC-0001) and carries
     on, its sweep completes; OpenSM got the same answers.
  6. congestion_control FALSE with the same cc_* values: ibsm sends no class 0x21 MAD.
  7-8. A running ibsm: SIGHUP with a changed ccti_timer sends CACongestionSetting again to every
     CA port (the new bytes) and SwitchCongestionSetting to the switches that refused (a new
     configuration), no CCT block (unchanged); SIGHUP with nothing changed sends nothing."""
import os
import re
import signal
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

REC = 280
CC = 0x21
DATA = 8 + 64 - 16  # the management data in a Set's normalised bytes (MAD bytes 0-7, then 16-255)
CCT = ",".join("%d:%d" % (k % 4, 100 + k) for k in range(70))
CONF = """congestion_control TRUE
cc_key 0x00000000abcd1234
cc_max_outstanding_mads 16
cc_sw_cong_setting_control_map 0x1f
cc_sw_cong_setting_victim_mask 0x8000000000000000000000000000000000000000000000000000000000001ffe
cc_sw_cong_setting_credit_mask 0x06
cc_sw_cong_setting_threshold 0x9
cc_sw_cong_setting_packet_size 8
cc_sw_cong_setting_credit_starvation_threshold 0x3
cc_sw_cong_setting_credit_starvation_return_delay 1:200
cc_sw_cong_setting_marking_rate 0x0020
cc_ca_cong_setting_port_control 0x0001
cc_ca_cong_setting_control_map 0x0005
cc_ca_cong_setting_ccti_timer 0 10
cc_ca_cong_setting_ccti_timer 2 4096
cc_ca_cong_setting_ccti_increase 0 1
cc_ca_cong_setting_ccti_increase 2 3
cc_ca_cong_setting_trigger_threshold 2 7
cc_ca_cong_setting_ccti_min 0 2
cc_cct %s
""" % CCT

tap = h.start(plan=8, timeout=600, need=("opensm",))
tiny = h.need_fabric(tap, "tiny.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the comparison is between ibsm and OpenSM")


def records(trace, skip=0):
    """(direction, umad status, LID, MAD) of every class 0x21 MAD in the trace from byte SKIP."""
    data = open(trace, "rb").read() if os.path.exists(trace) else b""
    out = []
    for off in range(skip, len(data) - REC + 1, REC):
        mad = data[off + 24:off + REC]
        if mad[1] == CC:
            out.append((data[off + 12], data[off + 13], struct.unpack_from("<H", data, off + 16)[0], mad))
    return out


def guid_of_lid(osmdir):
    """LID -> port GUID from the guid2lid the SM wrote."""
    out = {}
    for line in h.read(os.path.join(osmdir, "guid2lid")).splitlines():
        w = line.split()
        if len(w) >= 3:
            for lid in range(int(w[1], 0), int(w[2], 0) + 1):
                out[lid] = int(w[0], 0)
    return out


def sets(trace, lids, skip=0):
    """[(port GUID, attr, modifier, bytes without the TID)] of the Sets sent, first attempts in
    order (an attempt again after a timeout: the same key and bytes, dropped)."""
    out, seen = [], set()
    for d, _, lid, mad in records(trace, skip):
        if d != 0 or mad[3] != 0x02:
            continue
        key = (lids.get(lid, "LID %d" % lid), struct.unpack_from(">H", mad, 16)[0],
               struct.unpack_from(">I", mad, 20)[0], mad[0:8] + mad[16:256])
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def answers(trace, lids):
    """{(port GUID, attr, modifier): MAD status} of the answers received."""
    return {(lids.get(lid), struct.unpack_from(">H", mad, 16)[0], struct.unpack_from(">I", mad, 20)[0]):
            struct.unpack_from(">H", mad, 4)[0] for d, st, lid, mad in records(trace) if d == 1 and not st}


def run_sm(sim, sm, conf, name):
    trace = sim.path("%s.trace" % name)
    env = h.with_counter(sim.env("h1"), sim.count_file(name))
    env["SMPCOUNT_TRACE"], env["SMPCOUNT_TRACE_ALL"] = trace, "1"
    path = sim.path("%s.conf" % name)
    with open(path, "w") as f:
        f.write(conf)
    argv = ([h.which("opensm"), "-e", "-o"] if sm == "opensm" else [h.ibsm_path(), "--once"])
    r = h.run(argv + ["-f", sim.path("%s.log" % name), "-F", path], env=env, cwd=sim.rundir, timeout=120)
    return r, trace, guid_of_lid(sim.osmdir)


def show(s):
    return "\n".join("%016x %04x %d %s" % (g, a, m, b.hex()) if isinstance(g, int) else str((g, a, m))
                     for g, a, m, b in s[:12])


with h.Sim(tiny, lmc=0, host="h1") as sim:
    r, trace, lids = run_sm(sim, "opensm", CONF, "opensm")
    osm = sets(trace, lids)
    osm_ans = answers(trace, lids)
    kinds = sorted(set(a for _, a, _, _ in osm))
tap.ok(r.rc == 0 and len(osm) == 2 + 4 * 3 and kinds == [0x14, 0x16, 0x17],
       "OpenSM: %d CC Sets (SwitchCongestionSetting to 2 switches, CACongestionSetting and 2 CCT "
       "blocks to 4 CA ports)" % len(osm), r.describe() + show(osm))

with h.Sim(tiny, lmc=0, host="h1") as sim:
    r, trace, lids = run_sm(sim, "ibsm", CONF, "ibsm")
    ib = sets(trace, lids)
    ib_ans = answers(trace, lids)
    log = h.read(sim.path("ibsm.log"))
    tap.ok(r.rc == 0 and sorted(k[:3] for k in ib) == sorted(k[:3] for k in osm),
           "ibsm: the same %d Sets (port GUID, attribute, modifier) as OpenSM" % len(ib),
           "ibsm\n%s\nOpenSM\n%s\n%s" % (show(ib), show(osm), r.describe()))
    diff = [(k[:3], k[3].hex(), o[3].hex()) for k in ib for o in osm if k[:3] == o[:3] and k[3] != o[3]]
    tap.ok(ib and not diff, "... byte for byte: header (but the TID), CC_Key, log data, management data",
           "\n".join("%s\n ibsm   %s\n OpenSM %s" % d for d in diff[:3]))
    tap.ok([k[:3] for k in ib] == [k[:3] for k in osm], "... in OpenSM's order (its port table's)",
           "ibsm\n%s\nOpenSM\n%s" % (show(ib), show(osm)))
    named = sorted(int(g, 16) for g in re.findall(r"WARN CC-0001 switch 0x([0-9a-f]+) .*status 0x0008", log))
    switches = sorted(k[0] for k in ib_ans if k[1] == 0x14)
    ca_ok = [k for k, st in ib_ans.items() if k[1] != 0x14 and st == 0]
    tap.ok(r.rc == 0 and "SUBNET UP" in log and named == switches and len(named) == 2
           and len(ca_ok) == 4 * 3 and ib_ans == osm_ans and "CC-0003" in log,
           "ibsim takes the CA Sets (status 0) and refuses the switches' (0x0008), as it answered "
           "OpenSM: each switch named once (CC-0001), the sweep completes",
           "%s\n%s\n%s" % (sorted(ib_ans.items()), sorted(osm_ans.items()), h.tail(sim.path("ibsm.log"))))

    r, trace, lids = run_sm(sim, "ibsm", CONF.replace("congestion_control TRUE", "congestion_control FALSE"), "off")
    n = len(records(trace))
    tap.ok(r.rc == 0 and n == 0 and os.path.exists(trace),
           "congestion_control FALSE: not one class 0x21 MAD (%d)" % n, r.describe())

# a running ibsm: SIGHUP re-sends what the new configuration changes, and nothing else
with h.Sim(tiny, lmc=0, host="h1") as sim:
    trace = sim.path("daemon.trace")
    conf = sim.path("daemon.conf")
    with open(conf, "w") as f:
        f.write(CONF)
    log = sim.path("daemon.log")
    env = sim.env("h1")
    env["SMPCOUNT_TRACE"], env["SMPCOUNT_TRACE_ALL"] = trace, "1"
    sm = sim.start_sm(["-F", conf, "-f", log, "-s", "0", "-q", "off"], host="h1", env=env, name="daemon")
    try:
        up = sm.wait_for(log, r"CC-0003", 120)
        first = os.path.getsize(trace) if os.path.exists(trace) else 0
        with open(conf, "w") as f:
            f.write(CONF.replace("cc_ca_cong_setting_ccti_timer 2 4096", "cc_ca_cong_setting_ccti_timer 2 512"))
        sm.popen.send_signal(signal.SIGHUP)
        again = sm.wait_for(log, r"CC-0003(?s:.*)CC-0003", 120)
        lids = guid_of_lid(sim.osmdir)
        new = sets(trace, lids, first)
        ca = [k for k in new if k[1] == 0x16]
        sw = [k for k in new if k[1] == 0x14]
        timer2 = [struct.unpack_from(">H", k[3], DATA + 4 + 8 * 2)[0] for k in ca]  # SL 2's CCTI_Timer
        tap.ok(up and again and len(ca) == 4 and len(sw) == 2 and len(new) == 6 and timer2 == [512] * 4,
               "SIGHUP, ccti_timer of SL 2 changed: CACongestionSetting again to the 4 CA ports (SL 2's "
               "CCTI_Timer 512), SwitchCongestionSetting to the 2 switches that refused, no CCT block",
               "%s %s %s\n%s" % (up, again, timer2, show(new)) + h.tail(log))
        second = os.path.getsize(trace) if os.path.exists(trace) else 0
        sweeps = len(re.findall(r"SWP-0005", h.read(log)))
        sm.popen.send_signal(signal.SIGHUP)
        swept = sm.wait_for(log, r"(?s:SWP-0005.*){%d}" % (sweeps + 1), 120)
        later = records(trace, second)
        tap.ok(swept and not later, "SIGHUP, nothing changed: a heavy sweep, not one class 0x21 MAD (%d)"
               % len(later), h.tail(log))
    finally:
        sm.stop()
tap.done()
