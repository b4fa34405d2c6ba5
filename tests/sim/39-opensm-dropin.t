#!/usr/bin/env python3
"""39-opensm-dropin.t - ibsm in place of OpenSM 3.3.23, with an OpenSM site's flags and files.

A. Every flag `opensm --help` lists (long and short, extracted from OpenSM's own help at run
   time) is accepted: with `-c -` each either changes a setting ibsm's template shows, or is
   named in a warning (CFG-0005/CLI-0001) saying it has no effect; none is refused.
B. OpenSM's full `opensm -c` template fed to `ibsm -F`: a simulated bring-up succeeds (the
   harness's fabric checks), and every key of the template either is one of ibsm's (its own
   `-c` lists it) or has its own log line naming FILE:LINE and the key; sa_key is ibsm's (no
   ERROR line); no key is called unknown.
C. A test root (IBSM_SYSCONFDIR) with OpenSM's files (/etc/opensm/opensm.conf,
   partitions.conf) and, under /etc/ibsm, only what the package installs: ibsm.yaml, the
   template with every key commented out (etc/ibsm.yaml). ibsm reads OpenSM's two files (the
   log names them, and says ibsm.yaml sets no key), and the fabric shows it: every CA port has
   LMC 1 (smpquery portinfo) and the partition's P_Key (smpquery pkeys).
D. Logs: -D 0x1 writes errors and warnings only; -f stdout is standard output.
E. A --fabric dry run writes no dump anywhere unless asked; with --dump_files_dir it does.
   (-Z/part_enforce sets PortInfo's PartitionEnforcement bits, which ibsim does not keep, for
   OpenSM either: judged in tests/unit/test_pkey.c and test_config.c.)
G. -I (sm_inactive from the configuration file): the SM answers SMInfo as NOTACTIVE (sminfo at
   its port) and sends not one Set (SMP counter); SIGHUP with sm_inactive off: it becomes
   MASTER and brings the fabric up.
I. -d 0 (ignore_other_sm): beside a priority-15 OpenSM master, ibsm --once is master anyway.
H. syslog_log_level and log_prefix: lines reach syslog (a /dev/log socket of the test's own,
   in a private mount namespace; root, as in CI) with facility daemon and their priority.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 60
tap = h.start(plan=29, timeout=900, need=("opensm", "smpquery", "sminfo"))
scratch = tempfile.mkdtemp(prefix="ibsm-dropin.")
TINY = h.fabric("tiny.net")


def offline_env(**extra):
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "OSM_TMP_DIR", "OSM_CACHE_DIR", "IBSM_SYSCONFDIR"):
        env.pop(k, None)
    env["IBSM_SYSCONFDIR"] = os.path.join(scratch, "empty-etc")  # no file of this machine's
    env.update(extra)
    return env


def ibsm(args, **extra):
    return h.run(h.sm_cmd() + args, env=offline_env(**extra), cwd=scratch, timeout=60)


def template_values(text):
    """ibsm's -c output -> {key: value line}"""
    return {m.group(1): m.group(0) for m in re.finditer(r"(?m)^#? ?([a-z][a-z0-9_]*):.*$", text)}


# ---- A. every flag of opensm --help
helptext = h.run(["opensm", "--help"], timeout=30).text
flags = []   # (name, takes_arg)
for m in re.finditer(r"(?m)^(--[A-Za-z][\w-]*)((?:, -[\w?])*)\s*(<[^>]*>|\[[^\]]*\])?", helptext):
    names = [m.group(1)] + re.findall(r"-[\w?]", m.group(2) or "")
    for n in names:
        flags.append((n, bool(m.group(3))))
tap.ok(len(flags) >= 90, "opensm --help lists %d flag names (long and short)" % len(flags),
       helptext[:600])
# a value each flag's argument can take that differs from the default
SAMPLE = {"--guid": "0x2", "-g": "0x2", "--lmc": "1", "-l": "1", "--priority": "5", "-p": "5",
          "--subnet_prefix": "0xfe80000000000001", "--smkey": "0x2", "-k": "0x2",
          "--routing_engine": "updn", "-R": "updn", "--lash_start_vl": "1", "--sm_sl": "1",
          "--nue_max_num_vls": "2", "--scatter-ports": "5", "--max_reverse_hops": "2", "-H": "2",
          "--sweep": "5", "-s": "5", "--timeout": "100", "-t": "100", "--retries": "5",
          "--maxsmps": "8", "-n": "8", "--console": "local", "-q": "local", "--console-port": "10001",
          "-C": "10001", "--log_file": "stdout", "-f": "stdout", "--log_limit": "5", "-L": "5",
          "--part_enforce": "in", "-Z": "in", "--cc_key": "0x5", "--perfmgr_sweep_time_s": "5",
          "--log_prefix": "x", "--D": "0x1", "-D": "0x1", "--debug": "2", "-d": "2",
          "--dump_files_dir": "/tmp/x"}
