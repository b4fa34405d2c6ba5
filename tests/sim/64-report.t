#!/usr/bin/env python3
"""64-report.t - the fabric report (doc/report.md) on a simulated fabric, rendered by headless
Chromium and judged by its structure, not its pixels. ibsm runs with fabric_report_file: the
file appears after the first heavy sweep and again, for a new generation, after `resweep
heavy`; `ibsm-cli report --html FILE` writes the same document. What the diags read
(ibnetdiscover, dump_fts) is the reference: Chromium's DOM has one switch element per switch
(same GUIDs) and one line per switch-to-switch link, every link's two routed loads equal the
CA-to-CA routes the test follows through the LFTs read back, and the quality table's numbers
(routes, max and mean link load, the worst of the shift permutations) equal the test's own
count; the multicast groups are those saquery -g lists; the screenshot is a PNG of the window's size that is not blank. A 4x4 torus is drawn
as a grid with its wrap-around links, minhop's credit loops on it are named, and an error
counter raised in the simulator appears in the performance manager's section. Chromium is a dependency (`make deps`): missing, the test fails."""
import html.parser
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 60
SHIFTS = 16
WIN = (1280, 960)

tap = h.start(plan=19, timeout=600, need=("chromium", "saquery"))


def cli(sock, *args, timeout=30):
    argv = [os.path.join(h.build_dir(), "ibsm-cli"), "--socket", sock] + list(args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=h.patience(timeout))


def chromium(scratch, *args, timeout=90):
    """Headless Chromium in its own profile directory, outside the simulator's preload."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)}
    env["HOME"] = scratch
    argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--user-data-dir=" + os.path.join(scratch, "chromium-profile")] + list(args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=h.patience(timeout), env=env)


class Dom(html.parser.HTMLParser):
    """The elements of a DOM dump: (tag, attrs) in order, and the text of elements by id."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.text_by_id, self._open = [], {}, []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        self._open.append(a.get("id"))
        if a.get("id"):
            self.text_by_id[a["id"]] = ""

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        for i in self._open:
            if i:
                self.text_by_id[i] += data

    def with_class(self, tags, cls):
        return [a for t, a in self.elements if t in tags.split("|") and cls in (a.get("class") or "").split()]


