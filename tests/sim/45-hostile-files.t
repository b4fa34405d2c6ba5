#!/usr/bin/env python3
"""45-hostile-files.t - every file an administrator names is read through the core's capped,
non-blocking, regular-files-only reader, the plugins' files included (ABI 1.3 read_file): a
FIFO nobody writes, /dev/zero and a sparse file one byte over the 16 MiB cap, named by every
file-valued key an engine or the chain orchestrator reads (torus_config, root_guid_file for
updn and ftree, cn_guid_file, io_guid_file, port_prof_ignore_file, rch_policy_file,
pgrp_policy_file, topo_policy_file, a chain step's config: file) and by -P and -Y.
- At start (offline, --fabric --once): refused at once, the message naming the key and the
  file; an engine that cannot read its file declines or goes on without it and the run routes
  (exit 0); the chain orchestrator refuses to start (exit 1..127).
- At start on ibsim: torus-2QoS with a FIFO torus_config (read on the routing thread) comes
  up by the fallback, the SA answers, SIGTERM ends it within a second.
- SIGHUP on one running daemon: for each key and each kind, the file is swapped for the hostile
  one (the -F file names it) and SIGHUP sent: the log says so at once, naming key and file,
  the daemon runs on and its SA answers (saquery from another host); SIGTERM at the end makes
  it exit within a second.
- --plugin-dir given twice: both directories are searched, in the order given (an engine found
  only in the first one loads; of two x.so the first one's is run), before the build tree.
- -e -f NAME where NAME is a second hard link of another file: refused naming it, the other
  file not emptied (as a symbolic link is, 22-start-hardening).
Every run is bounded: a reader that blocks fails its test instead of hanging here."""
import os
import re
import shutil
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

BOUND = 20          # seconds any one step may take before it counts as blocked
AT_ONCE = 5.0       # an offline start refusing a file: well under a second in practice
TERM_S = 1.0        # SIGTERM to exit
CAP = 16 << 20

TORUS_CONF = """torus 4 4 1
xp_link 0x40000 0x40001
xm_link 0x40000 0x40003
yp_link 0x40000 0x40004
ym_link 0x40000 0x4000c
"""
QOS = ["qos TRUE", "qos_vlarb_high 0:0", "qos_vlarb_low 0:32,1:32,2:32,3:32,4:32,5:32,6:32,7:32",
       "qos_ca_vlarb_low 0:32,1:32", "qos_sw0_vlarb_low 0:32,1:32", "qos_rtr_vlarb_low 0:32,1:32"]
RCH = "unicast-step\nid: 1\nengine: minhop\nend-unicast-step\n"
PGRP = "port-group\nname: hosts\nnode-name: ^h\nend-port-group\n"
TOPO = "topology\nid: 1\nsw-grp: ALL_SWITCHES\nhca-grp: hosts\nend-topology\n"

tap = h.start(plan=3 * 10 + 3 + 2 + 3 + 3 * 12 + 1, timeout=900, need=("saquery",))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: these are ibsm's own messages")
torus = h.need_fabric(tap, "torus-4x4.net")
scratch = h.Scratch()


def write(name, text):
    p = scratch.path(name)
    with open(p, "w") as f:
        f.write(text)
    return p


def make_hostile(path, kind):
    """PATH becomes a FIFO, a symlink to /dev/zero or a sparse file one byte over the cap."""
    if os.path.lexists(path):
        os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        os.symlink("/dev/zero", path)
    else:
        with open(path, "wb") as f:
            f.truncate(CAP + 1)
    return path


KINDS = [("fifo", "a FIFO", r"a FIFO"), ("zero", "/dev/zero", r"a character device"),
         ("big", "a file over 16 MiB", r"larger than 16 MiB")]
good_rch, good_pgrp, good_topo = write("rch.conf", RCH), write("pgrp.conf", PGRP), write("topo.conf", TOPO)
good_torus = write("torus.conf", TORUS_CONF)


def step_rch(path):
    return write("step-rch.conf", "unicast-step\nid: 1\nengine: minhop\nconfig: %s\n"
                 "end-unicast-step\n" % path)