SPECIAL = {"--help", "-h", "-?", "--version", "--config", "-F", "--create-config", "-c"}
base = ibsm(["-c", "-"])
base_t = template_values(base.out)
refused, silent = [], []
for name, takes in flags:
    if name in SPECIAL:
        continue
    args = [name] + ([SAMPLE.get(name, "/nonexistent/x")] if takes else [])
    r = ibsm(args + ["-c", "-"])
    if r.rc != 0 or "CFG-0002" in r.text:
        refused.append("%s: rc %s %s" % (" ".join(args), r.rc, r.err.strip()[-200:]))
        continue
    changed = template_values(r.out) != base_t
    named = re.search(r"(WARN CFG-0005|WARN CLI-0001) command line: %s\b" % re.escape(name), r.text)
    if not changed and not named:
        silent.append(" ".join(args))
tap.ok(not refused, "every flag of opensm --help is accepted", "; ".join(refused[:8]))
tap.ok(not silent, "each changes a setting ibsm shows in -c, or a warning names it as without effect",
       "; ".join(silent[:8]))
r = ibsm(["--help"])
tap.ok(r.rc == 0 and "--honor_guid2lid" in r.out and "--part_enforce" in r.out,
       "ibsm --help exits 0 and lists OpenSM's flags", r.describe())

# ---- B. OpenSM's full template, as an OpenSM site has it
osm_conf = os.path.join(scratch, "opensm.conf")
r = h.run(["opensm", "-c", osm_conf], timeout=30)
text = h.read(osm_conf)
osm_keys = {}
for i, line in enumerate(text.splitlines(), 1):
    m = re.match(r"^([a-z][a-z0-9_]*)\s", line)
    if m:
        osm_keys[m.group(1)] = i
tap.ok(len(osm_keys) > 150, "opensm -c writes its template (%d keys)" % len(osm_keys), r.describe())
ibsm_keys = set(base_t)
with h.Sim(h.fabric("ftree-small.net")) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["-F", osm_conf, "--once", "-f", log, "--dump_files_dir", sim.osmdir], timeout=120)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm -F <opensm -c output> --once exits 0",
           r.describe() + h.tail(log))
    h.fabric_checks(tap, sim, diag_log=log)
    logtext = h.read(log)
    missing = []
    for key, line in sorted(osm_keys.items(), key=lambda kv: kv[1]):
        if key in ibsm_keys:
            continue
        if not re.search(r"(INFO CFG-0003|WARN CFG-0005|ERR  CFG-0006) %s:%d:1: %s " %
                         (re.escape(osm_conf), line, key), logtext):
            missing.append("%s (line %d)" % (key, line))
    used = [k for k in osm_keys if k in ibsm_keys]
    tap.ok(not missing, "every key without effect (%d) has its line naming file:line; %d keys are ibsm's"
           % (len(osm_keys) - len(used), len(used)), "no line for: " + ", ".join(missing[:10]))
    tap.ok("sa_key" in ibsm_keys and "CFG-0006" not in logtext,
           "sa_key is a key of ibsm's (its SA checks SA_Key): no ERROR line calls it not in force",
           h.tail(log))
    tap.ok("CFG-0007" not in logtext, "no key of OpenSM 3.3.23 is called unknown",
           "\n".join(l for l in logtext.splitlines() if "CFG-0007" in l)[:800])

# ---- C. OpenSM's files where they are, nothing of ibsm's
root = os.path.join(scratch, "etc")
os.makedirs(os.path.join(root, "opensm"))
os.makedirs(os.path.join(root, "ibsm"))
own_yaml = os.path.join(root, "ibsm", "ibsm.yaml")   # as the package installs it
with open(own_yaml, "w") as f:
    f.write(h.read(os.path.join(h.REPO, "etc", "ibsm.yaml")))
PKEY = 0x8012
with open(os.path.join(root, "opensm", "opensm.conf"), "w") as f:
    f.write("# an OpenSM site's file\nlmc 1\nsweep_interval 0\n")
with open(os.path.join(root, "opensm", "partitions.conf"), "w") as f:
    f.write("Default=0x7fff, ipoib : ALL=full ;\nstorage=0x%04x : ALL=full ;\n" % (PKEY & 0x7fff))
