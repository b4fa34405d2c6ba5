#!/usr/bin/env python3
"""23-systemd-unit.t - the shipped systemd unit (etc/ibsm.service) starts ibsm, without systemd:
the test enters its own mount namespace (as root) and sets up the file system the unit asks
for, as systemd would: ProtectSystem=strict makes every mount read-only except the API file
systems (/proc, /sys, /dev) and the directories the unit names writable (RuntimeDirectory= and
CacheDirectory= as fresh writable mounts, ReadWritePaths=, and the scratch directory in /tmp
standing in for PrivateTmp=); /run itself is read-only. Then ibsm runs with the unit's
ExecStart= arguments (the binary under test in place of /usr/sbin/ibsm), its Environment= and
UMask=, and a NOTIFY_SOCKET as for Type=notify, on a simulated fabric. It must write the pid
file the unit names in PIDFile= (which is also the one the logrotate snippet signals), send
READY=1, log SUBNET UP in the ExecStart's log file and bring the fabric up (the harness's
checks), and stop on SIGTERM with exit 0, removing its pid file. Not root (CI runs as root):
one failing test saying so; there are no skips. The host's file systems are not touched: every
mount is private to the namespace, which ends with this script."""
import ctypes
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
LOGROTATE = os.path.join(h.REPO, "etc", "logrotate.d", "ibsm")

tap = h.start(plan=14, timeout=600)
if os.geteuid() != 0:
    tap.fail_all("22-systemd-unit needs root (a mount namespace with /run read-only, as systemd sets up "
                 "for etc/ibsm.service); run it as root, as CI does")


def unit_service(path):
    """{key: [values]} of the [Service] section of a systemd unit (continuation lines joined)."""
    out, section, pending = {}, None, ""
    with open(path) as f:
        for raw in f:
            line = pending + raw.rstrip("\n")
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            s = line.strip()
            if not s or s[0] in "#;":
                continue
            if s.startswith("["):
                section = s
                continue
            if section == "[Service]" and "=" in s:
                k, v = s.split("=", 1)
                out.setdefault(k.strip(), []).append(v.strip())
    return out


svc = unit_service(UNIT)


def one(key, default=None):
    v = svc.get(key)
    return v[-1] if v else default


pidfile = one("PIDFile")
runtime = [os.path.join("/run", d) for v in svc.get("RuntimeDirectory", []) for d in v.split()]
cache = [os.path.join("/var/cache", d) for v in svc.get("CacheDirectory", []) for d in v.split()]
rw_paths = [p.lstrip("-") for v in svc.get("ReadWritePaths", []) for p in v.split()]
env_unit = {}
for v in svc.get("Environment", []):
    for kv in shlex.split(v):
        k, _, val = kv.partition("=")
        env_unit[k] = val
exec_start = shlex.split(one("ExecStart", ""))
while exec_start and exec_start[0][:1] in "-@:+!":          # systemd's ExecStart= prefixes
    exec_start[0] = exec_start[0][1:]

tap.ok(pidfile and os.path.dirname(pidfile) in runtime,
       "the unit's PIDFile= (%s) lies in its RuntimeDirectory= (%s)" % (pidfile, ", ".join(runtime) or "none"))
rot_pids = sorted(set(re.findall(r"(/\S+?\.pid)\b", h.read(LOGROTATE))))
tap.ok(rot_pids == [pidfile], "the logrotate snippet signals the pid in PIDFile= (it reads %s)" % rot_pids)
tap.ok(exec_start and os.path.basename(exec_start[0]) == "ibsm" and "-B" not in exec_start,
       "ExecStart= runs ibsm in the foreground (%s)" % " ".join(exec_start))

# ---- the file system of the unit, in a mount namespace of our own
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


tmp = os.path.realpath(tempfile.gettempdir())
writable = runtime + cache + rw_paths
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
            os.makedirs(w, exist_ok=True)
    mount(tmp, tmp, None, MS_BIND | MS_REC)             # /tmp stays writable (PrivateTmp=)
    for mp in mount_points():                            # ProtectSystem=strict
        if any(under(mp, api) for api in ("/proc", "/sys", "/dev")) or under(mp, tmp):
            continue
        if not os.statvfs(mp).f_flag & MS_RDONLY:
            remount_ro(mp)
    for w in writable:                                   # what the unit makes writable
        mount("tmpfs", w, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    ns_error = None
except OSError as e:
    ns_error = str(e)


def writable_dir(d):
    try:
        fd, p = tempfile.mkstemp(dir=d)
        os.close(fd)
        os.unlink(p)
        return True
    except OSError:
        return False


tap.ok(ns_error is None and not writable_dir("/run") and not writable_dir("/etc") and
       all(writable_dir(w) for w in writable),
       "mount namespace: /run and / read-only, %s writable" % ", ".join(writable), ns_error)
if ns_error is not None:
    tap.bail_out("cannot set up the unit's file system: %s" % ns_error)

net = h.need_fabric(tap, "tiny.net")
with h.Sim(net) as sim:
    notify_path = sim.path("notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    env = sim.env("h1")
    for k in ("OSM_TMP_DIR", "OSM_CACHE_DIR"):           # systemd passes only what the unit sets
        env.pop(k, None)
    env.update(env_unit)
    env["NOTIFY_SOCKET"] = notify_path
    args = exec_start[1:]
    log = args[args.index("-f") + 1] if "-f" in args else None
    old_umask = os.umask(int(one("UMask", "0022"), 8))
    try:
        sm = sim.start_sm(args, env=env, name="unit")
    finally:
        os.umask(old_umask)

    ready, msgs = False, []
    end = time.time() + POLL_S
    notify.settimeout(0.5)
    while time.time() < end and not ready and sm.alive():
        try:
            m = notify.recv(4096).decode(errors="replace")
        except socket.timeout:
            continue
        msgs.append(m)
        ready = "READY=1" in m.split("\n")
    tap.ok(ready, "Type=notify: READY=1 sent (%s)" % " | ".join(x.replace("\n", " ") for x in msgs[-3:]),
           sm.output()[-800:] + (h.tail(log, 10) if log else ""))
    up = log is not None and sm.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    tap.ok(up, "SUBNET UP in the ExecStart's log file %s" % log, sm.output()[-800:] + h.tail(log or "", 10))
    pid = 0
    m = re.match(r"\s*(\d+)\s*$", h.read(pidfile)) if pidfile else None
    pid = int(m.group(1)) if m else 0
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
tap.done()
