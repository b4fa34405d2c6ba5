#!/usr/bin/env python3
"""60-console.t - the operator's console on a running ibsm (doc/console.md), judged from outside:
over the unix socket with ibsm-cli (exit status, text and --json), then over loopback TCP with a
plain socket client. `status` shows MASTER and the heavy-sweep count; `resweep heavy`,
`reroute` and `update_desc` each cause one more heavy sweep (the count and the log's STATS
lines); `priority 15` is what `sminfo` (infiniband-diags) reads from the SM; `loglevel 0x1`
stops the INFO lines and `loglevel 0x3` brings them back; `sweep off` stops the light sweeps
and `sweep on` restarts them; portstatus and switchbalance agree with the net file. A client
sending binary garbage, an over-long line or a flood gets an error line and is closed, a
ninth client is refused, and saquery keeps answering throughout. The socket is 0600; the TCP
console listens on 127.0.0.1 only; a socket path in a directory that is not ours alone is an
ERROR line and the SM comes up without a console. Every process is stopped by pid."""
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=48, timeout=600, need=("sminfo", "saquery"))
net = h.need_fabric(tap, "ftree-small.net")
CLI = os.path.join(h.build_dir(), "ibsm-cli")
if not os.access(CLI, os.X_OK):
    tap.bail_out("%s not built (run make)" % CLI)


def cli(sock, *args, timeout=30):
    r = subprocess.run([CLI, "--socket", sock] + list(args), capture_output=True, text=True,
                       timeout=h.patience(timeout))
    return r.returncode, r.stdout, r.stderr


def cli_json(sock, *args):
    rc, out, err = cli(sock, "--json", *args)
    try:
        return rc, json.loads(out)
    except ValueError:
        return rc, {"_raw": out + err}


def wait_until(cond, timeout=POLL_S, step=0.1):
    end = h.deadline(timeout)
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def heavy_count(sock):
    rc, j = cli_json(sock, "status")
    return j.get("heavy_sweeps", -1) if rc == 0 else -1


def saquery_ok(sim):
    r = sim.run(["saquery", "-N"], timeout=30)
    return r.rc == 0 and "NodeRecord" in r.out, r.describe() if r.rc else ""


class Conn:
    """A raw client of the socket protocol (unix path or TCP port)."""

    def __init__(self, where):
        if isinstance(where, int):
            self.s = socket.create_connection(("127.0.0.1", where), timeout=10)
        else:
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.s.settimeout(10)
            self.s.connect(where)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def reply(self, timeout=15):
        """Everything up to the status line (.OK / .ERR N), or up to EOF; (text, status, eof)."""
        end = h.deadline(timeout)
        while True:
            m = re.search(rb"(?m)^\.(OK|ERR -?\d+)\n", self.buf)
            if m:
                text, status = self.buf[:m.start()], m.group(1).decode()
                self.buf = self.buf[m.end():]
                return text.decode(errors="replace"), status, False
            if time.time() > end:
                return self.buf.decode(errors="replace"), None, False
            try:
                self.s.settimeout(max(0.1, end - time.time()))
                chunk = self.s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                return self.buf.decode(errors="replace"), None, True
            self.buf += chunk

    def closed(self, timeout=10):
        """True when the server closed the connection (EOF) within TIMEOUT."""
        end = h.deadline(timeout)
        while time.time() < end:
            try:
                self.s.settimeout(0.5)
                chunk = self.s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return True
            if not chunk:
                return True
            self.buf += chunk
        return False

    def close(self):
        self.s.close()


def stats_lines(log, offset):
    return len(re.findall(r"STS-0003", du.since(log, offset)))


