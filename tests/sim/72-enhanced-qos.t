#!/usr/bin/env python3
"""72-enhanced-qos.t - NVIDIA's enhanced QoS policy (enhanced_qos_policy_file, -Q) on tiny.net
with ibsm on h1, judged from outside: the SMPs counted on the wire and the dump
(ibsm-enhanced-qos.dump) of what each CA port was given. ibsim does not know the vendor
attribute QoSConfigSL (0xFF82): the subnet must come up all the same, with one Set per CA port
and per virtual port 0 and no more in later sweeps (the ports refused it), each refusal logged
once (VQS-0001). SIGHUP with a broken policy: POL-0012 names file:line:column and the policy
in force stays (the dump's rates unchanged, nothing sent again); SIGHUP with a changed policy:
taken (POL-0014), every port asked once more with the new rates. The bytes of the Sets and
what a port that takes them gets are checked against the fake SMA in
tests/unit/test_enhanced_qos.c (doc/enhanced-qos.md)."""
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

ATTR = 0xFF82
SM_HOST = "h1"
# tiny.net's linked CA ports: h1 0x100001, h2 0x100004, h3 0x100006, h4 0x100008
CA_PORTS = ["0x0000000000100001", "0x0000000000100004", "0x0000000000100006", "0x0000000000100008"]
POLICY = """# enhanced QoS policy of 72-enhanced-qos.t
BW_NAMES
bw1 = 50
bw2 = 25
slow = 3
BW_RULES
default = 1:bw1
0x100004 = all:bw2, SL7:slow
VPORT_BW_RULES
default = all:slow
0x100006 = 3:bw2
"""
BROKEN = POLICY.replace("0x100004 = all:bw2, SL7:slow", "0x100004 = all:bw2, SL16:slow")
CHANGED = POLICY.replace("bw1 = 50", "bw1 = 60")


def dump_rows(path):
    """{(guid, 'port'|'vport0'): ([16 rates], outcome)} from the dump."""
    rows = {}
    for line in h.read(path).splitlines():
        m = re.match(r"(0x[0-9a-f]{16}) port (\d+) (port|vport0) ([\d,]+) (\S+)$", line)
        if m:
            rows[(m.group(1), m.group(3))] = ([int(x) for x in m.group(4).split(",")], m.group(5))
    return rows


def rates(default=0, **sl):
    r = [default] * 16
    for k, v in sl.items():
        r[int(k[2:])] = v
    return r


def expected(bw1):
    want = {}
    for g in CA_PORTS:
        want[(g, "port")] = rates(sl1=bw1)
        # enhanced_qos_vport0_unlimit_default_rl TRUE (the default): vport 0 of a port without
        # a VPORT rule is unlimited; with one, the SLs it names only
        want[(g, "vport0")] = rates(sl3=25) if g.endswith("100006") else rates()
    want[("0x0000000000100004", "port")] = rates(25, sl7=3)
    return want


def wait_count(log, code, n, timeout=60):
    deadline = h.deadline(timeout)
    while time.time() < deadline:
        if h.read(log).count(code) >= n:
            return True
        time.sleep(0.2)
    return False


tap = h.start(plan=9, timeout=300)
net = h.need_fabric(tap, "tiny.net")