# (name, the key the message names or None, what the case sets given the hostile path P, does the
# start refuse (the orchestrator) or route on (an engine))
CASES = [
    ("torus_config", "torus_config", lambda p: {"routing_engine": "torus-2QoS", "torus_config": p}, 0),
    ("updn root_guid_file", "root_guid_file", lambda p: {"routing_engine": "updn", "root_guid_file": p}, 0),
    ("ftree root_guid_file", "root_guid_file", lambda p: {"routing_engine": "ftree", "root_guid_file": p}, 0),
    ("cn_guid_file", "cn_guid_file", lambda p: {"routing_engine": "ftree", "cn_guid_file": p}, 0),
    ("io_guid_file", "io_guid_file", lambda p: {"routing_engine": "ftree", "io_guid_file": p}, 0),
    ("port_prof_ignore_file", "port_prof_ignore_file",
     lambda p: {"routing_engine": "minhop", "port_prof_ignore_file": p}, 0),
    ("rch_policy_file", "rch_policy_file", lambda p: {"rch_policy_file": p}, 1),
    ("pgrp_policy_file", "pgrp_policy_file",
     lambda p: {"rch_policy_file": good_rch, "pgrp_policy_file": p}, 1),
    ("topo_policy_file", "topo_policy_file",
     lambda p: {"rch_policy_file": good_rch, "pgrp_policy_file": good_pgrp, "topo_policy_file": p}, 1),
    ("a step's config: file", None, lambda p: {"rch_policy_file": step_rch(p)}, 1),
]
FLAGS = {"routing_engine": "-R", "root_guid_file": "-a", "cn_guid_file": "-u", "io_guid_file": "-G",
         "port_prof_ignore_file": "-i"}


def expected(key, path, words):
    head = (re.escape(key) + " " if key else r"step 1 \(minhop\): ") + re.escape(path)
    return head + r": (the configuration file is )?" + words


def as_flags(settings):
    out = []
    for k, v in settings.items():
        out += [FLAGS.get(k, "--" + k), v]
    return out


# ---- at start, offline: every key, every kind
for name, key, settings, refuses in CASES:
    for kind, what, words in KINDS:
        path = "/dev/zero" if kind == "zero" else make_hostile(scratch.path("start-" + kind), kind)
        log = scratch.path("start.log")
        osm = scratch.path("osm-start")
        os.makedirs(osm, exist_ok=True)
        args = ["--fabric", torus, "--once", "-f", log] + as_flags(settings(path))
        if name == "torus_config":
            args += ["-Q"]
        t0 = time.time()
        r = scratch.run(h.sm_cmd() + args, timeout=BOUND, OSM_TMP_DIR=osm, OSM_CACHE_DIR=osm)
        took = time.time() - t0
        text = r.text + h.read(log)
        rx = expected(key, path, words)
        rc_ok = (0 < r.rc < 128) if refuses else r.rc == 0
        tap.ok(rc_ok and took < AT_ONCE and not r.timed_out and not r.crashed() and re.search(rx, text),
               "start, %s is %s: %s at once (%.1f s, rc %s), naming %s and the file"
               % (name, what, "refused" if refuses else "routed without it", took, r.rc, key or "the step"),
               "no /%s/ in:\n%s" % (rx, text[-1500:]) + r.describe())
        os.unlink(log)

# ---- --plugin-dir twice: both searched, in order
def plugin_dir(name, so):
    d = scratch.path(name)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    if so:
        shutil.copy(so, os.path.join(d, "x.so"))
        os.chmod(os.path.join(d, "x.so"), 0o755)
    return d


declines = plugin_dir("pd-declines", os.path.join(h.build_dir(), "tests", "plugins", "failing.so"))
routes = plugin_dir("pd-routes", os.path.join(h.build_dir(), "plugins", "minhop.so"))
empty = plugin_dir("pd-empty", None)


def offline_x(dirs, engine="x,no_fallback"):
    osm = scratch.path("osm-pd")
    os.makedirs(osm, exist_ok=True)
    args = ["--fabric", torus, "--once", "-f", "-", "-R", engine]
    for d in dirs:
        args += ["--plugin-dir", d]
    env = {"OSM_TMP_DIR": osm, "OSM_CACHE_DIR": osm}
    return scratch.run(h.sm_cmd() + args, timeout=BOUND, IBSM_PLUGIN_PATH="", **env)


r = offline_x([routes, empty])
tap.ok(r.rc == 0, "--plugin-dir A --plugin-dir B: x.so only in A is found and routes (rc %s)" % r.rc,
       r.describe())
r1, r2 = offline_x([declines, routes]), offline_x([routes, declines])
tap.ok(r1.rc not in (0, None) and r2.rc == 0 and not r1.crashed(),
       "of two x.so, the first --plugin-dir's is run (declining one first: rc %s; routing one "
       "first: rc %s)" % (r1.rc, r2.rc), r1.describe() + r2.describe())
r = offline_x([empty, declines], engine="nosuch,no_fallback")
rx = re.escape(empty) + r", " + re.escape(declines) + r", .*plugins"
tap.ok(r.rc not in (0, None) and re.search(rx, r.text),
       "an engine not found: the message lists both --plugin-dir directories in order, then the "
       "build tree's", "no /%s/ in %s" % (rx, r.text[-800:]))

