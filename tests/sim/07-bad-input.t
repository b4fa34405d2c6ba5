#!/usr/bin/env python3
"""07-bad-input.t - ibsm refuses bad input with a clear message and a non-zero exit, never a
crash: missing and malformed fabric files, a -g GUID that is no local port, an unwritable
cache directory. An engine that does not load (unknown, of another ABI) is a failed engine,
never a failed start: an ERROR naming it, the plugin directories searched and the engines
there are, and minhop routes; only under no_fallback, when nothing is left to route, does
--once fail."""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=15, timeout=400)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: these are ibsm's own messages")
tiny = h.need_fabric(tap, "tiny.net")
scratch = h.Scratch()


def refused(what, r, log, pattern, expect):
    """Two tests: a clean non-zero exit, and a message (stdout, stderr or log) matching PATTERN."""
    text = r.text + h.read(log)
    tap.ok(0 < r.rc < 128 and not r.timed_out and not r.crashed(),
           "%s: non-zero exit, no crash (rc %s)" % (what, r.rc), r.describe())
    tap.ok(re.search(pattern, text, re.M) is not None, "%s: message %s" % (what, expect),
           "no match for /%s/ in:\n%s" % (pattern, text[-1500:]))


def offline(args, name):
    log = scratch.path(name + ".log")
    osm = scratch.path("osm")
    os.makedirs(osm, exist_ok=True)
    return scratch.run(h.sm_cmd() + args + ["-f", log], timeout=60, OSM_TMP_DIR=osm, OSM_CACHE_DIR=osm), log


# 1-2: missing fabric file
missing = scratch.path("no-such-fabric.net")
r, log = offline(["--fabric", missing, "--once"], "missing")
refused("missing fabric file", r, log, r"no-such-fabric\.net", "names the file")

# 3-4: malformed fabric file, the error at line 5
bad = scratch.path("malformed.net")
with open(bad, "w") as f:
    f.write('# malformed on purpose: line 5 is neither a node, a link nor a GUID line\n'
            'Switch\t2 "sw"\n'
            '[1]\t"h"[1]\n'
            '\n'
            'this is not a fabric line [[[ "\n'
            'Hca\t1 "h"\n'
            '[1]\t"sw"[1]\n')
r, log = offline(["--fabric", bad, "--once"], "malformed")
refused("malformed fabric file", r, log, r"malformed\.net.*(:5\b|line 5\b)|(:5\b|line 5\b).*malformed\.net",
        "names the file and line 5")


def engine_names():
    d = os.path.join(h.build_dir(), "plugins")
    return sorted(f[:-3] for f in os.listdir(d) if f.endswith(".so")) if os.path.isdir(d) else []


def badabi_plugin():
    """A plugin dir holding badabi.so built without sanitizers (the asan build of the test
    engines cannot be loaded by the plain build/ibsm): the build's own if there is one,
    else compiled here from tests/plugins/badabi.c. Returns (dir, None) or (None, why)."""
    built = os.path.join(h.build_dir(), "tests", "plugins")
    if os.path.isfile(os.path.join(built, "badabi.so")):
        return built, None
    src = os.path.join(h.REPO, "tests", "plugins", "badabi.c")
    if not os.path.isfile(src):
        return None, "no tests/plugins/badabi.c"
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        return None, "no C compiler"
    out = scratch.path("plugins")
    os.makedirs(out, exist_ok=True)
    cp = subprocess.run([cc, "-std=gnu11", "-shared", "-fPIC", "-fvisibility=hidden",
                         "-I" + os.path.join(h.REPO, "include"), "-o", os.path.join(out, "badabi.so"), src],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if cp.returncode != 0:
        return None, "compiling badabi.c failed: " + cp.stdout[-500:]
    return out, None


with h.Sim(tiny) as sim:
    cas = sim.netfile.cas()

    # 5-7: an unknown engine is skipped, loudly, and minhop routes
    log = sim.path("nosuch.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "nosuch"], timeout=60)
    text = r.text + h.read(log)
    names = engine_names() or ["minhop"]
    plugins = re.escape(os.path.join(h.build_dir(), "plugins"))
    tap.ok(r.rc == 0 and not r.crashed(), "-R nosuch: skipped, the subnet comes up (exit 0)", r.describe())
    pat = (r"^.*ERR  CHN-0003 .*engine nosuch cannot be used: .*not found \(no nosuch\.so in [^)]*" + plugins +
           r"[^)]*\)" + "".join(r"(?=.*\b%s\b)" % n for n in names) + ".*skipped.*$")
    tap.ok(re.search(pat, text, re.M) is not None,
           "-R nosuch: an ERROR names nosuch, the plugin directories searched and the engines (%s)"
           % ", ".join(names), "no match for /%s/ in:\n%s" % (pat, text[-1500:]))
    tap.ok(re.search(r"RTE-0003 routed by minhop .*not loaded, skipped: nosuch", text) is not None,
           "-R nosuch: minhop routed, and its line says what was skipped", text[-800:])

    # 8-9: -R nosuch,no_fallback: nothing is left that can route: --once fails, saying why
    log = sim.path("nosuch-nofb.log")
    r = sim.run_sm(["--once", "-f", log, "-R", "nosuch,no_fallback"], timeout=60)
    refused("-R nosuch,no_fallback", r, log, r"^.*CHN-0005 .*no engine can route \(nosuch: .*not found.*$",
            "says no engine can route, naming nosuch")

    # 10-11: an engine built for ABI 2.0 (no_fallback: its refusal is the whole story)
    pdir, why = badabi_plugin()
    if pdir is None:
        tap.ok(False, "badabi.so for -R badabi", why)
        tap.ok(False, "-R badabi: message names both ABI versions", why)
    else:
        log = sim.path("badabi.log")
        r = sim.run_sm(["--once", "-f", log, "--plugin-dir", pdir, "-R", "badabi,no_fallback"], timeout=60)
        refused("-R badabi,no_fallback (engine ABI 2.0)", r, log,
                r"^(?=.*ABI)(?=.*\b2(\.0)?\b)(?=.*\b1(\.\d+)?\b).*$", "names ABI 2 and ibsm's ABI 1 on one line")

    # 12-13: -g with a GUID that is no local port
    log = sim.path("guid.log")
    r = sim.run_sm(["--once", "-f", log, "-g", "0x1234"], timeout=60)
    refused("-g 0x1234", r, log, r"0x0*1234\b", "names the GUID")

    # 14-15: a cache directory that cannot be created
    log = sim.path("cache.log")
    r = sim.run_sm(["--once", "-f", log], timeout=60, env=sim.env(OSM_CACHE_DIR="/proc/nonexistent"))
    refused("OSM_CACHE_DIR=/proc/nonexistent", r, log, r"/proc/nonexistent", "names the directory")
scratch.stop()
tap.done()