with h.Sim(net, host=SM_HOST) as sim:
    policy = sim.path("eqos.conf")
    dumps = sim.path("dumps")
    os.makedirs(dumps, exist_ok=True)
    dump = os.path.join(dumps, "ibsm-enhanced-qos.dump")
    with open(policy, "w") as f:
        f.write(POLICY)
    cfg = sim.path("ibsm.yaml")
    with open(cfg, "w") as f:
        f.write("enhanced_qos_policy_file: %s\n" % policy)
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-F", cfg, "-Q", "-f", log, "--dump_files_dir", dumps, "-s", "0"],
                      host=SM_HOST, name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 60) and wait_count(log, "SWP-0005", 1, 30)
    text = h.read(log)
    tap.ok(up and re.search(r"POL-0014 enhanced QoS policy read from %s: 3 bandwidth names, "
                            r"BW_RULES 1 rules and a default, VPORT_BW_RULES 1 rules and a default"
                            % re.escape(policy), text),
           "ibsm reads the policy and brings the subnet up though ibsim answers no QoSConfigSL",
           h.tail(log) + sm.output()[-1500:])
    c0 = sm.counts()
    sets0 = c0.sets(ATTR) if c0.valid else -1
    tap.ok(sets0 == 8 and re.search(r"EQS-0001 enhanced QoS: 8 QoSConfigSL Sets sent \(0 taken, 8 refused\)", text),
           "one QoSConfigSL Set to each of the 4 linked CA ports and each one's virtual port 0 "
           "(%d sent), every one refused by ibsim" % sets0,
           "\n".join(l for l in text.splitlines() if "EQS-" in l or "VQS-" in l) or h.tail(log))
    mods = sorted(mod for (a, mod, t, n) in c0.set_details(ATTR)) if c0.valid else []
    tap.ok(mods == [1, 1, 1, 1] + [0x80000000] * 4,
           "the attribute modifier is the port number (1) or bit 31 and virtual port 0", str(mods))
    rows = dump_rows(dump)
    want = expected(50)
    tap.ok(rows and {k: v[0] for k, v in rows.items()} == want and
           all(v[1] == "refused" for v in rows.values()) and text.count("VQS-0001") == 8,
           "the dump gives each port the policy's rates (default SL1 50; h2 all 25, SL7 3; vport 0 "
           "of h3 SL3 25, others unlimited), each refusal logged once",
           h.read(dump) or "no dump")

    # ---- SIGHUP with a broken policy: kept, nothing asked again
    with open(policy, "w") as f:
        f.write(BROKEN)
    n_sweeps = h.read(log).count("SWP-0005")
    os.kill(sm.pid, signal.SIGHUP)
    seen = wait_count(log, "POL-0012", 1, 30) and wait_count(log, "SWP-0005", n_sweeps + 1, 30)
    line = next((l for l in h.read(log).splitlines() if "POL-0012" in l), "")
    bad_line = BROKEN.split("\n").index("0x100004 = all:bw2, SL16:slow") + 1
    tap.ok(seen and re.search(r"%s:%d:21: SL 'SL16' is not 0-15" % (re.escape(policy), bad_line), line)
           and "the previous policy stays in force" in line,
           "SIGHUP with SL16: POL-0012 names file:%d:21 and keeps the policy in force" % bad_line,
           line or h.tail(log))
    c1 = sm.counts()
    rows = dump_rows(dump)
    tap.ok(c1.valid and c1.sets(ATTR) == sets0 and {k: v[0] for k, v in rows.items()} == want and
           all(v[1] == "left-alone" for v in rows.values()) and h.read(log).count("VQS-0001") == 8,
           "the next heavy sweep: the previous policy's rates, no Set to ports that refused, "
           "nothing logged again", "%d Sets\n%s" % (c1.sets(ATTR) if c1.valid else -1, h.read(dump)))

    # ---- SIGHUP with a changed policy: taken, every port asked once more
    with open(policy, "w") as f:
        f.write(CHANGED)
    n_read = h.read(log).count("POL-0014")
    n_sweeps = h.read(log).count("SWP-0005")
    os.kill(sm.pid, signal.SIGHUP)
    seen = wait_count(log, "POL-0014", n_read + 1, 30) and wait_count(log, "SWP-0005", n_sweeps + 1, 30)
    c2 = sm.counts()
    rows = dump_rows(dump)
    tap.ok(seen and c2.valid and c2.sets(ATTR) == sets0 + 8 and
           {k: v[0] for k, v in rows.items()} == expected(60),
           "SIGHUP with bw1 = 60: taken, 8 more Sets, the default SL1 now 60",
           "%d Sets\n%s" % (c2.sets(ATTR) if c2.valid else -1, h.read(dump)))
    rc = sm.stop()
    tap.ok(rc == 0, "ibsm stops cleanly on SIGTERM (rc %s)" % rc, h.tail(log))
    tap.ok(not re.search(r"AddressSanitizer|runtime error", h.read(log) + sm.output()),
           "no sanitizer report", sm.output()[-800:])
tap.done()
