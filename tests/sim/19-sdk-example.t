#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""19-sdk-example.t - the plugin SDK as a third party uses it. `make install DESTDIR=<tmp>
PREFIX=/usr` (in a build tree of its own, so the repository's build/ is untouched) installs ibsm,
its headers and ibsm-plugin.pc, whose version must be the ABI MAJOR.MINOR of
include/ibsm/routing.h. examples/engine is copied to another scratch dir and built there with
nothing but what `pkg-config --cflags ibsm-plugin` gives, then installed with DESTDIR into the
plugin dir. The INSTALLED ibsm lists the example's declared key in --create-config, and runs
`--once -R example,no_fallback` on a fat tree (LMC 2) and a torus (LMC 1, example_spread false
from a -F file). infiniband-diags judge the result: every pair delivered over a shortest path,
ports ACTIVE, LIDs. The example's own key must also show: with spreading, LIDs of one port
leave by different ports; without it, never."""
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

PLAN = 29
tap = h.start(plan=PLAN, timeout=600, need=("make", "cc", "pkg-config"))
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this test installs and runs ibsm itself")
ftree = h.need_fabric(tap, "ftree-small.net")
torus = h.need_fabric(tap, "torus-4x4.net")
REPO = h.REPO


def clean_env(**extra):
    """The environment for make and the installed ibsm: no simulator, no inherited make
    jobserver, no plugin path or pkg-config setting from the caller."""
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "IBSM_PLUGIN_PATH",
              "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR", "CFLAGS", "LDFLAGS"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def give_up(why):
    """A step everything after depends on failed: skip the rest, keep the plan."""
    tap.skip("the remaining SDK checks", why, PLAN - tap.n)
    tap.done()


def abi_version():
    text = h.read(os.path.join(REPO, "include", "ibsm", "routing.h"))
    major = re.search(r"^#define IBSM_ABI_MAJOR (\d+)", text, re.M)
    minor = re.search(r"^#define IBSM_ABI_MINOR (\d+)", text, re.M)
    return "%s.%s" % (major.group(1), minor.group(1)) if major and minor else None


# ---- 1-3: install ibsm into a scratch root, from a build tree of its own
work = h.Scratch("ibsm-sdk.")
stage = work.path("root")                 # DESTDIR
paths_h = os.path.join(h.build_dir(), "gen", "ibsm_paths.h")
paths_before = os.stat(paths_h).st_mtime_ns if os.path.exists(paths_h) else None
r = work.run(["make", "-C", REPO, "-j2", "install", "DESTDIR=" + stage, "PREFIX=/usr",
              "SYSCONFDIR=/etc", "B=" + work.path("build")], timeout=480, env=clean_env())
tap.ok(r.rc == 0 and not r.timed_out,
       "make install DESTDIR=<tmp> PREFIX=/usr SYSCONFDIR=/etc B=<tmp>/build exits 0", r.describe())
if r.rc != 0:
    give_up("make install failed")
usr = os.path.join(stage, "usr")
ibsm = os.path.join(usr, "sbin", "ibsm")
plugindir = os.path.join(usr, "lib", "ibsm", "plugins")
pcdir = os.path.join(usr, "share", "pkgconfig")
want = [ibsm, os.path.join(plugindir, "minhop.so"), os.path.join(usr, "include", "ibsm", "routing.h"),
        os.path.join(usr, "include", "ibsm", "fabric.h"), os.path.join(pcdir, "ibsm-plugin.pc"),
        os.path.join(usr, "share", "doc", "ibsm", "LICENSE"),
        os.path.join(usr, "share", "doc", "ibsm", "examples", "engine", "example.c")]
missing = [p[len(stage):] for p in want if not os.path.isfile(p)]
tap.ok(not missing, "installed: sbin/ibsm, the engines, the SDK headers, ibsm-plugin.pc, LICENSE, "
       "the example engine's source", "missing: %s" % ", ".join(missing))
paths_after = os.stat(paths_h).st_mtime_ns if os.path.exists(paths_h) else None
tap.ok(paths_before == paths_after, "the repository's %s was not rewritten (its build tree is untouched)"
       % os.path.relpath(paths_h, REPO), "mtime %s -> %s" % (paths_before, paths_after))

# ---- 4: the SDK version is the ABI
sdk_env = clean_env(PKG_CONFIG_PATH=pcdir, PKG_CONFIG_SYSROOT_DIR=stage)
r = work.run(["pkg-config", "--modversion", "ibsm-plugin"], env=sdk_env)
abi = abi_version()
tap.ok(r.rc == 0 and abi and r.out.strip() == abi,
       "pkg-config --modversion ibsm-plugin is the ABI of include/ibsm/routing.h (%s)" % abi,
       "got %r (rc %d), routing.h says %r" % (r.out.strip(), r.rc, abi))
r = work.run(["pkg-config", "--cflags", "ibsm-plugin"], env=sdk_env)
sdk_flags = r.out.split()

# ---- 5-7: build examples/engine out of tree with pkg-config alone, install it with DESTDIR
src = work.path("engine")
shutil.copytree(os.path.join(REPO, "examples", "engine"), src)
for junk in ("example.so",):                # a stray in-tree build must not be reused
    if os.path.exists(os.path.join(src, junk)):
        os.unlink(os.path.join(src, junk))
r = h.run(["make", "-C", src, "CFLAGS=-O2 -g -Werror"], env=sdk_env, timeout=120)
built = os.path.join(src, "example.so")
tap.ok(r.rc == 0 and os.path.isfile(built),
       "examples/engine builds out of tree (-Werror) against the installed SDK", r.describe())
compile_lines = [ln for ln in r.out.splitlines() if "example.c" in ln and "-o" in ln]
flags = compile_lines[0].split() if compile_lines else []
inc = [f for f in flags if re.match(r"-(I|isystem|iquote|idirafter|include)", f)]
foreign = [f for f in inc if f not in sdk_flags or REPO in f]
tap.ok(compile_lines and sdk_flags and all(f in flags for f in sdk_flags) and not foreign
       and REPO not in compile_lines[0],
       "the compile line takes its include flags from pkg-config only (%s), none into the source tree"
       % " ".join(sdk_flags),
       "compile line: %s\npkg-config --cflags: %s\nforeign: %s" %
       (compile_lines[:1], sdk_flags, foreign))
r = h.run(["make", "-C", src, "install", "DESTDIR=" + stage], env=sdk_env, timeout=60)
found = []
for d, _, files in os.walk(stage):
    found += [os.path.join(d, f) for f in files if f == "example.so"]
tap.ok(r.rc == 0 and found == [os.path.join(plugindir, "example.so")],
       "make install DESTDIR=<tmp> puts example.so in the installed plugin dir, nowhere else",
       "%s\nfound: %s" % (r.describe(), found))
if not os.path.isfile(os.path.join(plugindir, "example.so")):
    give_up("example.so was not installed")

# ---- 8: the installed ibsm lists the example's declared key
r = work.run([ibsm, "--create-config", "-"], env=clean_env(), timeout=30)
section = r.out.split("# ---- routing engine example ----", 1)
tap.ok(r.rc == 0 and len(section) == 2 and re.search(r"^# example_spread: TRUE$", section[1], re.M)
       and "spread LIDs over every shortest-path port" in section[1],
       "installed ibsm --create-config - lists example_spread (default TRUE, its help line) "
       "under the example engine", r.describe())


def spread_pairs(snap):
    """(switch, CA port) pairs where the port's LIDs leave the switch by more than one port,
    and how many pairs with LMC > 0 were looked at."""
    spread = looked = 0
    for sw in snap.switches():
        lft = snap.lfts.get(sw.guid, b"")
        for p in snap.ca_ports():
            if not p.lmc or p.peer is None or p.peer[0] == sw.guid:
                continue
            exits = {lft[l] for l in range(p.lid, p.lid + (1 << p.lmc)) if l < len(lft)}
            looked += 1
            spread += len(exits) > 1
    return spread, looked


def run_case(net, lmc, spread, extra=()):
    """The installed ibsm, --once -R example,no_fallback -l LMC: 10 tests."""
    name = os.path.basename(net)
    with h.Sim(net, lmc=lmc) as sim:
        log = sim.path("ibsm.log")
        env = sim.env()
        env.pop("IBSM_PLUGIN_PATH", None)
        args = ["--once", "-f", log, "-l", str(lmc), "-R", "example,no_fallback"] + list(extra)
        r = sim.run([ibsm] + args, env=env, timeout=90)
        tap.ok(r.rc == 0 and not r.crashed(), "%s: installed ibsm %s exits 0" % (name, " ".join(args[3:])),
               r.describe())
        text = h.read(log)
        tap.ok("SUBNET UP" in text, "%s: log says SUBNET UP" % name, h.tail(log))
        said = "example_spread %s" % ("TRUE" if spread else "FALSE")
        tap.ok(re.search(r"RTE-0003 routed by example ", text) and "declined" not in text and
               re.search(r"ENG-0001 example: %s" % said, text),
               "%s: log says RTE-0003 routed by example, and the engine read %s" % (name, said),
               "\n".join(ln for ln in text.splitlines() if re.search(r"RTE-|ENG-|CHN-", ln))[-1500:]
               or h.tail(log))
        snap, rep = h.fabric_checks(tap, sim, lmc=lmc, diag_log=log)
        tap.check("%s: every route is a shortest path" % name, h.check_routes(snap, rep, minimal=True))
        n, looked = spread_pairs(snap)
        if spread:
            tap.ok(looked and n > 0, "%s: example_spread TRUE: the LIDs of one port leave by several "
                   "ports (%d of %d switch/port pairs)" % (name, n, looked))
        else:
            tap.ok(looked and n == 0, "%s: example_spread FALSE: the LIDs of one port always leave by "
                   "one port (%d of %d switch/port pairs spread)" % (name, n, looked))


# ---- 9-18: fat tree, LMC 2, the key at its default
run_case(ftree, 2, True)

# ---- 19-28: torus, LMC 1, example_spread: false from a configuration file
cfg = work.path("ibsm.yaml")
with open(cfg, "w") as f:
    f.write("# read by 19-sdk-example.t: a key only the example engine declares\nexample_spread: false\n")
run_case(torus, 1, False, ["-F", cfg])

# ---- 29: the engine is not found when it is not installed (the run above used the installed one)
os.unlink(os.path.join(plugindir, "example.so"))
r = work.run([ibsm, "--once", "-R", "example,no_fallback", "--fabric", h.fabric("tiny.net")],
             env=clean_env(OSM_TMP_DIR=work.dir, OSM_CACHE_DIR=work.dir), timeout=30)
tap.ok(0 < r.rc < 128 and re.search(r"routing engine 'example' not found", r.text),
       "with example.so removed from the installed plugin dir, -R example,no_fallback is refused "
       "(so the runs above used the installed engine)", r.describe())
tap.done()
