#!/usr/bin/env python3
"""62-metrics.t - the Prometheus endpoint (metrics_port) scraped with curl, its values judged
against what the diags and the test itself did:
- the page is the text format 0.0.4 (every sample of a family declared by # HELP and # TYPE,
  every line parses, Content-Type text/plain; version=0.0.4), served on 127.0.0.1 only
  (/proc/net/tcp lists the listener on 127.0.0.1 and nowhere else);
- the SM's state (master, SUBNET UP) as sminfo reads it; the nodes by type and the links as
  ibnetdiscover sees them; the SMPs sent as the SMP counter between ibsm and the wire saw them;
- SA requests: N `saquery NR <lid>` calls move ibsm_sa_requests_total{attribute="NodeRecord"}
  and the latency histogram's _count by exactly N (and the buckets are cumulative);
- heavy sweeps by result after a SIGHUP, light sweeps moving with sweep_interval;
- the perfmgr's counters (--perfmgr --perfmgr_sweep_time_s 2): a SymbolErrorCounter raised in
  the simulator shows up for that switch port with perfquery's value;
- a client that sends garbage, an over-long request, a POST or an unknown path gets an error
  status; clients that connect and send nothing are cut off while saquery keeps answering.
Conditions are polled with a generous bound; seconds are never judged."""
import os
import re
import signal
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=16, timeout=400, need=("curl", "saquery", "sminfo", "perfquery", "ibnetdiscover"))
net = h.need_fabric(tap, "ftree-small.net")

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? '
                       r'(-?[0-9.eE+-]+|\+Inf|NaN)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def scrape(port, path="/metrics", extra=()):
    return h.run(["curl", "-sS", "-m", "10", "-D", "-"] + list(extra) +
                 ["http://127.0.0.1:%d%s" % (port, path)], timeout=20)


