# SPDX-License-Identifier: BSD-2-Clause
"""attribution.py - where a slow SA answer's time went (issue 31: "its slowest SA answer took
101 ms: find where"). The SA load client (bench/sa_load.c) lists its slowest answers with their
send time on the wall clock; the SM says (MAD-0003) every stretch of 50 ms or more its event
loop spent away from the fabric, ending at the line's timestamp, with how much its thread ran
on a CPU and waited for one. An answer over 50 ms is then:

  SM computing          a stall overlapping [sent, sent + latency] in which the SM's thread
                        mostly ran: the SM's own work kept the query waiting (the labels say
                        which phases; the code to cut into shorter slices)
  SM waiting for a CPU  a stall overlapping it in which the thread mostly waited for a CPU:
                        the machine was busy, not the SM
  SM blocked off CPU    a stall in which the thread mostly neither ran nor waited for a CPU:
                        it slept in a system call (an fsync of a file it writes, on a busy
                        disk): the SM's doing, though not its computing
  SM not running        the answer crosses a master killed and restarted (no SM to answer
                        until the new one is up)
  outside the SM's loop no stall of 50 ms overlaps: the loop looked at the fabric at least
                        every 50 ms, so the time went in ibsim, umad2sim, the client itself
                        (its own wait for a CPU is measured), or in the SM's shorter slices
                        plus scheduling

Pure functions over text, so that tests/arch/08-chaos-attribution.t checks them on canned
lines without a fabric; tests/chaos/chaos.py feeds them the real logs."""
import bisect
import datetime
import re

SLOW_MS = 50.0
CLASSES = ("SM computing", "SM waiting for a CPU", "SM blocked off CPU", "SM loop away (no CPU figures)",
           "SM not running", "outside the SM's loop")

MAD3 = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) \S+ MAD-0003 the event loop was away from "
                  r"the fabric ([\d.]+) ms \(from (.*?) to (.*?)\)(?:; in the last ([\d.]+) ms this thread "
                  r"ran ([\d.]+) ms and waited ([\d.]+) ms for a CPU)?")
STS6 = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) \S+ STS-0006 STATS slices over_10ms=(\d+) "
                  r"over_20ms=(\d+) over_50ms=(\d+) over_100ms=(\d+) longest_ms=([\d.]+) from=(\S+) to=(\S+)")
LINE_TS = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) ")


def log_time(ts):
    """The SM's log timestamp (local time, microseconds) as epoch seconds."""
    return datetime.datetime.strptime(ts, "%Y-%m-%d %H:%M:%S.%f").timestamp()


def parse_stalls(text, source=""):
    """MAD-0003 lines of one log: each a stall [end - ms, end] with its labels and, when the SM
    could read its schedstat, the thread's ran/waited ms over `window_ms` (the stall and up to
    20 ms before it)."""
    out = []
    for line in text.splitlines():
        m = MAD3.match(line)
        if not m:
            continue
        end = log_time(m.group(1))
        ms = float(m.group(2))
        st = {"end": end, "start": end - ms / 1000.0, "ms": ms, "from": m.group(3), "to": m.group(4),
              "window_ms": None, "ran_ms": None, "waited_ms": None, "source": source}
        if m.group(5) is not None:
            st.update(window_ms=float(m.group(5)), ran_ms=float(m.group(6)), waited_ms=float(m.group(7)))
        out.append(st)
    return out


def parse_slice_stats(text):
    """STS-0006 lines (one per sweep): slices over 10/20/50/100 ms summed, the longest."""
    tot = {"sweeps": 0, "over_10ms": 0, "over_20ms": 0, "over_50ms": 0, "over_100ms": 0,
           "longest_ms": 0.0, "longest": None}
    for line in text.splitlines():
        m = STS6.match(line)
        if not m:
            continue
        tot["sweeps"] += 1
        for i, k in enumerate(("over_10ms", "over_20ms", "over_50ms", "over_100ms")):
            tot[k] += int(m.group(2 + i))
        if float(m.group(6)) > tot["longest_ms"]:
            tot["longest_ms"] = float(m.group(6))
            tot["longest"] = "%s -> %s" % (m.group(7), m.group(8))
    return tot