with h.Sim(TINY) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", log], env=sim.env(IBSM_SYSCONFDIR=root), timeout=120)
    logtext = h.read(log)
    tap.ok(r.rc == 0, "with only /etc/opensm files, ibsm --once exits 0", r.describe() + h.tail(log))
    tap.ok(re.search(r"LOC-0001 configuration file: %s \(OpenSM's; %s sets no key" %
                     (re.escape(os.path.join(root, "opensm", "opensm.conf")), re.escape(own_yaml)), logtext) and
           re.search(r"LOC-0002 partition_config_file: %s \(OpenSM's" %
                     re.escape(os.path.join(root, "opensm", "partitions.conf")), logtext),
           "the log names OpenSM's opensm.conf (the packaged ibsm.yaml sets no key) and partitions.conf as "
           "the files used", h.tail(log))
    snap = sim.collect()
    lmcs, keys = {}, {}
    for p in snap.ca_ports():
        if not p.lid:
            continue
        pi = sim.run(["smpquery", "portinfo", str(p.lid)], timeout=20)
        m = re.search(r"(?m)^LMC:\.*(\d+)", pi.out)
        lmcs[p.lid] = int(m.group(1)) if m else None
        pk = sim.run(["smpquery", "pkeys", str(p.lid)], timeout=20)
        keys[p.lid] = [int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{4})", pk.out)]
    tap.ok(lmcs and all(v == 1 for v in lmcs.values()),
           "opensm.conf's lmc 1 is in force on every CA port (smpquery portinfo)", str(lmcs))
    tap.ok(keys and all(PKEY in v for v in keys.values()),
           "partitions.conf's P_Key 0x%04x is in every CA port's table (smpquery pkeys)" % PKEY,
           str({k: [hex(x) for x in v] for k, v in keys.items()}))

# ---- D. log flags and -f stdout
bad = os.path.join(scratch, "typo.yaml")
with open(bad, "w") as f:
    f.write("lmc: 0\nrouting_engin: updn\n")
r = ibsm(["--fabric", TINY, "-o", "-F", bad, "-D", "0x1", "-f", "stdout"])
lines = [l for l in r.out.splitlines() if l.strip()]
tap.ok(r.rc == 0 and lines and not [l for l in lines if " INFO " in l],
       "-D 0x1 -f stdout: lines on standard output, not one INFO line", r.describe())
tap.ok(re.search(r"WARN CFG-0007 %s:2:1: unknown key 'routing_engin' ignored .*did you mean "
                 r"'routing_engine'\?" % re.escape(bad), r.out),
       "an unknown key is a warning with file:line:col (the start goes on) and the near key", r.describe())
r = ibsm(["--fabric", TINY, "-o", "-f", "stdout", "-D", "0x3"])
tap.ok(r.rc == 0 and "INFO SWP-0003" in r.out, "-D 0x3 -f stdout: the INFO lines on standard output",
       r.describe())

# ---- E. a dry run writes dumps only where asked
dry = os.path.join(scratch, "dry")
os.makedirs(dry)
live = os.path.join(scratch, "live-dumps")
os.makedirs(live)
with open(os.path.join(scratch, "live.conf"), "w") as f:
    f.write("dump_files_dir %s\n" % live)
r = h.run(h.sm_cmd() + ["-F", os.path.join(scratch, "live.conf"), "--fabric", TINY, "-o", "-f", "-",
                        "-D", "0x43"], env=offline_env(), cwd=dry, timeout=60)
tap.ok(r.rc == 0 and not os.listdir(live) and not os.listdir(dry) and "CFG-0011" in r.text,
       "--fabric with the live SM's dump_files_dir in its file: nothing written there or in the cwd",
       r.describe() + " live: %s cwd: %s" % (os.listdir(live), os.listdir(dry)))
asked = os.path.join(scratch, "asked")
r = ibsm(["-F", os.path.join(scratch, "live.conf"), "--fabric", TINY, "-o", "-f", "-", "-D", "0x43",
          "--dump_files_dir", asked])
tap.ok(r.rc == 0 and os.path.exists(os.path.join(asked, "opensm-subnet.lst")) and
       os.path.exists(os.path.join(asked, "opensm.fdbs")),
       "--fabric --dump_files_dir DIR: the dumps are written to DIR", r.describe())

# ---- G. -I: NOTACTIVE until a SIGHUP turns it off
with h.Sim(TINY) as sim:
    log = sim.path("ibsm.log")
    r = sim.run_sm(["--once", "-f", sim.path("first.log")], timeout=120)   # LIDs to address ibsm by
    snap = sim.collect()
    me = [p for p in snap.ca_ports() if p.guid == 0x100001][0]
    conf = sim.path("inactive.yaml")
    with open(conf, "w") as f:
        f.write("sm_inactive: true\nsweep_interval: 0\n")
    sm = sim.start_sm(["-F", conf, "-f", log, "-p", "15"], host="h1")
    said = sm.wait_for(log, r"SWP-0019", POLL_S)
    info, ir = None, None
    end = h.deadline(POLL_S)
    while time.time() < end:
        info, ir = sim.sminfo("h3", me.lid)
        if info and info[0] == me.guid:
            break
        time.sleep(0.3)
    tap.ok(said and info and info[0] == me.guid and info[2] == 0,
           "-I (sm_inactive): SMInfo at ibsm's port answers state 0 NOTACTIVE", (ir.text if ir else "")
           + h.tail(log))
    time.sleep(2)  # an observation window: what must not happen
    c = sm.counts()
    tap.ok(c is not None and c.sets() == 0, "a NOTACTIVE ibsm sends not one Set SMP",
           c.summary() if c else "no counts")
    with open(conf, "w") as f:
        f.write("sm_inactive: false\nsweep_interval: 0\n")
    os.kill(sm.pid, signal.SIGHUP)
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    info, ir = sim.sminfo("h3", me.lid)
    tap.ok(up and info and info[2] == 3, "SIGHUP with sm_inactive off: SUBNET UP and SMInfo MASTER",
           (ir.text if ir else "") + h.tail(log))
    sm.stop()