with h.Sim(net) as sim:
    n_nodes, n_sw = len(sim.netfile.nodes), len(sim.netfile.switches())
    log = sim.path("ibsm.log")
    cdir = sim.path("console")
    sock = os.path.join(cdir, "ibsm.sock")
    sm = sim.start_sm(["-f", log, "-s", "1", "--console_socket", sock], host="h1", name="ibsm")
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    tap.ok(up and wait_until(lambda: os.path.exists(sock), 10),
           "daemon comes up with its console socket (default console: socket)", h.tail(log))

    # ---- the socket itself
    st = os.stat(sock) if os.path.exists(sock) else None
    dst = os.stat(cdir) if os.path.exists(cdir) else None
    tap.ok(st and stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
           and dst and stat.S_IMODE(dst.st_mode) == 0o700,
           "the socket is mode 0600 in a directory made 0700",
           "socket %s, dir %s" % (oct(st.st_mode) if st else None, oct(dst.st_mode) if dst else None))

    # ---- status, text and JSON
    rc, out, err = cli(sock, "status")
    m = re.search(r"Heavy sweeps\s*:\s*(\d+)", out)
    tap.ok(rc == 0 and re.search(r"SM state\s*:\s*MASTER", out) and m and int(m.group(1)) >= 1,
           "ibsm-cli status: exit 0, MASTER and the sweep count", out + err)
    rc, j = cli_json(sock, "status")
    tap.ok(rc == 0 and j.get("ok") is True and j.get("state") == "MASTER" and j.get("subnet_up") is True
           and j.get("nodes") == n_nodes and j.get("switches") == n_sw,
           "ibsm-cli --json status: one JSON object, MASTER, SUBNET UP, %d nodes, %d switches"
           % (n_nodes, n_sw), repr(j)[:1500])
    rc, out, err = cli(sock, "help")
    want = ["help", "version", "status", "loglevel", "priority", "resweep", "reroute", "sweep",
            "portstatus", "switchbalance", "lidbalance", "dump_conf", "update_desc", "quit"]
    missing = [c for c in want if not re.search(r"(?m)^\s+%s\b" % c, out)]
    tap.ok(rc == 0 and not missing, "help lists OpenSM's commands", "missing: %s\n%s" % (missing, out))
    rc, out, err = cli(sock, "version")
    r = subprocess.run([h.ibsm_path(), "--version"], capture_output=True, text=True)
    ver = r.stdout.split()[1] if len(r.stdout.split()) > 1 else "?"
    tap.ok(rc == 0 and out.strip() == "ibsm " + ver, "version: the binary's (%s)" % ver, out + err)
    rc, out, err = cli(sock, "nosuchcommand")
    tap.ok(rc == 1 and "nosuchcommand" in err, "an unknown command: exit 1 and says which", out + err)
    rc, out, err = cli(sock, "priority", "16")
    tap.ok(rc == 1 and "0 and 15" in err, "priority 16: refused, exit 1", out + err)
    rc, out, err = cli(sock + ".missing", "status")
    tap.ok(rc == 2 and "cannot connect" in err, "no console at the path: exit 2", out + err)

    # ---- resweep heavy, reroute, update_desc: one heavy sweep each
    for cmd in (["resweep", "heavy"], ["reroute"], ["update_desc"]):
        before = heavy_count(sock)
        off = du.size(log)
        rc, out, err = cli(sock, *cmd)
        after = wait_until(lambda: heavy_count(sock) > before and heavy_count(sock), POLL_S)
        swept = wait_until(lambda: stats_lines(log, off) >= 1, 10)
        tap.ok(rc == 0 and before >= 1 and after and after > before and swept,
               "%s: one more heavy sweep (count %d -> %s, STATS in the log)" % (" ".join(cmd), before, after),
               out + err + h.tail(log, 8))
    rc, out, err = cli(sock, "resweep", "sideways")
    tap.ok(rc == 1 and "usage" in err, "resweep with a bad kind: usage, exit 1", out + err)

    # ---- priority 15 seen by sminfo
    rc, out, err = cli(sock, "priority", "15")
    r = sim.run(["sminfo"], timeout=20)
    m = re.search(r"priority (\d+)", r.out)
    tap.ok(rc == 0 and m and int(m.group(1)) == 15, "priority 15: sminfo reads priority 15 from the SM",
           out + err + r.describe())
    rc, j = cli_json(sock, "priority")
    rc2, out2, _ = cli(sock, "dump_conf")
    tap.ok(j.get("priority") == 15 and re.search(r"(?m)^sm_priority 15$", out2),
           "priority and dump_conf show 15", repr(j) + out2[:600])
    cli(sock, "priority", "0")
    r = sim.run(["sminfo"], timeout=20)
    m = re.search(r"priority (\d+)", r.out)
    tap.ok(m and int(m.group(1)) == 0, "priority 0: sminfo reads 0 again", r.describe())

    # ---- loglevel changes what is logged
    rc, out, err = cli(sock, "loglevel", "0x1")
    off = du.size(log)
    before = heavy_count(sock)
    cli(sock, "resweep", "heavy")
    wait_until(lambda: heavy_count(sock) > before, POLL_S)
    time.sleep(0.5)  # an observation window: what must not be logged
    quiet = du.since(log, off)
    tap.ok(rc == 0 and "0x01" in out and not re.search(r"\bINFO\b", quiet),
           "loglevel 0x1: a heavy sweep logs no INFO line", out + err + quiet[-1500:])
    rc, out, err = cli(sock, "loglevel", "error,info")
    off = du.size(log)
    before = heavy_count(sock)
    cli(sock, "resweep", "heavy")
    wait_until(lambda: heavy_count(sock) > before, POLL_S)
    back = wait_until(lambda: stats_lines(log, off) >= 1, 10)
    tap.ok(rc == 0 and "0x03" in out and back, "loglevel error,info (0x3): the sweep's INFO lines are back",
           out + err + h.tail(log, 5))
    rc, out, err = cli(sock, "loglevel", "loud")
    tap.ok(rc == 1, "loglevel with an unknown name: exit 1", out + err)

    # ---- sweep off / on: the light sweeps (-s 1) stop and start again
    rc, out, err = cli(sock, "sweep", "off")
    # a light sweep under way when it was said finishes first: wait until the count stands
    # still for 1.5 s, then observe 3 s more
    j1 = {}
    end = h.deadline(POLL_S)
    while time.time() < end:
        _, j0 = cli_json(sock, "status")
        time.sleep(1.5)
        _, j1 = cli_json(sock, "status")
        if j0.get("light_sweeps") == j1.get("light_sweeps"):
            break
    time.sleep(3)  # an observation window: what must not happen
    _, j2 = cli_json(sock, "status")
    tap.ok(rc == 0 and j2.get("sweeping") is False and j1.get("light_sweeps") == j2.get("light_sweeps"),
           "sweep off: no light sweep in 3 s (%s -> %s)" % (j1.get("light_sweeps"), j2.get("light_sweeps")),
           out + err)
    cli(sock, "sweep", "on")
    grew = wait_until(lambda: cli_json(sock, "status")[1].get("light_sweeps", 0) > j2.get("light_sweeps", 0), 10)
    tap.ok(grew, "sweep on: light sweeps again")

    # ---- portstatus, switchbalance, lidbalance against the net file
    rc, j = cli_json(sock, "portstatus")
    tap.ok(rc == 0 and j.get("nodes") == n_nodes and j.get("active", 0) > 0 and j.get("down", 1) == 0,
           "portstatus: %d nodes scanned, ports active, none down" % n_nodes, repr(j)[:800])
    rc, j = cli_json(sock, "portstatus", "switch")
    tap.ok(rc == 0 and j.get("nodes") == n_sw, "portstatus switch: the %d switches" % n_sw, repr(j)[:800])
    rc, j = cli_json(sock, "switchbalance", "verbose")
    sws = j.get("switches", [])
    tap.ok(rc == 0 and len(sws) == n_sw and all(s.get("ports") for s in sws),
           "switchbalance verbose: every switch with its inter-switch ports", repr(j)[:800])
    rc, out, err = cli(sock, "lidbalance")
    tap.ok(rc == 0, "lidbalance answers", out + err)
    rc, out, err = cli(sock, "switchbalance", "0x1234")
    tap.ok(rc == 1 and "not found" in err, "switchbalance of an unknown GUID: exit 1", out + err)
    # querylid: the LID sminfo names for the SM leads to the SM's own port; dump_portguid
    info, r = sim.sminfo()
    _, st_j = cli_json(sock, "status")
    rc, j = cli_json(sock, "querylid", str(info[1]) if info else "0")
    tap.ok(info and rc == 0 and j.get("port_guid") == st_j.get("port_guid") == "0x%016x" % info[0]
           and j.get("desc") == sim.netfile.desc["h1"],
           "querylid of the SM's LID (sminfo): the SM's port GUID and node", repr(j)[:600] + r.describe())
    leaves = [n for n in sim.netfile.switches() if "leaf" in sim.netfile.desc[n]]
    rc, j = cli_json(sock, "dump_portguid", "^leaf", "^nomatch$")
    tap.ok(rc == 0 and len(j.get("port_guids", [])) == len(leaves) == 4,
           "dump_portguid ^leaf: one GUID per leaf switch (%d)" % len(leaves), repr(j)[:600])

    # ---- hostile clients; saquery answers throughout
    c = Conn(sock)
    c.send(b"\x00\x01\xfe\xff garbage\n")
    text, status, _ = c.reply()
    tap.ok(status and status.startswith("ERR") and "error" in text and c.closed(),
           "binary garbage: an error line, then the connection is closed", "%r %r" % (text, status))
    c.close()
    c = Conn(sock)
    c.send(b"A" * 5000)
    text, status, _ = c.reply()
    tap.ok(status and "too long" in text and c.closed(),
           "a line over 4 KiB: an error line, then closed", "%r %r" % (text[-300:], status))
    c.close()
    c = Conn(sock)
    c.send(b"version\n" * 400)
    flood, eof = "", False
    end = h.deadline(20)
    while time.time() < end and not eof:
        text, status, eof = c.reply(5)
        flood += text
        if status and status.startswith("ERR"):
            eof = c.closed()
            break
    tap.ok("flood" in flood and eof, "a flood of 400 commands: an error line, then closed",
           flood[-400:])
    c.close()
    tap.check("saquery answers after the garbage and the flood", saquery_ok(sim))

    # floods and garbage from four clients over and over while saquery asks
    stop_flood = threading.Event()
    flood_conns = [0]

    def flooder(payload):
        while not stop_flood.is_set():
            try:
                f = Conn(sock)
                f.send(payload)
                f.closed(2)
                f.close()
                flood_conns[0] += 1
            except OSError:
                time.sleep(0.05)
    threads = [threading.Thread(target=flooder, args=(p,), daemon=True)
               for p in (b"status\n" * 300, b"\x00" * 3000, b"B" * 6000, b"json portstatus\n" * 200)]
    for t in threads:
        t.start()
    t0 = time.time()
    answers = [saquery_ok(sim) for _ in range(3)]
    took = time.time() - t0
    stop_flood.set()
    for t in threads:
        t.join(10)
    tap.ok(all(a[0] for a in answers) and flood_conns[0] >= 4 and sm.alive(),
           "saquery answers 3 times (%.1f s) while 4 clients flood the console (%d connections cut)"
           % (took, flood_conns[0]), "; ".join(a[1] for a in answers if not a[0]))
    conns = [Conn(sock) for _ in range(8)]
    ninth = Conn(sock)
    text, status, _ = ninth.reply()
    tap.ok(status and "too many" in text, "a ninth client is refused with an error line", repr(text))
    ninth.close()
    rc8, out8, _ = (None, "", "")
    for x in conns:
        x.close()
    ok_after = wait_until(lambda: cli(sock, "status")[0] == 0, 10)
    tap.ok(ok_after, "once the eight close, ibsm-cli is served again")
    conns = [Conn(sock) for _ in range(3)]
    for x in conns:
        x.send(b"status\n")
    replies = [x.reply() for x in conns]
    tap.ok(all(s == "OK" and "MASTER" in t for t, s, _ in replies),
           "three clients at once each get their own status reply", repr(replies)[:800])
    for x in conns:
        x.send(b"quit\n")
    tap.ok(all(x.closed() for x in conns), "quit closes each connection")
    for x in conns:
        x.close()
    tap.check("saquery answers with the console busy", saquery_ok(sim))
    tap.ok(sm.alive() and cli(sock, "status")[0] == 0, "the SM runs on, its console answering")

    # ---- the socket goes away with the SM
    rc = du.signal_and_wait(sm, 15, POLL_S)
    tap.ok(rc == 0 and not os.path.exists(sock), "SIGTERM: exit 0 and the socket is removed",
           "rc %s, exists %s" % (rc, os.path.exists(sock)))
    sm.stop()

    # ---- loopback TCP
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))  # a port free now, chosen by the kernel: no clash with a test beside us
    port = probe.getsockname()[1]
    probe.close()
    log2 = sim.path("ibsm2.log")
    sm = sim.start_sm(["-f", log2, "-s", "0", "-q", "loopback", "-C", str(port)], host="h1", name="ibsm2")
    up = sm.wait_for(log2, r"SUBNET UP", POLL_S)
    tap.ok(up and re.search(r"CON-0001.*127\.0\.0\.1:%d" % port, h.read(log2)),
           "-q loopback -C %d: the console listens on 127.0.0.1:%d" % (port, port), h.tail(log2))
    listen = [l.split() for l in h.read("/proc/net/tcp").splitlines()[1:]]
    mine = [l[1] for l in listen if len(l) > 3 and l[3] == "0A" and l[1].endswith(":%04X" % port)]
    tap.ok(mine == ["0100007F:%04X" % port], "it listens on 127.0.0.1 only (/proc/net/tcp: %s)" % mine)
    c = Conn(port)
    c.send(b"status\r\n")
    text, status, _ = c.reply()
    m = re.search(r"Heavy sweeps\s*:\s*(\d+)", text)
    tap.ok(status == "OK" and "MASTER" in text and m, "TCP: status shows MASTER and the sweep count", text)
    before = int(m.group(1)) if m else -1
    off = du.size(log2)
    c.send(b"resweep heavy\n")
    text, status, _ = c.reply()

    def tcp_count():
        c.send(b"json status\n")
        t, s, _ = c.reply()
        try:
            return json.loads(t).get("heavy_sweeps", -1)
        except ValueError:
            return -1
    after = wait_until(lambda: tcp_count() > before and tcp_count(), POLL_S)
    tap.ok(status == "OK" and after and after > before and stats_lines(log2, off) >= 1,
           "TCP: resweep heavy causes one (%d -> %s)" % (before, after), text)
    c.send(b"priority 15\n")
    text, status, _ = c.reply()
    r = sim.run(["sminfo"], timeout=20)
    m = re.search(r"priority (\d+)", r.out)
    tap.ok(status == "OK" and m and int(m.group(1)) == 15, "TCP: priority 15 seen by sminfo", text + r.describe())
    c.send(b"\xff\xfb\x01\n")  # a telnet negotiation is not a command line
    text, status, _ = c.reply()
    tap.ok(status and status.startswith("ERR") and c.closed(), "TCP: garbage gets an error line, then closed",
           repr(text))
    c.close()
    tap.check("saquery answers", saquery_ok(sim))
    rc = du.signal_and_wait(sm, 15, POLL_S)
    sm.stop()

    # ---- a socket directory that is not ours alone: ERROR, the SM runs without a console
    bad = sim.path("open")
    os.makedirs(bad)
    os.chmod(bad, 0o777)
    log3 = sim.path("ibsm3.log")
    sm = sim.start_sm(["-f", log3, "-s", "0", "--console_socket", os.path.join(bad, "c.sock")], host="h1",
                      name="ibsm3")
    up = sm.wait_for(log3, r"SUBNET UP", POLL_S)
    text = h.read(log3)
    tap.ok(up and re.search(r"ERR .*CON-0003.*not ours", text) and not os.path.exists(os.path.join(bad, "c.sock")),
           "a world-writable socket directory: ERROR CON-0003, no socket, SUBNET UP all the same", h.tail(log3))
    sm.stop()

tap.done()
