#!/usr/bin/env python3
"""73-chaos.t - the CI-sized chaos run: tests/chaos/chaos.py for 20 steps (seed 2) on
ftree-small.net with the updn engine. Every fault kind comes in those steps (links and host
links down and flapping, a switch unlinked and relinked, 5-20 % SMP loss on switches, SIGHUP
with a changed and with a broken partition policy, SA PathRecord storms, multicast joins and
leaves, a standby started and killed, the master SIGKILLed and restarted), several at once.
After each step, once the SM said SUBNET UP for it: every live pair delivered by the LFTs the
diags read, no credit loop, LIDs kept, the policy in force on the P_Key tables, MLIDs not
above the groups in use; the run's report must list nothing found. Broken on purpose (the
repair's switch answering on its second try left avoided; SIGHUP's handler set after the
options), it finds the dropped hosts and the killed master. The number of steps, not the
time, makes the run: no verdict depends on speed."""
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness as h  # noqa: E402

STEPS, SEED = 20, 2
tap = h.start(plan=6, timeout=1500, need=("saquery", "smpquery"))
net = h.need_fabric(tap, "ftree-small.net")
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD set: the chaos run drives ibsm's own options")
out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ibsm-chaos-%d.json" % os.getpid())
r = h.run([sys.executable, os.path.join(os.path.dirname(HERE), "chaos", "chaos.py"), "--steps", str(STEPS),
           "--minutes", "20", "--seed", str(SEED), "--net", net, "--engine", "updn", "--json", out],
          timeout=1400)
try:
    with open(out) as f:
        rep = json.load(f)
    os.unlink(out)
except (OSError, ValueError):
    rep = None
if rep is None:
    tap.bail_out("chaos.py wrote no report (exit %s): %s" % (r.rc, (r.out + r.err)[-1500:]))
kinds = ("link", "host_link", "switch", "loss", "hup", "hup_broken", "storm", "mcast", "standby", "master_kill")
tap.ok(rep["steps"] == STEPS and rep["samples"] == STEPS, "%d steps run, each sampled (%d samples)" % (
    rep["steps"], rep["samples"]), r.out[-1500:])
tap.ok(all(rep["faults"].get(k) for k in kinds), "every kind of fault injected: %s" % rep["faults"])
tap.ok(not rep["found"], "nothing found wrong after SUBNET UP (%d findings)" % len(rep["found"]),
       "\n".join(rep["found"])[-3000:])
tap.ok(rep["undelivered_after_up"] == 0 and rep["credit_loops"] == 0 and rep["lids_changed"] == 0,
       "no undelivered pair, no credit loop, no LID changed in any sample")
tap.ok(rep["sa_queries"] > 0 and rep["sa_max_ms"] is not None,
       "the SA answered %d PathRecord queries in the storms (max %.1f ms, %d timed out: a host cut off "
       "or the master killed meanwhile)" % (rep["sa_queries"], rep["sa_max_ms"] or 0, rep["sa_timeouts"]))
tap.ok(rep["rss_kib_end"] and rep["rss_kib_start"] and rep["rss_kib_end"] < 4 * rep["rss_kib_start"] + 8192,
       "the master's RSS stays bounded (%s KiB at the first sample, %s at the last; the master was "
       "restarted %s times)" % (rep["rss_kib_start"], rep["rss_kib_end"], rep["faults"].get("master_kill", 0)))
tap.done()
