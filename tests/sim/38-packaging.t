#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""38-packaging.t - the Debian packages, built as a user builds them: the source tree (git's
files, or a copy without build trees) in a scratch directory, `dpkg-buildpackage -us -uc -b`
there, then the two .debs judged from outside. ibsm holds the daemon, every engine of the
build, the units, /etc/default/ibsm, the configuration template (the binary's own
--create-config, accepted by it) and logrotate, as conffiles where they are configuration;
ibsm-dev the SDK. Every path the man pages' FILES sections list as installed is in a package
(read from the packaged pages themselves), and every file the packages ship is named there.
The packaged binary finds its packaged engines and routes a fabric file; the packaged SDK
builds the example engine, which that binary then runs. The packaged man pages render
without a warning, logrotate and systemd-analyze accept the snippet and the units. The
maintainer scripts, run with stand-ins for systemctl and debhelper's helpers in a mount
namespace where /run/systemd/system exists: a fresh install enables and starts nothing, an
upgrade restarts what runs, removal stops the SMs. Last, `make install` with debian/rules'
variables puts the same files in place. lintian, with its pedantic and experimental checks,
finds nothing (debian/*.lintian-overrides say why for what is not a fault): ibsm-dev is
Architecture: all with ibsm-plugin.pc in /usr/share/pkgconfig, the units' helper is in
/usr/libexec/ibsm, every program has a man page. Python 3 standard library only; about 30 s,
most of it the build."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

BUILD_TIMEOUT = 600
PAGES = {"ibsm.8": "man8", "ibsm-cli.8": "man8", "ibsm.yaml.5": "man5", "ibsm-engine.7": "man7"}
CONFFILES = ["/etc/ibsm/ibsm.yaml", "/etc/default/ibsm", "/etc/logrotate.d/ibsm"]
SDK = ["/usr/include/ibsm/fabric.h", "/usr/include/ibsm/routing.h", "/usr/include/ibsm/orchestrator.h",
       "/usr/share/pkgconfig/ibsm-plugin.pc"]
# what debian/rules hands the Makefile (its IBSM_MAKE, less the flags)
RULES_MAKE = ["B=debian/build", "PREFIX=/usr", "SYSCONFDIR=/etc", "SYSTEMD_UNIT_DIR=/lib/systemd/system"]
# files a package has that no man page needs to name: Debian's own, and the pages themselves
DEBIAN_DOCS = re.compile(r"^/usr/share/doc/[^/]+/(copyright|changelog\.Debian\.gz|README\.md\.gz)$|"
                         r"^/usr/share/man/|^/usr/share/lintian/overrides/")
TOOLS = ("dpkg-buildpackage", "dpkg-deb", "dpkg-parsechangelog", "dh", "make", "cc", "pkg-config",
         "man", "logrotate", "systemd-analyze", "unshare", "mount", "lintian")

tap = h.Tap(plan=22, timeout=900)
miss = [t for t in TOOLS if not h.which(t)]
if miss:
    tap.fail_all("missing %s (run make deps: dpkg-dev, debhelper, lintian, man-db, logrotate, systemd)" %
                 ", ".join(miss))


def clean_env(**extra):
    """The environment of a user's shell: no make jobserver of an outer make, no preload, no
    ibsm knobs."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LD_PRELOAD", "MAKEOVERRIDES")
           and not k.startswith("IBSM_")}
    env.update(extra)
    return env


def source_files():
    """Relative paths of the source tree: git's (tracked and untracked, not ignored), or every
    file but build trees, git's and Python's caches and dpkg-buildpackage's leftovers."""
    if os.path.exists(os.path.join(h.REPO, ".git")) and h.which("git"):
        r = subprocess.run(["git", "-C", h.REPO, "ls-files", "-z", "-co", "--exclude-standard"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return [p for p in r.stdout.decode().split("\0") if p and os.path.lexists(os.path.join(h.REPO, p))]
    skip_dir = re.compile(r"^(\.git|build|build-.*|__pycache__|sys-\d+)$")
    skip_path = re.compile(r"^debian/(build|tmp|ibsm|ibsm-dev|\.debhelper)(/|$)|^debian/(files|.*\.substvars|"
                           r".*\.debhelper(\.log)?|debhelper-build-stamp)$|^examples/engine/.*\.(so|o|d)$")
    out = []
    for d, dirs, files in os.walk(h.REPO):
        rel = os.path.relpath(d, h.REPO)
        dirs[:] = [x for x in dirs if not skip_dir.match(x) and
                   not skip_path.match(os.path.normpath(os.path.join(rel, x)))]
        for f in files:
            p = os.path.normpath(os.path.join(rel, f))
            if not skip_path.match(p):
                out.append(p)
    return out


def copy_tree(dst):
    for rel in source_files():
        src, to = os.path.join(h.REPO, rel), os.path.join(dst, rel)
        os.makedirs(os.path.dirname(to), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), to)
        elif os.path.isfile(src):
            shutil.copy2(src, to)


def files_under(root):
    """{"/path": "file" | "link -> target"} of a tree (directories left out)."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, name)
            rel = "/" + os.path.relpath(p, root)
            out[rel] = ("link -> " + os.readlink(p)) if os.path.islink(p) else "file"
    return out


def render(path):
    """man -l of a page (gzipped or not): (Result, plain text)."""
    env = clean_env(LC_ALL="C.UTF-8", MANWIDTH="80")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    r = h.run(["man", "-l", "--warnings", "-P", "cat", "-E", "ascii", path], env=env, timeout=60)
    return r, re.sub(r".\x08", "", r.out)


def installed_files(text):
    """The paths of a rendered page's FILES section, subsection "Installed files"."""
    m = re.search(r"^FILES\n(.*?)(?=^[A-Z][A-Z ]+\n|\Z)", text, re.S | re.M)
    sub = re.search(r"^ {3}Installed files\n(.*?)(?=^ {3}\S|\Z)", m.group(1) if m else "", re.S | re.M)
    return [l.strip() for l in (sub.group(1) if sub else "").splitlines() if re.match(r" {7}/\S+$", l)]


work = h.Scratch(prefix="ibsm-pkg.")
src = work.path("src")
copy_tree(src)
version = h.run(["dpkg-parsechangelog", "-l", os.path.join(src, "debian", "changelog"), "-S", "Version"],
                timeout=60).out.strip()
arch = h.run(["dpkg", "--print-architecture"], timeout=60).out.strip()

# ---- the build
t0 = time.time()
r = h.run(["dpkg-buildpackage", "-us", "-uc", "-b"], env=clean_env(), cwd=src, timeout=BUILD_TIMEOUT)
build_s = time.time() - t0
tap.ok(r.rc == 0, "dpkg-buildpackage -us -uc -b builds %s in %.0f s" % (version, build_s), r.describe())
debs = {"ibsm": work.path("ibsm_%s_%s.deb" % (version, arch)), "ibsm-dev": work.path("ibsm-dev_%s_all.deb" % version)}
tap.ok(all(os.path.isfile(d) for d in debs.values()), "the packages: %s" % ", ".join(os.path.basename(d) for d in debs.values()),
       "in %s: %s" % (work.dir, os.listdir(work.dir)))
if not all(os.path.isfile(d) for d in debs.values()):
    tap.bail_out("no packages to judge")

# ---- lintian: nothing at warning level or above (what is not a fault is overridden in
# debian/*.lintian-overrides, each with its reason); the experimental checks of the issue too:
# no executable in /usr/lib (helpers in /usr/libexec), no arch-dependent package without
# arch-dependent files
changes = work.path("ibsm_%s_%s.changes" % (version, arch))
r = h.run(["lintian", "--fail-on", "error,warning", "-E", "--pedantic", changes], env=clean_env(), timeout=300)
found = [l for l in r.out.splitlines() if re.match(r"^[EWXP]: ", l)]
tap.ok(r.rc == 0 and not found, "lintian (errors, warnings, pedantic, experimental) has nothing to say about the "
       "packages",
       "\n".join(found) or r.describe())

roots = {p: work.path("root-" + p) for p in debs}
both = work.path("root")
for p, d in debs.items():
    for root in (roots[p], both):
        x = h.run(["dpkg-deb", "-x", d, root], timeout=120)
        if x.rc != 0:
            tap.bail_out("dpkg-deb -x %s: %s" % (d, x.describe()))
content = {p: files_under(roots[p]) for p in debs}
shipped = dict(content["ibsm"], **content["ibsm-dev"])
ibsm = os.path.join(both, "usr", "sbin", "ibsm")

# ---- the daemon and its engines
engines = sorted(os.listdir(os.path.join(src, "debian", "build", "plugins")))
plugdir = "/usr/lib/ibsm/plugins/"
bad = [e for e in engines if plugdir + e not in content["ibsm"]]
for e in engines:
    p = os.path.join(roots["ibsm"], plugdir.strip("/"), e)
    if os.path.lexists(p) and not os.path.islink(p) and os.stat(p).st_mode & 0o022:
        bad.append(e + " (group/other-writable: ibsm refuses it)")
link = content["ibsm"].get(plugdir + "torus-2QoS.so")
tap.ok(os.access(os.path.join(roots["ibsm"], "usr/sbin/ibsm"), os.X_OK) and engines and not bad and
       link == "link -> torus2qos.so",
       "ibsm holds /usr/sbin/ibsm and every engine of the build: %s" % " ".join(engines),
       "missing or bad: %s; torus-2QoS.so: %s" % (bad, link))

# ---- the man pages, and what their FILES sections say is installed
man_paths = ["/usr/share/man/%s/%s.gz" % (sec, page) for page, sec in PAGES.items()]
rendered = {}
warn = []
for page, sec in PAGES.items():
    r, text = render(os.path.join(roots["ibsm"], "usr/share/man", sec, page + ".gz"))
    rendered[page] = text
    if r.rc != 0 or r.err.strip() or len(text) < 1000:
        warn.append("%s: %s" % (page, r.describe()))
tap.ok(all(m in content["ibsm"] for m in man_paths) and not warn,
       "ibsm holds the man pages %s, and man -l renders each without a warning" % " ".join(man_paths),
       "\n".join(warn) or "have: %s" % sorted(p for p in content["ibsm"] if "/man/" in p))
named = []
for page in PAGES:
    listed = installed_files(rendered[page])
    named += listed
    missing = [p for p in listed if not (p.rstrip("/") in shipped or
               any(s.startswith(p.rstrip("/") + "/") for s in shipped))]
    tap.ok(listed and not missing, "%s: every installed file its FILES section names is in the packages (%d)" %
           (page, len(listed)), "not packaged: %s (the page lists %s)" % (missing, listed))
unnamed = sorted(p for p in shipped if not DEBIAN_DOCS.match(p) and
                 not any(p == n.rstrip("/") or (n.endswith("/") and p.startswith(n)) for n in named))
tap.ok(not unnamed, "every file the packages ship is named by a man page's FILES section (%d files)" % len(shipped),
       "named by no page: %s" % unnamed)
in_dev = [p for p in SDK if p in content["ibsm-dev"]]
tap.ok(in_dev == SDK and not any(p in content["ibsm"] for p in SDK) and
       all(p.startswith("/usr/share/doc/ibsm/examples/engine/") for p in content["ibsm-dev"]
           if "/examples/" in p) and "/usr/share/doc/ibsm/examples/engine/example.c" in content["ibsm-dev"],
       "ibsm-dev holds the SDK (headers, ibsm-plugin.pc) and the example engine, uncompressed; ibsm none of it",
       "ibsm-dev: %s" % sorted(content["ibsm-dev"]))

# ---- control data
ctl = work.path("control-ibsm")
h.run(["dpkg-deb", "-e", debs["ibsm"], ctl], timeout=60)
conffiles = h.read(os.path.join(ctl, "conffiles")).split()
tap.ok(all(c in conffiles for c in CONFFILES), "conffiles: %s" % " ".join(conffiles), "want %s" % CONFFILES)
r = h.run([ibsm, "--version"], env=clean_env(), timeout=60)
upstream = version.rsplit("-", 1)[0]
tap.ok(r.rc == 0 and re.match(r"ibsm %s \(plugin ABI \d+\.\d+\)" % re.escape(upstream), r.out.strip()),
       "the packaged ibsm --version (%s) is the package's upstream version %s" % (r.out.strip(), upstream),
       r.describe())

# ---- the packaged binary with its packaged engines, configuration and SDK
tiny = h.fabric("tiny.net")
r = h.run([ibsm, "--fabric", tiny, "-R", "updn,no_fallback", "-f", "-"],
          env=clean_env(LD_DEBUG="files", OSM_TMP_DIR=work.dir, OSM_CACHE_DIR=work.dir), cwd=work.dir, timeout=60)
loaded = re.findall(r"calling init: (\S+/updn\.so)", r.err)
want = os.path.join(both, "usr", "sbin", "..", "lib", "ibsm", "plugins", "updn.so")
tap.ok(r.rc == 0 and loaded and all(os.path.realpath(l) == os.path.realpath(want) for l in loaded) and
       "routed by updn" in r.text,
       "the packaged ibsm loads the packaged updn.so (from ../lib/ibsm/plugins beside it) and routes tiny.net",
       "loaded %s\n%s" % (loaded, r.describe()))
empty = work.path("empty.yaml")
open(empty, "w").close()
tmpl = h.run([ibsm, "-F", empty, "-c", "-"], env=clean_env(), timeout=60)
cfg = os.path.join(both, "etc", "ibsm", "ibsm.yaml")
r = h.run([ibsm, "-F", cfg, "--fabric", tiny, "-f", "-"], env=clean_env(OSM_TMP_DIR=work.dir, OSM_CACHE_DIR=work.dir),
          cwd=work.dir, timeout=60)
tap.ok(tmpl.rc == 0 and h.read(cfg) == tmpl.out and r.rc == 0 and not re.search(r"^[^#\s]", tmpl.out, re.M),
       "/etc/ibsm/ibsm.yaml is the packaged binary's own template (%d keys, every one commented out, so an "
       "opensm.conf beside it is read) and it accepts it" %
       len(re.findall(r"^(?:# )?[a-z][a-z0-9_]*: ", tmpl.out, re.M)),
       "template differs: %s\n%s" % (h.read(cfg) != tmpl.out, r.describe()))
ex = work.path("example")
shutil.copytree(os.path.join(both, "usr/share/doc/ibsm/examples/engine"), ex)
pc_env = clean_env(PKG_CONFIG_PATH=os.path.join(both, "usr/share/pkgconfig"), PKG_CONFIG_SYSROOT_DIR=both)
b = h.run(["make", "-C", ex], env=pc_env, timeout=120)
r = h.run([ibsm, "--fabric", tiny, "-R", "example,no_fallback", "--plugin-dir", ex, "-f", "-"],
          env=clean_env(OSM_TMP_DIR=work.dir, OSM_CACHE_DIR=work.dir), cwd=work.dir, timeout=60)
tap.ok(b.rc == 0 and r.rc == 0 and "routed by example" in r.text,
       "the example engine builds against the packaged SDK alone and the packaged ibsm routes with it",
       b.describe() + "\n" + r.describe())

# ---- logrotate and systemd read what the package gives them
state = work.path("logrotate.state")
r = h.run(["logrotate", "-d", "-s", state, os.path.join(both, "etc/logrotate.d/ibsm")], timeout=60)
tap.ok(r.rc == 0 and not re.search(r"^error:", r.text, re.M), "logrotate -d accepts the packaged snippet",
       r.describe())
units = work.path("units")
os.makedirs(units)
for u in ("ibsm.service", "ibsm@.service"):
    text = h.read(os.path.join(both, "lib/systemd/system", u))
    for p in ("/usr/sbin/ibsm", "/usr/libexec/ibsm/ibsm-ports"):       # the executables, in the packaged tree
        text = text.replace(p, both + p)
    with open(os.path.join(units, u), "w") as f:
        f.write(text)
r = h.run(["systemd-analyze", "verify", "--man=no", os.path.join(units, "ibsm.service"),
           os.path.join(units, "ibsm@0x0002c9030002fce9.service")], env=clean_env(), timeout=120)
tap.ok(r.rc == 0 and not r.text.strip(), "systemd-analyze verify: nothing to say about ibsm.service and an "
       "instance of ibsm@.service", r.describe())

# ---- the maintainer scripts, with stand-ins that record what they are asked to do
fake = work.path("fakebin")
os.makedirs(fake)
calls = work.path("calls")
for tool, status in (("systemctl", ""),
                     ("deb-systemd-helper", 'case "$*" in *was-enabled*) exit 1;; esac'),
                     ("deb-systemd-invoke", "")):
    with open(os.path.join(fake, tool), "w") as f:
        f.write('#!/bin/sh\necho "%s $*" >> "%s"\n%s\nexit 0\n' % (tool, calls, status))
    os.chmod(os.path.join(fake, tool), 0o755)
unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]


def maint(script, *args):
    """Runs control script SCRIPT with ARGS where /run/systemd/system exists (a tmpfs /run in
    a mount namespace of its own); returns (Result, [calls])."""
    if os.path.exists(calls):
        os.unlink(calls)
    sh = 'mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && exec sh "$0" "$@"'
    env = clean_env(PATH=fake + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    env.pop("DPKG_ROOT", None)
    r = h.run(unshare + ["sh", "-c", sh, os.path.join(ctl, script)] + list(args), env=env, timeout=60)
    return r, h.read(calls).splitlines()


def verb(call):
    """The action of a recorded call: its first argument that is not an option."""
    return next((w for w in call.split()[1:] if not w.startswith("-")), "")


def acts(got, verbs):
    return [c for c in got if verb(c) in verbs]


def in_order(got, *calls):
    """Every one of CALLS was made, in this order."""
    at = [got.index(c) for c in calls if c in got]
    return len(at) == len(calls) and at == sorted(at)


STARTS = ("start", "restart", "try-restart", "enable", "reload", "reload-or-restart")
r, got = maint("postinst", "configure")
tap.ok(r.rc == 0 and got and not acts(got, STARTS),
       "postinst of a fresh install enables and starts nothing (%d calls: %s)" %
       (len(got), ", ".join(sorted(set(verb(c) for c in got)))),
       r.describe() + "\n" + "\n".join(got))
r, got = maint("postinst", "configure", "0.1.0-1")
tap.ok(r.rc == 0 and in_order(got, "systemctl --system daemon-reload",
                              "deb-systemd-invoke try-restart ibsm.service ibsm@*.service") and
       not acts(got, ("start", "enable", "restart")),
       "postinst of an upgrade reloads systemd, then try-restarts ibsm.service and the ibsm@ instances at once",
       r.describe() + "\n" + "\n".join(got))
r, got = maint("prerm", "remove")
r2, got2 = maint("prerm", "upgrade", "0.3.0-1")
tap.ok(r.rc == 0 and "deb-systemd-invoke stop ibsm.service ibsm@*.service" in got and
       r2.rc == 0 and not acts(got2, ("stop",)),
       "prerm stops ibsm.service and every ibsm@ instance on removal, nothing on upgrade",
       r.describe() + "\n" + "\n".join(got) + "\nupgrade: " + "\n".join(got2))

# ---- make install with debian/rules' variables: the same files
dest = work.path("make-install")
r = h.run(["make", "-s", "install", "DESTDIR=" + dest] + RULES_MAKE, env=clean_env(), cwd=src, timeout=300)
made = files_under(dest) if r.rc == 0 else {}


def normal(paths):
    """Package paths as make install writes them: no .gz of man pages and README, no
    Debian-only docs, no LICENSE (debian/copyright has it)."""
    out = set()
    for p in paths:
        if re.match(r"^/usr/share/doc/[^/]+/(copyright|changelog\.Debian\.gz|LICENSE)$|^/usr/share/lintian/", p):
            continue
        if p.startswith("/usr/share/man/") or p.endswith("README.md.gz"):
            p = p[:-3] if p.endswith(".gz") else p
        out.add(p)
    return out


a, b = normal(made), normal(shipped)
tap.ok(r.rc == 0 and a == b, "make install %s puts the packages' files in place (%d)" % (" ".join(RULES_MAKE), len(a)),
       "%s\nonly make install: %s\nonly the packages: %s" % (r.describe() if r.rc else "", sorted(a - b), sorted(b - a)))
tap.note("build %.0f s" % build_s)
tap.done()