def parse(text):
    """(samples {(name, frozenset(labels))): value}, problems [])."""
    head, _, body = text.replace("\r\n", "\n").partition("\n\n")  # curl -D -: headers first
    samples, problems, typed, helped = {}, [], {}, set()
    for line in body.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            w = line.split()
            typed[w[2]] = w[3]
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            problems.append("unparsable: %r" % line)
            continue
        name, labels = m.group(1), frozenset(LABEL_RE.findall(m.group(2) or ""))
        fam = re.sub(r'_(bucket|sum|count)$', '', name) if name not in typed else name
        if fam not in typed or fam not in helped:
            problems.append("no # TYPE/# HELP for %s" % name)
        if (name, labels) in samples:
            problems.append("duplicate sample %s%s" % (name, sorted(labels)))
        samples[(name, labels)] = float(m.group(3))
    return samples, problems, head


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def total(samples, name, **labels):
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def raw_request(port, data, read_timeout=10.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        return out.decode(errors="replace")
    except OSError as e:
        return "error: %s" % e
    finally:
        s.close()


def listeners(port):
    """Local addresses listening on PORT, from /proc/net/tcp and tcp6."""
    out = []
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(f).read().splitlines()[1:]
        except OSError:
            continue
        for l in lines:
            w = l.split()
            addr, p = w[1].split(":")
            if int(p, 16) == port and w[3] == "0A":
                out.append(addr)
    return out


with h.Sim(net) as sim:
    port = free_port()
    conf = sim.path("metrics.yaml")
    with open(conf, "w") as f:
        f.write("metrics_port: %d\nsweep_interval: 1\n" % port)
    log = sim.path("ibsm.log")
    sm = sim.start_sm(["-F", conf, "-f", log, "--perfmgr", "--perfmgr_sweep_time_s", "2"], host="h1",
                      env=h.with_rmpp(sim.env("h1")))
    up = sm.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    snap, _ = du.poll_fabric(sim, lambda s: h.check_routes(s)[0], POLL_S)
    tap.ok(up and h.check_routes(snap)[0], "ibsm with metrics_port %d brings the subnet up" % port, h.tail(log))

    r = scrape(port)
    samples, problems, head = parse(r.out)
    tap.ok(r.rc == 0 and "200 OK" in head and "text/plain; version=0.0.4" in head and samples and not problems,
           "curl GET /metrics: 200, text format 0.0.4, %d samples, each declared by # HELP and # TYPE"
           % len(samples), r.describe() + "; ".join(problems[:5]))
    where = listeners(port)
    tap.ok(where == ["0100007F"], "it listens on 127.0.0.1:%d only (/proc/net/tcp: %s)" % (port, where))

    info, sr = sim.sminfo("h9")
    tap.ok(value(samples, "ibsm_sm_state", state="master") == 1 and value(samples, "ibsm_subnet_up") == 1 and
           info is not None and info[2] == 3,
           "ibsm_sm_state{state=\"master\"} 1 and ibsm_subnet_up 1, as sminfo says (state %s)"
           % (info[2] if info else None), sr.text)

    n_sw = sum(1 for n in snap.nodes.values() if n.type == "SW")
    n_ca = len(snap.nodes) - n_sw
    got = (value(samples, "ibsm_fabric_nodes", type="switch"), value(samples, "ibsm_fabric_nodes", type="ca"),
           value(samples, "ibsm_fabric_links"))
    tap.ok(got == (n_sw, n_ca, len(snap.links())),
           "nodes by type and links (%s) are ibnetdiscover's: %d switches, %d CAs, %d links"
           % (got, n_sw, n_ca, len(snap.links())))

    # SMPs: what the counter between ibsm and the wire saw ibsm send, while ibsm stands still
    # (no light sweep: a SIGSTOP freezes it between the two reads; the scrape needs it running)
    c = sm.counts()
    sent = value(parse(scrape(port).out)[0], "ibsm_smps_sent_total")
    c2 = sm.counts()
    want = c.requests()
    tap.ok(sent is not None and c.valid and want <= sent <= c2.requests(),
           "ibsm_smps_sent_total (%s) between the SMP counter's requests before and after the scrape (%d, %d)"
           % (sent, want, c2.requests()))

    # SA requests: N saquery NR calls, counted by attribute, and the histogram's count
    lids = sorted(n.lid for n in snap.nodes.values() if n.type == "SW")[:5]
    s0 = parse(scrape(port).out)[0]
    okq = 0
    for lid in lids:
        okq += sim.run(["saquery", "NR", str(lid)], host="h3", timeout=20).rc == 0
    s1 = parse(scrape(port).out)[0]
    d_req = total(s1, "ibsm_sa_requests_total", attribute="NodeRecord") - \
        total(s0, "ibsm_sa_requests_total", attribute="NodeRecord")
    d_cnt = (value(s1, "ibsm_sa_request_duration_seconds_count", attribute="NodeRecord") or 0) - \
        (value(s0, "ibsm_sa_request_duration_seconds_count", attribute="NodeRecord") or 0)
    d_ok = total(s1, "ibsm_sa_requests_total", attribute="NodeRecord", status="ok") - \
        total(s0, "ibsm_sa_requests_total", attribute="NodeRecord", status="ok")
    tap.ok(okq == len(lids) and d_req == len(lids) and d_cnt == len(lids) and d_ok == len(lids),
           "%d saquery NR calls: NodeRecord requests +%d (status ok +%d), latency histogram count +%d"
           % (len(lids), d_req, d_ok, d_cnt))
    buckets = sorted(((float("inf") if dict(ls)["le"] == "+Inf" else float(dict(ls)["le"])), v)
                     for (n, ls), v in s1.items()
                     if n == "ibsm_sa_request_duration_seconds_bucket" and dict(ls)["attribute"] == "NodeRecord")
    cum = [v for _, v in buckets]
    tap.ok(buckets and cum == sorted(cum) and buckets[-1][0] == float("inf") and
           cum[-1] == value(s1, "ibsm_sa_request_duration_seconds_count", attribute="NodeRecord"),
           "the NodeRecord latency buckets are cumulative and +Inf equals the count (%s)" % cum)

    # sweeps: a SIGHUP is one more heavy sweep that ends up; light sweeps go on every second
    heavy0 = total(s1, "ibsm_sweeps_total", kind="heavy")
    up0 = value(s1, "ibsm_sweeps_total", kind="heavy", result="up")
    light0 = total(s1, "ibsm_sweeps_total", kind="light")
    mark = du.size(log)
    sm.popen.send_signal(signal.SIGHUP)
    du.wait_text(log, mark, r"SWP-000[256]", POLL_S, sm.alive)
    end, s2 = h.deadline(POLL_S), {}
    while time.time() < end:
        s2 = parse(scrape(port).out)[0]
        if total(s2, "ibsm_sweeps_total", kind="heavy") > heavy0 and total(s2, "ibsm_sweeps_total", kind="light") > light0 + 1:
            break
        time.sleep(0.5)
    tap.ok(total(s2, "ibsm_sweeps_total", kind="heavy") == heavy0 + 1 and
           value(s2, "ibsm_sweeps_total", kind="heavy", result="up") == up0 + 1 and
           total(s2, "ibsm_sweeps_total", kind="light") >= light0 + 2,
           "SIGHUP: heavy sweeps %d -> %d (up %s -> %s); light sweeps %d -> %d"
           % (heavy0, total(s2, "ibsm_sweeps_total", kind="heavy"), up0,
              value(s2, "ibsm_sweeps_total", kind="heavy", result="up"), light0,
              total(s2, "ibsm_sweeps_total", kind="light")))
    phases = {dict(ls)["phase"] for (n, ls) in s2 if n == "ibsm_sweep_phase_seconds_total"}
    tap.ok({"discovery", "sminfo"} <= phases and
           value(s2, "ibsm_sweep_phase_smps_total", phase="discovery") >= 2 * len(snap.nodes),
           "seconds and SMPs per phase, summed over the heavy sweeps (phases %s)" % sorted(phases))

    # perfmgr: a counter raised in the simulator, read back by perfquery and by the metrics
    leaf = sim.node(snap, "leaf1")
    sim.console('PerformanceSet "leaf1"[5] PortCounters.SymbolErrorCounter=500')
    pq = sim.run(["perfquery", str(leaf.lid), "5"], host="h3", timeout=20)
    m = re.search(r"SymbolErrorCounter:\.*(\d+)", pq.out)
    want = int(m.group(1)) if m else None
    end, got = h.deadline(POLL_S), None
    while time.time() < end:
        got = value(parse(scrape(port).out)[0], "ibsm_perfmgr_symbol_err_total",
                    node_guid="0x%016x" % leaf.guid, node_desc=leaf.desc, port="5")
        if got == want:
            break
        time.sleep(0.5)
    tap.ok(want == 500 and got == want,
           "ibsm_perfmgr_symbol_err_total for leaf1 port 5 is %s, perfquery reads %s" % (got, want),
           pq.text[-400:])

    # clients that misbehave
    bad = raw_request(port, b"\x00\x01\x02garbage\r\n\r\n")
    long_ = raw_request(port, b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n")
    post = raw_request(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    nope = raw_request(port, b"GET /nope HTTP/1.0\r\n\r\n")
    tap.ok(bad.startswith("HTTP/1.1 400") and long_.startswith("HTTP/1.1 431") and
           post.startswith("HTTP/1.1 405") and nope.startswith("HTTP/1.1 404"),
           "garbage 400, an over-long request 431, POST 405, an unknown path 404",
           "%r %r %r %r" % (bad[:40], long_[:40], post[:40], nope[:40]))
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    t0 = time.time()
    q = sim.run(["saquery", "-s"], host="h3", timeout=30)
    tap.ok(q.rc == 0 and sm.alive(), "20 idle connections: saquery -s answered meanwhile (%.1f s)" %
           (time.time() - t0), q.describe())
    end, done = h.deadline(POLL_S), set()
    while time.time() < end and len(done) < len(idle):
        for i, s in enumerate(idle):
            if i in done:
                continue
            s.settimeout(0.05)
            try:
                if s.recv(4096) == b"":
                    done.add(i)
            except socket.timeout:
                pass
            except OSError:
                done.add(i)
    closed = len(done)
    for s in idle:
        s.close()
    r = scrape(port)
    tap.ok(closed == len(idle) and r.rc == 0 and "200 OK" in r.out,
           "they are cut off (408) after their time, and the next scrape is served",
           "closed %d of %d; %s" % (closed, len(idle), r.describe()))
    tap.ok(value(parse(r.out)[0], "ibsm_metrics_scrapes_total") >= 6, "the scrapes are counted")
    rc = du.signal_and_wait(sm, signal.SIGTERM)
    sm.stop()
    tap.ok(rc == 0 and not listeners(port), "SIGTERM: exit 0, the port is closed (status %s)" % rc)
tap.done()