# ---- the log file: a second hard link is refused, its other name's file untouched
precious = write("precious.txt", "keep me\n")
second = scratch.path("second-name.log")
os.link(precious, second)
r = scratch.run(h.sm_cmd() + ["--fabric", torus, "--once", "-e", "-f", second], timeout=BOUND,
                OSM_TMP_DIR=scratch.path("osm-pd"), OSM_CACHE_DIR=scratch.path("osm-pd"))
tap.ok(0 < r.rc < 128 and second in r.err and "hard link" in r.err,
       "-e -f a second hard link: refused (rc %s), the message names the path and says hard link" % r.rc,
       r.describe())
tap.is_(h.read(precious), "keep me\n", "-e -f a second hard link: the file behind it is not emptied")

with h.Sim(torus, host="h00") as sim:
    conf = sim.path("ibsm.conf")

    def write_conf(settings, extra=()):
        lines = ["sweep_interval 0", "use_ucast_cache FALSE"] + list(extra)
        lines += ["%s %s" % kv for kv in settings.items()]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def sa_answers():
        r = sim.run(["saquery", "-s"], host="h33", timeout=BOUND)
        return r.rc == 0 and re.search(r"EndPortLid", r.out) is not None, r

    # ---- at start on ibsim: a FIFO torus_config is met on the routing thread
    fifo = make_hostile(sim.path("torus-start.fifo"), "fifo")
    write_conf({"routing_engine": "torus-2QoS", "torus_config": fifo}, QOS)
    log = sim.path("start-fifo.log")
    sm = sim.start_sm(["-F", conf, "-f", log], env=sim.env("h00", rmpp=True), name="ibsm-start")
    up = sm.wait_for(log, r"SUBNET UP", 60)
    text = h.read(log)
    rx = r"RTE-0001 routing engine torus-2QoS declined: torus_config " + re.escape(fifo) + r": a FIFO"
    tap.ok(up and re.search(rx, text) and re.search(r"RTE-0003 routed by minhop", text),
           "start on ibsim, torus_config a FIFO: torus-2QoS declines at once naming it, minhop routes, "
           "SUBNET UP", h.tail(log, 30) + sm.output()[-500:])
    ok, r = sa_answers()
    tap.ok(ok, "start on ibsim, torus_config a FIFO: the SA answers (saquery -s from h33)", r.describe())
    t0 = time.time()
    rc = du.signal_and_wait(sm, signal.SIGTERM, timeout=BOUND)
    took = time.time() - t0
    sm.stop()
    tap.ok(rc == 0 and took <= TERM_S, "start on ibsim, torus_config a FIFO: SIGTERM, exit 0 in %.2f s "
           "(<= %.0f s; rc %s)" % (took, TERM_S, rc), sm.output()[-800:])

    # ---- SIGHUP on one daemon: every key, every kind, the file swapped under its name
    write_conf({"routing_engine": "minhop"})
    log = sim.path("daemon.log")
    sm = sim.start_sm(["-F", conf, "-f", log], env=sim.env("h00", rmpp=True), name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 60) and sm.wait_idle(1.0, 60) is not None
    daemon_cases = CASES + [
        ("partition_config_file (-P)", "POL-0002", lambda p: {"partition_config_file": p}, 0),
        ("qos_policy_file (-Y)", "POL-0007", lambda p: {"qos_policy_file": p}, 0),
    ]
    for name, key, settings, refuses in daemon_cases:
        path = sim.path("hup-" + re.sub(r"\W+", "_", name))
        for kind, what, words in KINDS:
            make_hostile(path, kind)
            write_conf(settings(path), QOS if name.startswith(("torus", "qos")) else ())
            off = du.size(log)
            t0 = time.time()
            sm.popen.send_signal(signal.SIGHUP)
            if key and key.startswith("POL-"):  # the core's policies: "CODE ... KEY PATH: ..."
                rx = re.escape(key) + r".*" + expected(name.split()[0], path, words)
            else:
                rx = expected(key, path, words)
            m = du.wait_text(log, off, rx, BOUND, sm.alive)
            took = time.time() - t0
            ok, r = sa_answers() if up and m else (False, None)
            tap.ok(up and m and sm.alive() and ok,
                   "SIGHUP, %s now %s: said at once (%.1f s), the daemon runs on, the SA answers"
                   % (name, what, took),
                   "no /%s/ in:\n%s" % (rx, du.since(log, off)[-1500:]) + (r.describe() if r else "") +
                   sm.output()[-500:])
    t0 = time.time()
    rc = du.signal_and_wait(sm, signal.SIGTERM, timeout=BOUND)
    took = time.time() - t0
    sm.stop()
    tap.ok(rc == 0 and took <= TERM_S and not re.search(r"AddressSanitizer|runtime error", sm.output()),
           "after the last hostile SIGHUP: SIGTERM, exit 0 in %.2f s (<= %.0f s; rc %s), no sanitizer "
           "report" % (took, TERM_S, rc), sm.output()[-800:])
scratch.stop()
tap.done()