def parse_slow(text):
    """sa_load's slowest answers: ([{"sent", "ms", "client_waited_ms", "client_window_ms"}],
    count of answers over the threshold, the threshold)."""
    slow, count, over = [], None, None
    for line in text.splitlines():
        if line.startswith("slow_over_ms "):
            f = line.split()
            over, count = float(f[1]), int(f[3])
        elif line.startswith("slow "):
            f = line.split()
            d = {f[i]: float(f[i + 1]) for i in range(1, len(f) - 1, 2)}
            slow.append({"sent": d["sent_epoch"], "ms": d["ms"],
                         "client_waited_ms": d.get("client_waited_ms", -1.0),
                         "client_window_ms": d.get("client_window_ms", -1.0)})
    return slow, count, over


def parse_timeouts(text):
    """sa_load's queries that got no answer in time: their send times (epoch seconds)."""
    return [float(line.split()[2]) for line in text.splitlines() if line.startswith("timeout sent_epoch ")]


def classify_timeouts(sent, downtimes=(), losses=(), timeout_s=2.0):
    """Queries never answered: sent while a master was down (killed, not yet up again), while
    some switches lost SMPs (ibsim Error, the `loss` fault), or neither."""
    out = {"SM not running": 0, "SMP loss on switches": 0, "other": 0}
    for t in sent:
        if any(overlap_s(t, t + timeout_s, a, b) > 0 for a, b in downtimes):
            out["SM not running"] += 1
        elif any(overlap_s(t, t + timeout_s, a, b) > 0 for a, b in losses):
            out["SMP loss on switches"] += 1
        else:
            out["other"] += 1
    return out


