#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""08-chaos-attribution.t - the chaos harness's attribution of slow SA answers
(tests/chaos/attribution.py) on canned lines, no fabric: the SM's MAD-0003 stalls read from its
log (with and without the CPU figures), bench/sa_load.c's slowest answers read from its output
(the format taken from the C source itself), and each answer over 50 ms put in the right class:
the SM computing, the SM waiting for a CPU, the master not running, or outside the SM's loop
(a stall that ended just before the answer was sent is not its cause)."""
import datetime
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "chaos"))
from tap import Tap  # noqa: E402
import attribution as at  # noqa: E402

T0 = 1796000000.0      # a wall-clock second; the log says it in local time, as ibsm does


def ts(t):
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S.%f")


def mad3(end, ms, a, b, ran=None, waited=None):
    line = "%s INFO MAD-0003 the event loop was away from the fabric %.1f ms (from %s to %s)" % (ts(end), ms, a, b)
    if ran is not None:
        line += "; in the last %.1f ms this thread ran %.1f ms and waited %.1f ms for a CPU" % (ms + 12, ran, waited)
    return line


LOG = "\n".join([
    "%s INFO SM-0001 ibsm starting" % ts(T0 - 5),
    mad3(T0 + 1.100, 80.0, "idle", "route", ran=85.0, waited=4.0),      # computing, 1.020-1.100
    mad3(T0 + 2.200, 120.0, "lids", "sa-publish", ran=20.0, waited=95.0),  # waiting, 2.080-2.200
    mad3(T0 + 3.060, 60.0, "light", "idle"),                              # no CPU figures
    mad3(T0 + 4.050, 50.0, "dumps", "idle", ran=55.0, waited=3.0),        # ends before 4.06
    mad3(T0 + 7.100, 100.0, "active", "guid2lid", ran=3.5, waited=5.0),   # asleep (fsync), 7.0-7.1
    "%s INFO STS-0006 STATS slices over_10ms=7 over_20ms=4 over_50ms=2 over_100ms=1 longest_ms=120.0 "
    "from=lids to=sa-publish" % ts(T0 + 2.5),
    "%s INFO STS-0006 STATS slices over_10ms=3 over_20ms=1 over_50ms=1 over_100ms=0 longest_ms=80.0 "
    "from=idle to=route" % ts(T0 + 5),
])

# sa_load's output, its slow lines in the format of the C source
src = open(os.path.join(ROOT, "bench", "sa_load.c")).read()
fmt = re.search(r'printf\("(slow sent_epoch [^"]*)\\n"', src)
head = re.search(r'printf\("(slow_over_ms [^"]*)\\n"', src)
SLOW = [(1.050, 70.0, 2.0), (2.100, 90.0, 1.0), (3.020, 55.0, 0.5), (4.060, 65.0, 50.0),
        (5.000, 58.0, 40.0), (7.020, 75.0, 0.0), (6.000, 40.0, 0.0)]
OUT = "sent 100 answered 100 ok 90 norecords 10 busy 0 other 0 timeouts 0 seconds 7.000 qps 14 " \
      "p50_ms 1.000 p99_ms 90.000 max_ms 90.000 max_sent_at 2.100 start_epoch %.3f\n" % T0
if fmt and head:
    f = fmt.group(1).replace("%zu", "%d")
    OUT += head.group(1).replace("%zu", "%d") % (50.0, 6, 6) + "\n"
    for off, ms, cw in sorted(SLOW[:6], key=lambda x: -x[1]):
        OUT += f % (T0 + off, ms, cw, ms + 10) + "\n"

t = Tap(14)
t.ok(fmt is not None and head is not None, "bench/sa_load.c prints the slow_over_ms and slow sent_epoch lines")

stalls = at.parse_stalls(LOG, "master.log")
t.ok(len(stalls) == 5 and stalls[0]["from"] == "idle" and stalls[0]["to"] == "route"
     and abs(stalls[0]["start"] - (T0 + 1.020)) < 1e-4 and stalls[0]["ran_ms"] == 85.0
     and stalls[2]["ran_ms"] is None and stalls[1]["waited_ms"] == 95.0,
     "MAD-0003 lines read: interval ending at the timestamp, labels, ran/waited (absent when not said)",
     [repr(s) for s in stalls])

slow, count, over = at.parse_slow(OUT)
t.ok(count == 6 and over == 50.0 and len(slow) == 6 and slow[0]["ms"] == 90.0
     and abs(slow[0]["sent"] - (T0 + 2.1)) < 1e-5 and slow[0]["client_waited_ms"] == 1.0,
     "sa_load's slow lines read: send time on the wall clock, latency, client's wait", [repr(slow)])
m = re.search(r"sent (\d+) answered (\d+).*?timeouts (\d+).*?p99_ms ([\d.]+) max_ms ([\d.]+)", OUT)
t.ok(m is not None and m.group(1) == "100" and m.group(5) == "90.000",
     "chaos.py's reading of the summary line is not thrown by the slow lines")

by = {round(a["sent"] - T0, 3): at.classify(a, stalls, [(T0 + 4.9, T0 + 5.01)]) for a in slow}
t.ok(by[1.05]["class"] == "SM computing" and by[1.05]["stalls"][0]["from"] == "idle",
     "an answer held by a stall that mostly ran: the SM computing, its labels named", [repr(by[1.05])])
t.ok(by[2.1]["class"] == "SM waiting for a CPU", "a stall that mostly waited: the SM waiting for a CPU",
     [repr(by[2.1])])
t.ok(by[3.02]["class"] == "SM loop away (no CPU figures)", "a stall without schedstat figures: said apart")
t.ok(by[4.06]["class"] == "outside the SM's loop" and by[4.06]["covered_ms"] == 0,
     "a stall that ended before the answer was sent: not its cause", [repr(by[4.06])])
t.ok(by[5.0]["class"] == "SM not running" and by[7.02]["class"] == "SM blocked off CPU",
     "an answer across a master's restart: the SM not running; a stall neither run nor waited: blocked",
     [repr(by[7.02])])

att = at.attribute(slow, stalls, [(T0 + 4.9, T0 + 5.01)], loads=[(T0, 3.5), (T0 + 5, 7.25)], over_count=count)
t.ok(att["by_class"] == {"SM computing": 1, "SM waiting for a CPU": 1, "SM loop away (no CPU figures)": 1,
                         "SM not running": 1, "outside the SM's loop": 1, "SM blocked off CPU": 1}
     and att["outside_client_waited_most"] == 1 and att["worst"][0]["ms"] == 90.0
     and att["worst"][0]["load1"] == 3.5,
     "per class counts, the client's own wait, the worst first with the load then", [repr(att["by_class"])])
lab = att["stalls_by_label"]
t.ok(lab["idle -> route"]["on_cpu_50ms"] == 1 and lab["lids -> sa-publish"]["on_cpu_50ms"] == 0
     and lab["dumps -> idle"]["on_cpu_50ms"] == 1 and att["on_cpu_labels"] == {"idle -> route": 85.0,
                                                                                 "dumps -> idle": 55.0},
     "stalls by label: on-CPU stalls of 50 ms or more named (the phases to slice)", [repr(lab)])
sl = at.parse_slice_stats(LOG)
t.ok(sl["sweeps"] == 2 and sl["over_50ms"] == 3 and sl["over_100ms"] == 1 and sl["longest_ms"] == 120.0
     and sl["longest"] == "lids -> sa-publish" and "| SM computing | 1 |" in at.markdown(dict(att, slice_stats=sl)),
     "STS-0006 summed over sweeps; the markdown section lists the classes", [repr(sl)])

# the harness's schedstat readings of the SM's and ibsim's thread: the stretch around an answer
sm, ib = at.SchedMarks(), at.SchedMarks()
for i in range(0, 12):
    tt = T0 + 6.0 + i * 0.01
    sm.add(tt, 42, i * 1000000, i * 500000)               # ran 1 ms, waited 0.5 ms per 10 ms
    ib.add(tt, 7, i * 2000000, i * 8000000 if i >= 3 else 0)  # waits 8 ms per 10 ms from 6.03 on
sm.add(T0 + 6.2, 43, 0, 0)                                # a restarted master: another pid
over = sm.over(T0 + 6.015, T0 + 6.065)
t.ok(over == (6.0, 3.0, 60.0) and sm.over(T0 + 6.1, T0 + 6.2) is None and sm.over(T0 + 5.0, T0 + 6.05) is None,
     "schedstat readings: ran/waited over the readings that hold the stretch, none across a restart",
     [repr(over)])
ans = {"sent": T0 + 6.02, "ms": 60.0, "client_waited_ms": 5.0}
r = at.classify(ans, stalls, (), {"sm": sm, "ibsim": ib})
r2 = at.classify(dict(ans, client_waited_ms=45.0, client_window_ms=70.0), stalls, (), {"sm": sm})
r3 = at.classify(dict(ans, client_waited_ms=45.0, client_window_ms=120.0), stalls, (), {"sm": sm})
t.ok(r["class"] == "outside the SM's loop" and r["why"] == "ibsim waiting for a CPU"
     and r2["why"] == "the client waiting for a CPU" and r3["why"] == "none of them half of it",
     "outside the SM's loop: whose wait reached half the latency (scaled to the answer)",
     [repr(r), repr(r2), repr(r3)])
