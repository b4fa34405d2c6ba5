#!/usr/bin/env python3
"""24-input-files.t - the files given to ibsm on its command line are read only when they are
regular files of sensible size, and never block: /dev/zero, a FIFO (nobody writes to it), a
directory and a sparse file just over the cap (16 MiB for -F and -P, 64 MiB for --fabric),
given to -F and --fabric (offline: refused with exit 1..127 and a message naming the file and
what it is), to a fabric file's include, and to -P (on ibsim: the SM comes up all the same,
the message names the file). A symlink to a regular file is read. Then the daemon: the -P and
-F files are replaced by FIFOs and SIGHUP: the error is logged, the daemon keeps running and
sweeps. Every run is bounded: a reader that blocks fails its test, it does not hang here."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

BOUND = 30          # seconds: each of these runs takes well under one
tap = h.start(plan=35, timeout=600, need=("smpquery",))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: these are ibsm's own messages")
tiny = h.need_fabric(tap, "tiny.net")
scratch = h.Scratch()


def sparse(name, size):
    p = scratch.path(name)
    with open(p, "wb") as f:
        f.truncate(size)
    return p


def write(name, text):
    p = scratch.path(name)
    with open(p, "w") as f:
        f.write(text)
    return p


fifo = scratch.path("fifo")
os.mkfifo(fifo)
adir = scratch.path("dir")
os.mkdir(adir)
big16 = sparse("big16", (16 << 20) + 1)
big64 = sparse("big64", (64 << 20) + 1)
SPECIAL = [("/dev/zero", "/dev/zero", r"character device"), ("a FIFO", fifo, r"FIFO"),
           ("a directory", adir, r"directory")]


def offline(args, name):
    log = scratch.path(name + ".log")
    osm = scratch.path("osm-" + name)
    os.makedirs(osm, exist_ok=True)
    r = scratch.run(h.sm_cmd() + args + ["-f", log], timeout=BOUND, OSM_TMP_DIR=osm,
                    OSM_CACHE_DIR=osm)
    return r, r.text + h.read(log)


def refused(what, r, text, path, problem):
    tap.ok(0 < r.rc < 128 and not r.timed_out and not r.crashed(),
           "%s: exits 1..127 within %ds, no crash (rc %s)" % (what, BOUND, r.rc), r.describe())
    rx = re.escape(path) + r".*" + problem
    tap.ok(re.search(rx, text) is not None, "%s: the message names %s and says %s"
           % (what, os.path.basename(path), problem), "no /%s/ in:\n%s" % (rx, text[-1200:]))


# ---- -F: the configuration file (offline, with a good fabric)
for what, path, problem in SPECIAL + [("a sparse file over 16 MiB", big16, r"larger than 16 MiB")]:
    r, text = offline(["-F", path, "--fabric", tiny, "--once"], "F")
    refused("-F %s" % what, r, text, path, problem)
good_conf = write("good.conf", "sweep_interval: 3\n")
link_conf = scratch.path("link.conf")
os.symlink(good_conf, link_conf)
r, text = offline(["-F", link_conf, "--fabric", tiny, "--once"], "F-link")
tap.ok(r.rc == 0, "-F a symlink to a regular file: read, the offline run exits 0", r.describe())

# ---- --fabric, and a fabric file's include
for what, path, problem in SPECIAL + [("a sparse file over 64 MiB", big64, r"larger than 64 MiB")]:
    r, text = offline(["--fabric", path, "--once"], "fabric")
    refused("--fabric %s" % what, r, text, path, problem)
inc = write("includes-fifo.net", "# the include below is a FIFO\ninclude \"%s\"\n" % fifo)
r, text = offline(["--fabric", inc, "--once"], "include")
refused("a fabric file including a FIFO", r, text, fifo, r"FIFO")
link_net = scratch.path("link.net")
os.symlink(tiny, link_net)
r, text = offline(["--fabric", link_net, "--once"], "fabric-link")
tap.ok(r.rc == 0, "--fabric a symlink to tiny.net: read, the offline run exits 0", r.describe())

# ---- -P on ibsim: the SM comes up all the same, and says why the file was not taken
with h.Sim(tiny, host="h1") as sim:
    for what, path, problem in SPECIAL + [("a sparse file over 16 MiB", big16, r"larger than 16 MiB")]:
        log = sim.path("P.log")
        r = sim.run_sm(["--once", "-f", log, "-P", path], timeout=BOUND, count=False)
        tap.ok(r.rc == 0 and not r.timed_out and not r.crashed(),
               "-P %s: ibsm --once brings the fabric up within %ds (rc %s)" % (what, BOUND, r.rc),
               r.describe() + h.tail(log))
        text = h.read(log)
        rx = r"POL-0002.*" + re.escape(path) + r".*" + problem
        tap.ok(re.search(rx, text) is not None, "-P %s: the error names the file and says %s"
               % (what, problem), "no /%s/ in:\n%s" % (rx, text[-1200:]))
    good_p = write("good-partitions.conf", "Storage=0x0010 : ALL_CAS=full ;\n")
    link_p = scratch.path("link-partitions.conf")
    os.symlink(good_p, link_p)
    r = sim.run_sm(["--once", "-f", sim.path("P-link.log"), "-P", link_p], timeout=BOUND, count=False)
    snap = sim.collect()
    h2 = sim.node(snap, "h2").ports[1]
    q = sim.run(["smpquery", "pkeys", str(h2.lid)], timeout=30)
    tap.ok(r.rc == 0 and re.search(r"0x8010", q.out) is not None,
           "-P a symlink to a partitions file: taken (h2 holds 0x8010)", r.describe() + q.out)

# ---- the daemon: SIGHUP with the -P, then the -F file turned into a FIFO
with h.Sim(tiny, host="h1") as sim:
    conf = write("daemon.conf", "sweep_interval: 0\n")
    part = write("daemon-partitions.conf", "Storage=0x0010 : ALL_CAS=full ;\n")
    log = sim.path("daemon.log")
    sm = sim.start_sm(["-f", log, "-F", conf, "-P", part], name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", 60) and sm.wait_idle(1.0, 60) is not None
    tap.ok(up, "daemon (-F, -P) comes up and goes idle", h.tail(log) + sm.output()[-500:])
    n_nodes = len(sim.netfile.nodes)

    os.unlink(part)
    os.mkfifo(part)
    off, c0 = du.size(log), sm.counts()
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"POL-0002.*daemon-partitions\.conf.*FIFO", BOUND, sm.alive)
    c1, swept = sm.wait_counts(lambda c: (c - c0).gets(h.NODEINFO) >= n_nodes, BOUND)
    tap.ok(m, "SIGHUP, -P now a FIFO: the error names it", du.since(log, off)[-1200:])
    tap.ok(sm.alive() and swept, "SIGHUP, -P now a FIFO: the daemon runs on and sweeps (%d "
           "NodeInfo Gets)" % (c1 - c0).gets(h.NODEINFO), sm.output()[-800:])

    os.unlink(conf)
    os.mkfifo(conf)
    off = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    m = du.wait_text(log, off, r"LOOP-0006.*daemon\.conf.*FIFO", BOUND, sm.alive)
    tap.ok(m, "SIGHUP, -F now a FIFO: the error names it, the running configuration stays",
           du.since(log, off)[-1200:])
    tap.ok(sm.alive(), "SIGHUP, -F now a FIFO: the daemon runs on", sm.output()[-800:])
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0 and not re.search(r"AddressSanitizer|runtime error", sm.output()),
           "SIGTERM: exit status 0, no sanitizer report (got %s)" % rc, sm.output()[-800:])
scratch.stop()
tap.done()