# ---- I. -d 0: OpenSM's "ignore other SM nodes"
with h.Sim(TINY) as sim:
    osm_log = sim.path("opensm.log")
    osm = sim.start_sm(["-e", "-f", osm_log, "-d", "2", "-s", "0", "-p", "15"], host="h1",
                       cmd=[h.which("opensm")], name="opensm", count=False)
    up = osm.wait_for(osm_log, r"SUBNET UP", POLL_S)
    r1 = sim.run_sm(["--once", "-f", sim.path("a.log")], host="h3", timeout=120)
    r2 = sim.run_sm(["--once", "-d", "0", "-f", sim.path("b.log")], host="h3", timeout=120)
    tap.ok(up and r1.rc == 2 and r2.rc == 0 and "SWP-0020" in h.read(sim.path("b.log")) and
           r2.counts.sets() > 0,
           "beside a priority-15 OpenSM master, ibsm --once stands by (exit 2) but with -d 0 is master "
           "(exit 0, %d Sets)" % (r2.counts.sets() if r2.counts.valid else -1),
           r1.describe() + r2.describe() + h.tail(sim.path("b.log")))
    osm.stop()

# ---- H. syslog
SYSLOG_CHILD = r'''
import os, socket, subprocess, sys, ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
MS_PRIVATE, MS_REC = 1 << 18, 16384
if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
    sys.exit("mount --make-rprivate: %s" % os.strerror(ctypes.get_errno()))
if libc.mount(b"tmpfs", b"/dev", b"tmpfs", 0, None) != 0:
    sys.exit("mount tmpfs /dev: %s" % os.strerror(ctypes.get_errno()))
os.mknod("/dev/null", 0o666 | 0o020000, os.makedev(1, 3))
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
# read while it runs: a datagram socket queues few messages (net.unix.max_dgram_qlen)
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
s.settimeout(0.2)
got = []
end = time.time() + 50 * float(os.environ.get("IBSM_TEST_SLOW") or 1)  # the harness's patience
while time.time() < end:
    try:
        got.append(s.recv(4096).decode(errors="replace"))
    except socket.timeout:
        if p.poll() is not None:
            break
if p.poll() is None:
    p.kill()
print("RC %s" % p.wait())
for g in got:
    print(g.replace("\n", " "))
'''
if os.geteuid() != 0:
    tap.ok(False, "syslog: needs root (a private mount namespace for /dev/log), as CI runs")
    tap.ok(False, "syslog: needs root")
else:
    sconf = os.path.join(scratch, "syslog.yaml")
    with open(sconf, "w") as f:
        f.write("syslog_log_level: 0x3\nlog_prefix: ibsm-t\n")
    r = h.run(["unshare", "--mount", sys.executable, "-c", SYSLOG_CHILD] + h.sm_cmd() +
              ["-F", sconf, "--fabric", TINY, "-o", "-f", os.path.join(scratch, "s.log")],
              env=offline_env(), cwd=scratch, timeout=60)
    tap.ok("RC 0" in r.out and re.search(r"<30>.*ibsm-t\[\d+\]: INFO SWP-0003 offline", r.out),
           "syslog_log_level 0x3: INFO lines reach syslog as daemon.info under log_prefix", r.describe())
    with open(sconf, "w") as f:
        f.write("syslog_log_level: 0x1\nlog_prefix: ibsm-t\nno_such: 1\n")
    r = h.run(["unshare", "--mount", sys.executable, "-c", SYSLOG_CHILD] + h.sm_cmd() +
              ["-F", sconf, "--fabric", TINY, "-o", "-f", os.path.join(scratch, "s.log")],
              env=offline_env(), cwd=scratch, timeout=60)
    tap.ok("RC 0" in r.out and re.search(r"<28>.*ibsm-t\[\d+\]: WARN CFG-0007", r.out) and
           "INFO" not in r.out, "syslog_log_level 0x1: warnings as daemon.warning, no INFO line",
           r.describe())
tap.done()