def png_info(path):
    """(width, height, distinct byte values of the decompressed image data) or None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    w, hgt = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        if typ == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return w, hgt, len(set(zlib.decompress(idat)))


def expected(snap):
    """What the report must say, from the diags: loads {(switch guid, port): routes} of every
    directed switch-to-switch link, the CA-to-CA route count, undelivered routes, and the
    shift permutations (k, max load) as the report picks them."""
    cas = [p for p in snap.ca_ports() if p.peer and p.lid]
    load = {}
    for n in snap.switches():
        for p in n.ports.values():
            peer = snap.nodes.get(p.peer[0]) if p.peer else None
            if peer is not None and peer.type == "SW":
                load[(n.guid, p.num)] = 0

    def switch_hops(links):
        return [l for l in links if l in load]

    routes = undelivered = 0
    for s in cas:
        for d in cas:
            if s is d:
                continue
            routes += 1
            links, ok = h.route_links(snap, s, d.lid)
            undelivered += not ok
            for l in switch_hops(links):
                load[l] += 1
    n = len(cas)
    count = min(n - 1, SHIFTS)
    shifts = []
    for j in range(count):
        k = j + 1 if count == n - 1 else 1 + j * (n - 2) // (count - 1)
        sl = {}
        for i, s in enumerate(cas):
            links, _ = h.route_links(snap, s, cas[(i + k) % n].lid)
            for l in switch_hops(links):
                sl[l] = sl.get(l, 0) + 1
        shifts.append((k, max(sl.values()) if sl else 0))
    return load, routes, undelivered, n, shifts


def generation_of(text):
    m = re.search(r'id="s-generation">(\d+)<', text or "")
    return int(m.group(1)) if m else None


with h.Sim(h.need_fabric(tap, "ftree-small.net")) as sim:
    log = sim.path("ibsm.log")
    sock = sim.path("console.sock")
    report = sim.path("fabric.html")
    # IBSM_REPORT_SYNC_WORK=0: computed on the report's own thread, as on a big fabric (the
    # torus below takes the main-thread path of small fabrics)
    sm = sim.start_sm(["-f", log, "-s", "0", "--console_socket", sock,
                       "--fabric_report_file", report], name="ibsm",
                      env=sim.env(rmpp=True, IBSM_REPORT_SYNC_WORK="0"))
    try:
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        written = sm.wait_for(log, r"FRP-0002 .*written to", 30)
        text = h.read(report) or ""
        tap.ok(up and written and text.startswith("<!DOCTYPE html>"),
               "SUBNET UP, then fabric_report_file written (FRP-0002)", h.tail(log))
        tap.ok(text.rstrip().endswith("</html>") and "<script" not in text and "src=" not in text
               and "href=" not in text and len(text) < 4 << 20,
               "one self-contained HTML document: no script, nothing fetched (%d bytes)" % len(text))

        # ---- ibsm-cli report --html FILE, report quality --json
        got = sim.path("cli.html")
        r = cli(sock, "report", "--html", got)
        cli_text = h.read(got) or ""
        tap.ok(r.returncode == 0 and cli_text.startswith("<!DOCTYPE html>")
               and generation_of(cli_text) == generation_of(text) is not None,
               "ibsm-cli report --html FILE writes the report (generation %s)" % generation_of(cli_text),
               r.stderr + cli_text[:300])
        r = cli(sock, "--json", "report", "quality")
        try:
            qj = json.loads(r.stdout)
        except ValueError:
            qj = {}

        # ---- the reference: the diags' view
        snap = sim.collect()
        load, routes, undelivered, n_cas, shifts = expected(snap)
        scratch = sim.path("chromium")
        os.makedirs(scratch, exist_ok=True)
        c = chromium(scratch, "--dump-dom", "file://" + report)
        dom = Dom(c.stdout)
        sw_guids = sorted(int(a["data-guid"], 16) for a in dom.with_class("g", "sw"))
        want_guids = sorted(n.guid for n in snap.switches())
        tap.ok(c.returncode == 0 and sw_guids == want_guids,
               "Chromium's DOM: one switch element per switch, same GUIDs (%d)" % len(sw_guids),
               "chromium rc %d: %s\nDOM %s\ndiags %s" % (c.returncode, c.stderr[-500:],
                                                          [hex(g) for g in sw_guids], [hex(g) for g in want_guids]))
        lines = dom.with_class("line|path", "link")
        drawn = {}
        for a in lines:
            drawn[(int(a["data-a"], 16), int(a["data-a-port"]))] = int(a["data-load-ab"])
            drawn[(int(a["data-b"], 16), int(a["data-b-port"]))] = int(a["data-load-ba"])
        tap.ok(len(lines) * 2 == len(load) and set(drawn) == set(load),
               "one line per switch-to-switch link (%d lines, %d directed links in the diags)"
               % (len(lines), len(load)))
        bad = ["%s port %d: report %s, diags %d" % (hex(g), p, drawn.get((g, p)), v)
               for (g, p), v in sorted(load.items()) if drawn.get((g, p)) != v]
        tap.ok(not bad and max(load.values()) > 0,
               "every directed link's routed load equals the routes followed through dump_fts "
               "(max %d)" % max(load.values()), "; ".join(bad[:8]))

        # ---- the quality table against the test's own count
        q = dom.text_by_id
        mean = sum(load.values()) / len(load)
        want = {"q-ca-ports": str(n_cas), "q-routes": str(routes), "q-unrouted": str(undelivered),
                "q-links": str(len(load)), "q-max-load": str(max(load.values())),
                "q-mean-load": "%.2f" % mean}
        diff = ["%s: report %r, diags %r" % (k, q.get(k), v) for k, v in want.items() if q.get(k) != v]
        tap.ok(not diff and undelivered == 0,
               "quality table: CA ports %d, routes %d, max link load %s, mean %.2f as counted from "
               "the diags" % (n_cas, routes, want["q-max-load"], mean), "; ".join(diff))
        worst_k, worst = max(shifts, key=lambda kv: (kv[1], -kv[0]))
        got_list = q.get("q-shift-list", "")
        want_list = ", ".join("%d (%d)" % kv for kv in shifts)
        tap.ok(got_list == want_list and q.get("q-worst-shift") == str(worst_k)
               and q.get("q-worst-shift-load") == str(worst),
               "shift permutations: worst k=%d loads a link with %d routes, every k as the diags "
               "count" % (worst_k, worst), "report: %r worst %r/%r\ndiags:  %r" % (
                   got_list, q.get("q-worst-shift"), q.get("q-worst-shift-load"), want_list))
        tap.ok((q.get("q-credit-loops") or "").strip() == "none" and q.get("q-vls", "").strip() == "0",
               "credit-loop check: none on a fat tree routed by minhop, VL 0 only",
               "%r %r" % (q.get("q-credit-loops"), q.get("q-vls")))
        tap.ok(qj.get("max_load") == max(load.values()) and qj.get("routes") == routes
               and qj.get("credit_loop_channels") == 0,
               "`report quality --json` says the same (max_load %s)" % qj.get("max_load"), r.stdout[:500])

        # ---- partitions and multicast groups: the SA's view (saquery -g) in the report
        r = sim.run(["saquery", "-g"], timeout=30, env=sim.env(rmpp=True))
        sa_groups = sorted((socket.inet_pton(socket.AF_INET6, g), int(m, 16))
                           for g, m in re.findall(r"MGID\.+(\S+)\s+Mlid\.+(0x[0-9A-Fa-f]+)", r.out))
        rows = re.findall(r'<tr class="mcgroup"><td>([0-9a-f:]+)</td><td>(0x[0-9a-f]+)</td>', text)
        rep_groups = sorted((socket.inet_pton(socket.AF_INET6, g), int(m, 16)) for g, m in rows)
        parts = re.findall(r'<tr class="partition"><td>[^<]*</td><td>(0x[0-9a-f]+)</td>', text)
        tap.ok(r.rc == 0 and sa_groups and rep_groups == sa_groups and "0x7fff" in parts,
               "multicast groups as saquery -g lists them (%d), the default partition listed"
               % len(sa_groups), "saquery: %r\nreport: %r\npartitions %r\n%s" % (sa_groups, rep_groups, parts, r.describe()[-800:]))

        # ---- the screenshot: a PNG of the window's size, not blank
        png = os.path.join(scratch, "report.png")
        c = chromium(scratch, "--screenshot=" + png, "--window-size=%d,%d" % WIN,
                     "--hide-scrollbars", "file://" + report)
        info = png_info(png)
        tap.ok(info is not None and info[:2] == WIN and info[2] > 16,
               "screenshot: a %dx%d PNG with %s distinct byte values (not blank)"
               % (WIN + ((info or (0, 0, 0))[2],)), c.stderr[-500:])

        # ---- a heavy sweep from the console: a new generation, the file replaced whole
        gen1 = generation_of(text)
        r = cli(sock, "resweep", "heavy")
        end = h.deadline(POLL_S)
        text2 = text
        while time.time() < end:
            text2 = h.read(report) or ""
            if generation_of(text2) not in (None, gen1):
                break
            time.sleep(0.3)
        tap.ok(r.returncode == 0 and generation_of(text2) is not None and generation_of(text2) > gen1
               and text2.rstrip().endswith("</html>") and not os.path.exists(report + ".tmp"),
               "resweep heavy: the file is written again for generation %s (was %s), whole"
               % (generation_of(text2), gen1), h.tail(log))
    finally:
        sm.stop()
    tap.ok(sm.popen.returncode == 0, "ibsm exits cleanly (status %s)" % sm.popen.returncode,
           sm.output()[-1000:])

    # ---- an unwritable report path: an error logged, the SM goes on
    log2 = sim.path("ibsm2.log")
    sm2 = sim.start_sm(["-f", log2, "-s", "0", "--console_socket", sim.path("c2.sock"),
                        "--fabric_report_file", sim.path("no/such/dir/x.html")], name="ibsm2")
    try:
        up = sm2.wait_for(log2, r"SUBNET UP", POLL_S)
        err = sm2.wait_for(log2, r"FRP-0001 .*no/such/dir/x\.html", 20)
        tap.ok(up and err and sm2.alive(), "a report path that cannot be written: FRP-0001, the SM runs on",
               h.tail(log2))
    finally:
        sm2.stop()

with h.Sim(h.need_fabric(tap, "torus-4x4.net")) as sim:
    log = sim.path("ibsm.log")
    report = sim.path("fabric.html")
    sock = sim.path("c.sock")
    sm = sim.start_sm(["-f", log, "-s", "0", "--console_socket", sock, "--fabric_report_file", report,
                       "--perfmgr", "--perfmgr_sweep_time_s", "1"], name="ibsm")
    try:
        written = sm.wait_for(log, r"FRP-0002 .*written to", POLL_S)
        scratch = sim.path("chromium")
        os.makedirs(scratch, exist_ok=True)
        c = chromium(scratch, "--dump-dom", "file://" + report)
        dom = Dom(c.stdout)
        layout = [a for t, a in dom.elements if a.get("id") == "layout"]
        tap.ok(written and layout and layout[0].get("data-layout") == "grid"
               and "4 x 4 x 1" in dom.text_by_id.get("layout", ""),
               "a 4x4 torus is drawn as a 4 x 4 grid (%s)" % dom.text_by_id.get("layout", "").strip(),
               h.tail(log) + c.stderr[-300:])
        sws = dom.with_class("g", "sw")
        xs = sorted({a.get("data-tier") for a in sws})
        wraps = dom.with_class("path", "wrap")
        tap.ok(len(sws) == 16 and len(dom.with_class("line|path", "link")) == 32 and len(xs) == 4
               and len(wraps) == 8,
               "16 switches in 4 rows, 32 links of which 8 wrap around (%d, %d, rows %s, %d wrap)" % (
                   len(sws), len(dom.with_class("line|path", "link")), xs, len(wraps)))
        loops = [a for t, a in dom.elements if a.get("id") == "q-credit-loops"]
        tap.ok(loops and loops[0].get("class") == "bad" and int(loops[0].get("data-channels", 0)) > 0
               and "sw 0x" in dom.text_by_id.get("q-credit-loops", ""),
               "minhop on a torus: the credit-loop check names a cycle (%s channels)"
               % (loops[0].get("data-channels") if loops else None),
               dom.text_by_id.get("q-credit-loops", "")[:300])

        # ---- the perfmgr's error counters: a counter raised in the simulator shows up
        sim.console('PerformanceSet "t12"[3] PortCounters.SymbolErrorCounter=77')
        got = sim.path("pm.html")
        row = None
        end = h.deadline(30)
        while time.time() < end and not row:
            cli(sock, "report", "--html", got)
            m = re.search(r'<tr class="pmport"><td>t12</td><td>0x[0-9a-f]+</td><td class="n">3</td>'
                          r'<td class="n bad">(\d+)</td>', h.read(got) or "")
            row = m and int(m.group(1))
            time.sleep(0.5)
        tap.ok(row == 77, "perfmgr section: SymbolErrorCounter 77 on t12 port 3 (%s)" % row,
               re.sub(r"(?s).*(<section id=\"perfmgr\">.*?</section>).*", r"\1", h.read(got) or "")[:600])
    finally:
        sm.stop()
tap.done()
