#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""23-systemd-unit.t - the shipped systemd units start ibsm, without systemd: etc/ibsm.service
(one SM on the default port) and the per-port template etc/ibsm@.service, instantiated with
port GUIDs read from the simulated fabric. The test enters its own mount namespace (as root)
and sets up the file system the units ask for, as systemd would: ProtectSystem=strict makes
every mount read-only except the API file systems (/proc, /sys, /dev) and the directories the
units name writable (RuntimeDirectory=, CacheDirectory= and LogsDirectory= as fresh writable
mounts, ReadWritePaths=, and the scratch directory in /tmp standing in for PrivateTmp=); /run
itself is read-only. Then ibsm runs with a unit's ExecStart= arguments (the binary under test
in place of /usr/sbin/ibsm, $VARIABLES from etc/default/ibsm, the unit's EnvironmentFile=),
its Environment= and UMask=, and a NOTIFY_SOCKET as for Type=notify, on a simulated fabric.
It must write the pid file the unit names in PIDFile= (which the logrotate snippet signals),
send READY=1, log SUBNET UP in the ExecStart's log file and bring the fabric up (the harness's
checks), and stop on SIGTERM with exit 0, removing its pid file. Two template instances run
side by side (h1's port master, h2's standby), each with its own pid file, log, guid2lid and
dumps. ibsm.service's ExecCondition= (etc/ibsm-ports) is run for every kind of PORTS=, with a
stand-in systemctl that records what it is asked to start; PORTS=ALL lists the ports with
ibstat on the simulated host. The template keeps ibsm.service's hardening. Not root (CI runs
as root): one failing test saying so; there are no skips. The host's file systems are not
touched: every mount is private to the namespace, which ends with this script."""
import ctypes
import fnmatch
import os
import re
import shlex
import signal
import socket
import stat
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60           # generous bound for each condition
UNIT = os.path.join(h.REPO, "etc", "ibsm.service")
TEMPLATE = os.path.join(h.REPO, "etc", "ibsm@.service")
LOGROTATE = os.path.join(h.REPO, "etc", "logrotate.d", "ibsm")
DEFAULTS = os.path.join(h.REPO, "etc", "default", "ibsm")
PORTS_HELPER = os.path.join(h.REPO, "etc", "ibsm-ports")
# what the units name, and what stands in for it here
INSTALLED = {"/usr/sbin/ibsm": h.ibsm_path(), "/usr/libexec/ibsm/ibsm-ports": PORTS_HELPER,
             "/etc/default/ibsm": DEFAULTS}
# [Service] keys that differ between ibsm.service and an instance of ibsm@.service: the rest
# (the hardening) must be the same
PER_UNIT_KEYS = {"ExecStart", "ExecCondition", "PIDFile", "RuntimeDirectory", "CacheDirectory",
                 "LogsDirectory", "Environment"}

tap = h.start(plan=30, timeout=600, need=("ibstat", "sminfo"))
if os.geteuid() != 0:
    tap.fail_all("23-systemd-unit needs root (a mount namespace with /run read-only, as systemd sets "
                 "up for etc/ibsm.service); run it as root, as CI does")


def unit_sections(path, instance=None):
    """{section: {key: [values]}} of a systemd unit (continuation lines joined), with the
    instance specifiers %i/%I replaced by INSTANCE (a GUID needs no escaping) and %% by %."""
    out, section, pending = {}, None, ""
    with open(path) as f:
        for raw in f:
            line = pending + raw.rstrip("\n")
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            t = line.strip()
            if not t or t[0] in "#;":
                continue
            if t.startswith("["):
                section = t
                continue
            if section and "=" in t:
                if instance is not None:
                    t = re.sub(r"%([iI%])", lambda m: "%" if m.group(1) == "%" else instance, t)
                k, v = t.split("=", 1)
                out.setdefault(section, {}).setdefault(k.strip(), []).append(v.strip())
    return out


def environment_file(path):
    """KEY=VALUE lines of an EnvironmentFile= (comments skipped, one level of quotes removed)."""
    env = {}
    for line in h.read(path).splitlines():
        t = line.strip()
        if not t or t[0] in "#;" or "=" not in t:
            continue
        k, v = t.split("=", 1)
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1]
        env[k.strip()] = v
    return env


class Unit:
    """What running a unit takes, read from its file: argv (prefixes stripped, $VAR split into
    words and ${VAR} kept whole as systemd expands them), environment, writable directories."""

    def __init__(self, path, instance=None):
        self.path, self.instance = path, instance
        self.sections = unit_sections(path, instance)
        self.svc = self.sections.get("[Service]", {})
        files = [v.lstrip("-") for v in self.svc.get("EnvironmentFile", [])]
        self.env_files = files
        self.file_env = {}
        for f in files:
            self.file_env.update(environment_file(INSTALLED.get(f, f)))
        self.env = {}
        for v in self.svc.get("Environment", []):
            for kv in shlex.split(v):
                k, _, val = kv.partition("=")
                self.env[k] = val

    def one(self, key, default=None):
        v = self.svc.get(key)
        return v[-1] if v else default

    def unit(self, key):
        return [w for v in self.sections.get("[Unit]", {}).get(key, []) for w in v.split()]

    def argv(self, key, extra_env=None):
        raw = self.one(key, "")
        words = shlex.split(raw)
        while words and words[0][:1] in "-@:+!":      # systemd's ExecStart= prefixes
            words[0] = words[0][1:]
        env = dict(self.file_env, **self.env, **(extra_env or {}))
        out = []
        for w in words:
            m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", w)
            if m:
                out += env.get(m.group(1), "").split()
            else:
                out.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda x: env.get(x.group(1), ""), w))
        if out:
            out[0] = INSTALLED.get(out[0], out[0])
        return out

    def pidfile(self):
        return self.one("PIDFile")

    def runtime(self):
        return [os.path.join("/run", d) for v in self.svc.get("RuntimeDirectory", []) for d in v.split()]

    def writable(self):
        dirs = self.runtime()
        dirs += [os.path.join("/var/cache", d) for v in self.svc.get("CacheDirectory", []) for d in v.split()]
        dirs += [os.path.join("/var/log", d) for v in self.svc.get("LogsDirectory", []) for d in v.split()]
        dirs += [p.lstrip("-") for v in self.svc.get("ReadWritePaths", []) for p in v.split()]
        return dirs

    def log(self):
        a = self.argv("ExecStart")
        return a[a.index("-f") + 1] if "-f" in a else None


single = Unit(UNIT)
exec_start = single.argv("ExecStart")
pidfile = single.pidfile()
tap.ok(pidfile and os.path.dirname(pidfile) in single.runtime(),
       "the unit's PIDFile= (%s) lies in its RuntimeDirectory= (%s)" % (pidfile, ", ".join(single.runtime()) or "none"))
rot = h.read(LOGROTATE)
rot_code = "\n".join(l for l in rot.splitlines() if not l.lstrip().startswith("#"))
rot_pids = sorted(set(re.findall(r"(/\S+?\.pid)\b", rot_code)))
rot_logs = rot_code.split("{", 1)[0].split()
tmpl_any = Unit(TEMPLATE, "0x0002c9030002fce9")
tap.ok(any(fnmatch.fnmatchcase(pidfile, g) for g in rot_pids) and
       any(fnmatch.fnmatchcase(tmpl_any.pidfile(), g) for g in rot_pids) and
       any(fnmatch.fnmatchcase(single.log(), g) for g in rot_logs) and
       any(fnmatch.fnmatchcase(tmpl_any.log(), g) for g in rot_logs),
       "the logrotate snippet rotates both units' logs (%s) and signals the pids in their PIDFile= "
       "(it reads %s, rotates %s)" % (", ".join([single.log(), tmpl_any.log()]), rot_pids, rot_logs))
tap.ok(exec_start and os.path.basename(exec_start[0]) == "ibsm" and "-B" not in exec_start,
       "ExecStart= runs ibsm in the foreground (%s)" % " ".join(exec_start))
hardening = {k: v for k, v in single.svc.items() if k not in PER_UNIT_KEYS}
differs = sorted(k for k in set(hardening) | set(tmpl_any.svc)
                 if k not in PER_UNIT_KEYS and hardening.get(k) != tmpl_any.svc.get(k))
tap.ok(not differs and "--guid" in tmpl_any.argv("ExecStart") and "--pid_file" in tmpl_any.argv("ExecStart"),
       "ibsm@.service keeps ibsm.service's service settings and hardening (%d keys) and passes --guid and "
       "--pid_file" % len(hardening), "differ: %s" % differs)
tap.ok("opensm.service" in single.unit("Conflicts") and "opensm.service" in tmpl_any.unit("Conflicts") and
       "opensm@0x0002c9030002fce9.service" in tmpl_any.unit("Conflicts") and
       tmpl_any.unit("PartOf") == ["ibsm.service"],
       "both units conflict with opensm.service, an instance with opensm@GUID.service, and is PartOf= ibsm.service",
       "ibsm.service Conflicts=%s; instance Conflicts=%s PartOf=%s" %
       (single.unit("Conflicts"), tmpl_any.unit("Conflicts"), tmpl_any.unit("PartOf")))
tap.ok(single.env_files == ["/etc/default/ibsm"] == tmpl_any.env_files and
       all(re.search(r"\s\$IBSM_ARGS$", u.one("ExecStart", "")) for u in (single, tmpl_any)) and
       single.one("ExecCondition", "").lstrip("+") == "/usr/libexec/ibsm/ibsm-ports" and
       environment_file(DEFAULTS).get("PORTS", None) == "",
       "both read /etc/default/ibsm and end ExecStart= with $IBSM_ARGS (split into words); ibsm.service's "
       "ExecCondition= is ibsm-ports; the shipped PORTS= is empty (one SM on the default port)",
       "EnvironmentFile=%s/%s ExecCondition=%s defaults=%s" %
       (single.env_files, tmpl_any.env_files, single.one("ExecCondition"), environment_file(DEFAULTS)))

# ---- ibsm.service's ExecCondition=: what PORTS= makes it do, with a systemctl that records
fake = h.Scratch(prefix="ibsm-unit-bin.")
calls = fake.path("calls")
with open(fake.path("systemctl"), "w") as f:
    f.write('#!/bin/sh\necho "$*" >> "%s"\n' % calls)
os.chmod(fake.path("systemctl"), 0o755)


def ports_helper(ports, path_dirs=()):
    """Runs ExecCondition= as ibsm.service would (its EnvironmentFile=, then PORTS), returns
    (rc, output, [systemctl calls])."""
    if os.path.exists(calls):
        os.unlink(calls)
    env = {k: v for k, v in os.environ.items() if k not in ("PORTS", "LD_PRELOAD")}
    env.update(single.file_env)
    if ports is None:
        env.pop("PORTS", None)
    else:
        env["PORTS"] = ports
    env["PATH"] = ":".join(list(path_dirs) + [fake.dir, env.get("PATH", "/usr/bin:/bin")])
    r = h.run(single.argv("ExecCondition"), env=env, timeout=60)
    return r.rc, r.text.strip(), h.read(calls).splitlines()


rc, out, got = ports_helper(None)
rc2, out2, got2 = ports_helper(single.file_env.get("PORTS"))
tap.ok(rc == 0 and rc2 == 0 and not got and not got2,
       "PORTS unset, or as shipped (empty): the condition passes (ibsm.service runs the SM), nothing else starts",
       "rc %s/%s, systemctl %s %s: %s %s" % (rc, rc2, got, got2, out, out2))
rc, out, got = ports_helper("NONE")
tap.ok(rc == 1 and not got, "PORTS=NONE: skipped (exit 1, not a failure), nothing started (%s)" % out,
       "rc %s, systemctl %s" % (rc, got))
rc, out, got = ports_helper("0x0002C903000E0B72 0x10\n0x10")
want = ["--no-block start ibsm@0x0002c903000e0b72.service ibsm@0x0000000000000010.service"]
tap.ok(rc == 1 and got == want,
       "PORTS=GUIDs: one instance per port, named as ibstat -p prints GUIDs, started without waiting; "
       "ibsm.service itself skipped", "rc %s, systemctl %s, want %s: %s" % (rc, got, want, out))
rc, out, got = ports_helper("0x0002c903000e0b72 mlx4_0")
tap.ok(rc == 255 and not got and "mlx4_0" in out,
       "a PORTS word that is no GUID fails the unit (exit 255) naming it, nothing started",
       "rc %s, systemctl %s: %s" % (rc, got, out))

# ---- the file system of the units, in a mount namespace of our own
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
CLONE_NEWNS = 0x00020000


def mount(src, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount %s: %s" % (target, os.strerror(e)))


def remount_ro(mp):
    """This mount read-only (MS_BIND: this mount point only, never the file system's
    superblock), keeping its other per-mount flags."""
    f = os.statvfs(mp).f_flag
    keep = f & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
    mount(None, mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep | (MS_RELATIME if f & 4096 else 0))


def mount_points():
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].encode().decode("unicode_escape")
            out.append(mp)
    return out


def under(path, top):
    return path == top or path.startswith(top.rstrip("/") + "/")


def setup_namespace(writable):
    """Enter a mount namespace where only WRITABLE (and /tmp, the API file systems) can be
    written, each a fresh tmpfs; None, or what went wrong."""
    tmp = os.path.realpath(tempfile.gettempdir())
    writable = sorted(set(writable), key=lambda p: (p.count("/"), p))   # parents first
    try:
        if libc.unshare(CLONE_NEWNS) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "unshare(CLONE_NEWNS): %s" % os.strerror(e))
        mount(None, "/", None, MS_REC | MS_PRIVATE)          # nothing propagates back to the host
        mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")   # a fresh /run ...
        scaffolds = {"/run"}
        for w in writable:
            if not os.path.isdir(w):                         # a mount point for it, in a scratch parent
                parent = os.path.dirname(w)
                if parent not in scaffolds and not any(under(parent, s) for s in scaffolds):
                    mount("tmpfs", parent, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
                    scaffolds.add(parent)
        for w in writable:                                   # (a scaffold hides what was there)
            os.makedirs(w, exist_ok=True)
        mount(tmp, tmp, None, MS_BIND | MS_REC)             # /tmp stays writable (PrivateTmp=)
        for mp in mount_points():                            # ProtectSystem=strict
            if any(under(mp, api) for api in ("/proc", "/sys", "/dev")) or under(mp, tmp):
                continue
            if not os.statvfs(mp).f_flag & MS_RDONLY:
                remount_ro(mp)
        for w in writable:                                   # what the units make writable
            os.makedirs(w, exist_ok=True)                    # (in a parent made writable just before)
            mount("tmpfs", w, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
        return None
    except OSError as e:
        return str(e)


def writable_dir(d):
    try:
        fd, p = tempfile.mkstemp(dir=d)
        os.close(fd)
        os.unlink(p)
        return True
    except OSError:
        return False


def start_unit(sim, unit, host, name):
    """Starts what UNIT's ExecStart= runs, attached at HOST as the unit would run it (only its
    environment, its umask, a NOTIFY_SOCKET); returns (Background, notify socket)."""
    notify_path = sim.path("notify-%s" % name)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    env = sim.env(host)
    for k in ("OSM_TMP_DIR", "OSM_CACHE_DIR"):           # systemd passes only what the unit sets
        env.pop(k, None)
    env.update(unit.env)
    env["NOTIFY_SOCKET"] = notify_path
    old_umask = os.umask(int(unit.one("UMask", "0022"), 8))
    try:
        sm = sim.start_sm(unit.argv("ExecStart")[1:], env=env, name=name)
    finally:
        os.umask(old_umask)
    return sm, notify


def wait_ready(sm, notify):
    """READY=1 on NOTIFY_SOCKET within POLL_S: (ready, the last messages)."""
    ready, msgs = False, []
    end = h.deadline(POLL_S)
    notify.settimeout(0.5)
    while time.time() < end and not ready and sm.alive():
        try:
            m = notify.recv(4096).decode(errors="replace")
        except socket.timeout:
            continue
        msgs.append(m)
        ready = "READY=1" in m.split("\n")
    return ready, " | ".join(x.replace("\n", " ") for x in msgs[-3:])


def pid_in(path):
    m = re.match(r"\s*(\d+)\s*$", h.read(path)) if path else None
    return int(m.group(1)) if m else 0


net = h.need_fabric(tap, "tiny.net")
with h.Sim(net) as sim:
    # ---- PORTS=ALL: the ports ibstat lists on the simulated host h1 (a wrapper attaches it)
    wrap = h.Scratch(prefix="ibsm-unit-ibstat.")
    with open(wrap.path("ibstat"), "w") as f:
        f.write("#!/bin/sh\ncd %s && exec env %s %s \"$@\"\n" % (
            shlex.quote(sim.rundir),
            " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sim.env("h1").items()
                     if k in ("IBSIM_SOCKNAME", "SIM_HOST", "LD_PRELOAD")),
            shlex.quote(h.which("ibstat"))))
    os.chmod(wrap.path("ibstat"), 0o755)
    r1 = sim.run(["ibstat", "-p"], host="h1")
    r2 = sim.run(["ibstat", "-p"], host="h2")
    guid1 = (r1.out.split() or [""])[0]
    guid2 = (r2.out.split() or [""])[0]
    rc, out, got = ports_helper("ALL", [wrap.dir])
    tap.ok(rc == 1 and guid1 and got == ["--no-block start ibsm@%s.service" % guid1],
           "PORTS=ALL: an instance for each port ibstat -p lists on h1 (%s)" % guid1,
           "rc %s, systemctl %s: %s / ibstat: %s" % (rc, got, out, r1.describe()))
    inst1, inst2 = Unit(TEMPLATE, guid1), Unit(TEMPLATE, guid2)
    writable = single.writable() + inst1.writable() + inst2.writable()
    ns_error = setup_namespace(writable)
    tap.ok(ns_error is None and not writable_dir("/run") and not writable_dir("/etc") and
           all(writable_dir(w) for w in writable),
           "mount namespace: /run and / read-only, %s writable" % ", ".join(sorted(set(writable))), ns_error)
    if ns_error is not None:
        tap.bail_out("cannot set up the units' file system: %s" % ns_error)

    # ---- ibsm.service: one SM on the default port
    log = single.log()
    sm, notify = start_unit(sim, single, "h1", "unit")
    ready, msgs = wait_ready(sm, notify)
    tap.ok(ready, "Type=notify: READY=1 sent (%s)" % msgs, sm.output()[-800:] + (h.tail(log, 10) if log else ""))
    up = log is not None and sm.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    tap.ok(up, "SUBNET UP in the ExecStart's log file %s" % log, sm.output()[-800:] + h.tail(log or "", 10))
    pid = pid_in(pidfile)
    tap.ok(pid == sm.pid, "the pid file %s names ibsm (%r, ibsm is %d)" % (pidfile, h.read(pidfile or "/")[:20], sm.pid),
           sm.output()[-800:])
    try:
        pmode = stat.S_IMODE(os.stat(pidfile).st_mode)
    except (OSError, TypeError):
        pmode = None
    tap.is_(pmode, 0o644, "the pid file is 0644")
    h.fabric_checks(tap, sim, diag_log=log)               # 5 tests
    rc = du.signal_and_wait(sm, signal.SIGTERM, POLL_S)
    tap.ok(rc == 0 and pidfile and not os.path.exists(pidfile),
           "SIGTERM: exit status 0 (got %s), the pid file removed" % rc, sm.output()[-800:])
    sm.stop()
    notify.close()

    # ---- ibsm@GUID.service on h1's port, then one on h2's beside it
    log1, pid1 = inst1.log(), inst1.pidfile()
    sm1, notify1 = start_unit(sim, inst1, "h1", "inst1")
    ready, msgs = wait_ready(sm1, notify1)
    tap.ok(ready, "ibsm@%s.service: READY=1 sent (%s)" % (guid1, msgs), sm1.output()[-800:] + h.tail(log1, 10))
    up = sm1.wait_for(log1, r"SWP-0002 SUBNET UP", POLL_S)
    tap.ok(up and re.search(r"SM-0005 bound to .*GUID %s\b" % guid1, h.read(log1)) is not None,
           "the instance binds to port %s and logs SUBNET UP in its own log %s" % (guid1, log1),
           sm1.output()[-800:] + h.tail(log1, 10))
    tap.ok(pid_in(pid1) == sm1.pid, "its pid file %s names it" % pid1, sm1.output()[-800:])
    cache1, dumps1 = inst1.env.get("OSM_CACHE_DIR", ""), inst1.env.get("OSM_TMP_DIR", "")
    want_files = [os.path.join(cache1, "guid2lid"), os.path.join(dumps1, "opensm-subnet.lst")]
    end = h.deadline(POLL_S)                           # the dumps are written by their own thread
    while not all(os.path.isfile(p) for p in want_files) and time.time() < end:
        time.sleep(0.1)
    have = [p for p in want_files if os.path.isfile(p)]
    tap.ok(guid1 in cache1 and guid1 in dumps1 and len(have) == 2,
           "its guid2lid and dumps are its own: %s" % ", ".join(have),
           "OSM_CACHE_DIR=%s OSM_TMP_DIR=%s, found %s" % (cache1, dumps1, have))
    info, r = sim.sminfo("h3")
    tap.ok(info is not None and info[0] == int(guid1, 16) and info[2] == 3,
           "sminfo from h3: the master is port %s" % guid1, r.text.strip())

    log2, pid2 = inst2.log(), inst2.pidfile()
    sm2, notify2 = start_unit(sim, inst2, "h2", "inst2")
    ready, msgs = wait_ready(sm2, notify2)
    tap.ok(ready and "STANDBY" in msgs and sm2.wait_for(log2, r"SWP-0015", POLL_S),
           "ibsm@%s.service beside it: READY=1, standby (%s)" % (guid2, msgs), sm2.output()[-800:] + h.tail(log2, 10))
    tap.ok(len({pid1, pid2, log1, log2}) == 4 and pid_in(pid2) == sm2.pid and pid_in(pid1) == sm1.pid and
           sm1.alive() and sm2.alive(),
           "two instances side by side, each with its own pid file and log (%s, %s)" % (pid2, log2),
           "pid files %r %r, pids %d %d" % (h.read(pid1), h.read(pid2), sm1.pid, sm2.pid))
    rc1 = du.signal_and_wait(sm1, signal.SIGTERM, POLL_S)
    rc2 = du.signal_and_wait(sm2, signal.SIGTERM, POLL_S)
    tap.ok(rc1 == 0 and rc2 == 0 and not os.path.exists(pid1) and not os.path.exists(pid2),
           "SIGTERM: both exit 0 (got %s, %s), both pid files removed" % (rc1, rc2),
           sm1.output()[-400:] + sm2.output()[-400:])
    sm1.stop()
    sm2.stop()
    notify1.close()
    notify2.close()
tap.done()