def read_schedstat(pid):
    """(on-CPU ns, waiting-for-CPU ns) of a process's main thread, None when gone."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            run, wait = f.read().split()[:2]
        return int(run), int(wait)
    except (OSError, ValueError):
        return None


class SchedMarks:
    """Readings (t, pid, on-CPU ns, wait ns) of one role's thread (the master, ibsim), taken
    every 10 ms or so by the harness: what it ran and waited over any stretch they hold."""

    def __init__(self):
        self.t, self.marks = [], []

    def add(self, t, pid, run_ns, wait_ns):
        self.t.append(t)
        self.marks.append((t, pid, run_ns, wait_ns))

    def over(self, a0, a1):
        """(ran ms, waited ms, window ms) between the last reading at or before A0 and the first
        at or after A1 of the same process; None when the readings do not hold the stretch."""
        i = bisect.bisect_right(self.t, a0) - 1
        j = bisect.bisect_left(self.t, a1)
        if i < 0 or j >= len(self.t) or self.marks[i][1] != self.marks[j][1]:
            return None
        x, y = self.marks[i], self.marks[j]
        return (round((y[2] - x[2]) / 1e6, 1), round((y[3] - x[3]) / 1e6, 1), round((y[0] - x[0]) * 1000, 1))


OUTSIDE = ("the client waiting for a CPU", "the SM waiting for a CPU between its looks",
           "ibsim waiting for a CPU", "ibsim busy", "none of them half of it")


def outside_why(res):
    """For an answer no stall explains: whose share (the client's wait, the SM's or ibsim's wait
    for a CPU, ibsim's own work) reaches half its latency, the largest; else none."""
    def part(v, window):      # a share read over a longer window, scaled down to the answer
        return v * min(1.0, res["ms"] / window) if window and window > 0 else v
    cand = [(part(res.get("client_waited_ms", -1), res.get("client_window_ms")), OUTSIDE[0])]
    for who, ran_i, wait_i in (("sm", None, OUTSIDE[1]), ("ibsim", OUTSIDE[3], OUTSIDE[2])):
        d = res.get(who)
        if d:
            cand.append((part(d[1], d[2]), wait_i))
            if ran_i:
                cand.append((part(d[0], d[2]), ran_i))
    v, who = max(cand)
    return who if v >= res["ms"] / 2 else OUTSIDE[4]


def overlap_s(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def classify(answer, stalls, downtimes=(), marks=None):
    """One slow answer against the SM's stalls (sorted or not) and the masters' downtimes
    [(from, to)] (epoch seconds). Returns a dict: class, the overlapping stalls (with the part
    of the answer each covers), their ran/waited sums, the latency no stall covers."""
    a0 = answer["sent"]
    a1 = a0 + answer["ms"] / 1000.0
    hits = []
    for st in stalls:
        ov = overlap_s(a0, a1, st["start"], st["end"])
        if ov > 0:
            hits.append(dict(st, overlap_ms=round(ov * 1000, 1)))
    down = [d for d in downtimes if overlap_s(a0, a1, d[0], d[1]) > 0]
    covered = sum(x["overlap_ms"] for x in hits)
    res = {"sent": a0, "ms": answer["ms"], "client_waited_ms": answer.get("client_waited_ms", -1.0),
           "client_window_ms": answer.get("client_window_ms", -1.0),
           "stalls": hits, "covered_ms": round(min(covered, answer["ms"]), 1),
           "uncovered_ms": round(max(0.0, answer["ms"] - covered), 1)}
    known = [x for x in hits if x["ran_ms"] is not None]
    ran = sum(x["ran_ms"] for x in known)
    waited = sum(x["waited_ms"] for x in known)
    off = sum(max(0.0, x["window_ms"] - x["ran_ms"] - x["waited_ms"]) for x in known)
    res["ran_ms"], res["waited_ms"], res["off_ms"] = round(ran, 1), round(waited, 1), round(off, 1)
    for who, m in (marks or {}).items():      # (ran, waited, window) ms of the SM's, ibsim's thread
        res[who] = m.over(a0, a1)
    if down:
        res["class"] = "SM not running"
    elif not hits:
        res["class"] = "outside the SM's loop"
        res["why"] = outside_why(res)
    elif not known:
        res["class"] = "SM loop away (no CPU figures)"
    elif off > ran and off > waited:
        res["class"] = "SM blocked off CPU"
    elif ran >= waited:
        res["class"] = "SM computing"
    else:
        res["class"] = "SM waiting for a CPU"
    return res


def by_label(stalls):
    """The stalls grouped by their labels "from -> to": count, max ms, max ran, max waited, and
    how many ran 50 ms or more on a CPU (work to cut into slices)."""
    out = {}
    for st in stalls:
        k = "%s -> %s" % (st["from"], st["to"])
        e = out.setdefault(k, {"count": 0, "max_ms": 0.0, "max_ran_ms": None, "max_waited_ms": None,
                               "max_off_ms": None, "on_cpu_50ms": 0})
        e["count"] += 1
        e["max_ms"] = max(e["max_ms"], st["ms"])
        if st["ran_ms"] is not None:
            e["max_ran_ms"] = max(e["max_ran_ms"] or 0.0, st["ran_ms"])
            e["max_waited_ms"] = max(e["max_waited_ms"] or 0.0, st["waited_ms"])
            e["max_off_ms"] = round(max(e["max_off_ms"] or 0.0, st["window_ms"] - st["ran_ms"] - st["waited_ms"]), 1)
            # ran over the stall and up to 20 ms before it: only what fits in the stall counts
            if min(st["ran_ms"], st["ms"]) >= SLOW_MS:
                e["on_cpu_50ms"] += 1
    return dict(sorted(out.items(), key=lambda kv: (-(kv[1]["max_ran_ms"] or 0), -kv[1]["count"])))


def load_at(loads, t):
    """The 1-minute load average sampled nearest to T from [(t, load1)]."""
    if not loads:
        return None
    return min(loads, key=lambda x: abs(x[0] - t))[1]


def episodes(res):
    """Answers whose [sent, sent + latency] overlap are one episode (one hold-up seen by every
    query in flight): lists of answers, each episode's worst first."""
    out, cur, end = [], [], None
    for r in sorted(res, key=lambda r: r["sent"]):
        if cur and r["sent"] > end:
            out.append(cur)
            cur = []
        if not cur:
            end = r["sent"]
        cur.append(r)
        end = max(end, r["sent"] + r["ms"] / 1000.0)
    if cur:
        out.append(cur)
    return [sorted(e, key=lambda r: -r["ms"]) for e in out]


def attribute(answers, stalls, downtimes=(), loads=(), over_count=None, worst=10, marks=None):
    """Every answer classified; per class counts (answers and episodes), the worst episodes,
    the stalls by label."""
    res = [dict(classify(a, stalls, downtimes, marks), client=a.get("client"))
           for a in answers if a["ms"] >= SLOW_MS]
    for r in res:
        r["load1"] = load_at(loads, r["sent"])
    eps = episodes(res)
    counts = {c: sum(1 for r in res if r["class"] == c) for c in CLASSES}
    ep_counts = {c: sum(1 for e in eps if e[0]["class"] == c) for c in CLASSES}
    client = sum(1 for r in res if r["class"] == "outside the SM's loop"
                 and r["client_waited_ms"] >= r["ms"] / 2)
    why = {w: sum(1 for r in res if r.get("why") == w) for w in OUTSIDE}
    why_ep = {w: sum(1 for e in eps if e[0].get("why") == w) for w in OUTSIDE}
    worst_list = sorted((e[0] for e in eps), key=lambda r: -r["ms"])[:worst]
    examples = []
    for r in worst_list:
        examples.append({
            "sent": datetime.datetime.fromtimestamp(r["sent"]).strftime("%H:%M:%S.%f")[:-3],
            "ms": r["ms"], "class": r["class"], "why": r.get("why"), "client": r.get("client"),
            "client_waited_ms": r["client_waited_ms"], "sm": r.get("sm"), "ibsim": r.get("ibsim"),
            "covered_ms": r["covered_ms"], "ran_ms": r["ran_ms"], "waited_ms": r["waited_ms"], "off_ms": r["off_ms"],
            "load1": None if r["load1"] is None else round(r["load1"], 2),
            "stalls": ["%s -> %s %.1f ms (ran %s, waited %s, overlap %.1f)" % (
                x["from"], x["to"], x["ms"], x["ran_ms"], x["waited_ms"], x["overlap_ms"]) for x in r["stalls"]]})
    labels = by_label(stalls)
    return {"slow_over_ms": SLOW_MS, "slow_answers": len(res), "slow_answers_reported": over_count,
            "by_class": counts, "episodes": len(eps), "episodes_by_class": ep_counts,
            "outside_client_waited_most": client, "outside_why": why, "outside_why_episodes": why_ep,
            "worst": examples,
            # every answer, for a second look: sent, ms, client, class, why, client's wait, SM's and
            # ibsim's (ran, waited, window), the overlapping stalls' (from, to, ms)
            "answers": [[round(r["sent"], 6), r["ms"], r.get("client"), r["class"], r.get("why"),
                         r["client_waited_ms"], r.get("sm"), r.get("ibsim"),
                         [(x["from"], x["to"], x["ms"]) for x in r["stalls"]]] for r in res],
            "stalls": len(stalls), "stalls_by_label": labels,
            "on_cpu_labels": {k: v["max_ran_ms"] for k, v in labels.items() if v["on_cpu_50ms"]}}


def markdown(att):
    """The attribution section of the chaos report."""
    lines = ["## Where the slow SA answers' time went", "",
             "Answers over %.0f ms: %d classified (%s over %.0f ms in all, as the clients counted); "
             "the masters' stalls of 50 ms or more (MAD-0003): %d." % (
                 att["slow_over_ms"], att["slow_answers"], att["slow_answers_reported"], att["slow_over_ms"],
                 att["stalls"]), "",
             "An episode: answers whose time in flight overlaps (one hold-up seen by every query then in "
             "flight), classed by its slowest answer.", "",
             "| class | answers | episodes |", "|---|---|---|"]
    lines += ["| %s | %d | %d |" % (c, att["by_class"][c], att["episodes_by_class"][c]) for c in CLASSES]
    lines += ["", "Outside the SM's loop, whose share reached half the latency (the client's, the SM's "
              "and ibsim's main thread's wait for a CPU, ibsim's own run time; the harness reads their "
              "schedstat every 10 ms or so):", "", "| who | answers | episodes |", "|---|---|---|"]
    lines += ["| %s | %d | %d |" % (w, att["outside_why"][w], att["outside_why_episodes"][w]) for w in OUTSIDE]
    lines.append("")
    if att["worst"]:
        lines += ["Slowest answer of the worst episodes (SM and ibsim: ran/waited ms over a window of ms "
                  "that holds the answer):", "",
                  "| sent | ms | client | class | why | SM stall ran/waited/off | client waited | SM ran/waited/window "
                  "| ibsim ran/waited/window | load1 | stalls overlapping |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for e in att["worst"]:
            lines.append("| %s | %.1f | %s | %s | %s | %s/%s/%s | %s | %s | %s | %s | %s |" % (
                e["sent"], e["ms"], e["client"], e["class"], e["why"] or "-", e["ran_ms"], e["waited_ms"], e["off_ms"],
                e["client_waited_ms"], "/".join(map(str, e["sm"])) if e["sm"] else "-",
                "/".join(map(str, e["ibsim"])) if e["ibsim"] else "-", e["load1"], "; ".join(e["stalls"]) or "-"))
        lines.append("")
    lines += ["The masters' stalls by label (from -> to; ran/waited/off CPU are over the stall and up to "
              "20 ms before it; on-CPU >= 50: stalls whose thread ran 50 ms or more of it):", "",
              "| labels | count | max ms | max ran ms | max waited ms | max off CPU ms | on-CPU >= 50 ms |",
              "|---|---|---|---|---|---|---|"]
    for k, v in att["stalls_by_label"].items():
        lines.append("| %s | %d | %.1f | %s | %s | %s | %d |" % (k, v["count"], v["max_ms"], v["max_ran_ms"],
                                                                v["max_waited_ms"], v["max_off_ms"], v["on_cpu_50ms"]))
    sb = att.get("standby_stalls_by_label")
    if sb:
        lines += ["", "Standbys' stalls (they answer no SA query): %s." % "; ".join(
            "%s %d, max %.1f ms (ran %s)" % (k, v["count"], v["max_ms"], v["max_ran_ms"]) for k, v in sb.items())]
    hist = att.get("sa_histogram")
    if hist is not None:
        ok = [x for x in hist if "answered" in x]
        lines += ["", "The SA's own histogram (ibsm_sa_request_duration_seconds, from a request's arrival "
                  "at the SM, its queue wait included, to its answer), per master read before its kill and at "
                  "the end: %d answers, over 25/50/100 ms: %d/%d/%d%s." % (
                      sum(x["answered"] for x in ok), sum(x["over_25ms"] for x in ok),
                      sum(x["over_50ms"] for x in ok), sum(x["over_100ms"] for x in ok),
                      "" if len(ok) == len(hist) else " (%d not read)" % (len(hist) - len(ok)))]
    to = att.get("timeouts")
    if to is not None:
        lines += ["", "Queries never answered (2 s): %s." % ", ".join("%s %d" % kv for kv in to.items())]
    sl = att.get("slice_stats")
    if sl:
        lines += ["", "STS-0006 over %d sweeps: slices over 10/20/50/100 ms %d/%d/%d/%d, longest %.1f ms (%s)." % (
            sl["sweeps"], sl["over_10ms"], sl["over_20ms"], sl["over_50ms"], sl["over_100ms"], sl["longest_ms"],
            sl["longest"])]
    return "\n".join(lines) + "\n"
