#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""88-mad-cpu.t - mad_cpu keeps the MAD path on one CPU (issue 29, bring-up at the simulator's
ceiling: under umad2sim every answer is handed from its receiver thread to the event loop's, and
on one CPU that hand-off is a switch, not a wake-up sent to another CPU). The event loop's thread
and the threads libibumad's port brings (umad2sim's receiver) must be on that CPU; the threads
that compute must keep every CPU. Judged from the kernel (/proc/PID/task/*/status), not from the
log. The test engine tests/plugins/gate.c holds the routing thread so it can be looked at. tiny.net:
- 1: a CPU the process may not use: exit 1, SM-0019 naming the CPUs it may;
- 2: routing held: the event loop's thread and the other threads named ibsm (umad2sim's
  receiver) on the CPU the configuration names, and nothing else;
- 3: ... the routing thread (ibsm-routing) on every CPU the process may use;
- 4: the gate released: SUBNET UP, SM-0020 logged;
- 5: SIGHUP with another mad_cpu in the file: LOOP-0009 (the next start), the event loop's
  thread still on its CPU.
Broken on purpose (mad_cpu_thread_new not unpinning): 3 fails; (the pin after umad_init): 2
fails, the receiver on every CPU."""
import os
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import daemon_util as du  # noqa: E402

POLL_S = 60
tap = h.start(plan=5, timeout=300)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this tests ibsm's own threads")
net = h.need_fabric(tap, "tiny.net")
tplugins = os.path.join(h.build_dir(), "tests", "plugins")
if not os.path.isfile(os.path.join(tplugins, "gate.so")):
    tap.bail_out("%s/gate.so not built (run make)" % tplugins)
dirs = tplugins + ":" + os.path.join(h.build_dir(), "plugins")

MINE = sorted(os.sched_getaffinity(0))
CPU = MINE[-1]                      # not the first: a default would pick that one
OUTSIDE = max(c for c in range(1024) if c not in MINE)


def cpu_list(cpus):
    """CPUs as the kernel's Cpus_allowed_list spells them: 0-1,4."""
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def threads(pid):
    """[(tid, name, Cpus_allowed_list)] of PID's threads, read from the kernel."""
    found = []
    base = "/proc/%d/task" % pid
    for tid in sorted(os.listdir(base), key=int):
        try:
            with open(os.path.join(base, tid, "comm")) as f:
                name = f.read().strip()
            with open(os.path.join(base, tid, "status")) as f:
                allowed = [ln.split(":", 1)[1].strip() for ln in f
                           if ln.startswith("Cpus_allowed_list:")][0]
        except OSError:
            continue  # a thread that ended meanwhile
        found.append((int(tid), name, allowed))
    return found


with h.Sim(net, host="h1") as sim:
    log = sim.path("refused.log")
    r = h.run(h.sm_cmd() + ["-f", log, "-s", "0", "--mad_cpu", str(OUTSIDE)], env=sim.env("h1"),
              timeout=60)
    said = r.out + r.err + h.read(log)
    tap.ok(r.rc == 1 and "SM-0019" in said and
           "mad_cpu %d: not a CPU this process may use (%s)" % (OUTSIDE, cpu_list(MINE)) in said,
           "mad_cpu %d (outside %s): exit 1, SM-0019 names the CPUs it may use"
           % (OUTSIDE, cpu_list(MINE)), "rc %s\n%s" % (r.rc, said[-1500:]))

    log, gate, conf = sim.path("ibsm.log"), sim.path("gate"), sim.path("ibsm.conf")
    with open(conf, "w") as f:
        f.write("mad_cpu %d\n" % CPU)
    env = sim.env("h1", IBSM_GATE_FILE=gate)
    env.pop("IBSM_PLUGIN_PATH", None)
    sm = sim.start_sm(["-f", log, "-F", conf, "--plugin-dir", dirs, "-R", "gate,no_fallback",
                       "-s", "0"], host="h1", env=env, name="ibsm")
    try:
        held = sm.wait_for(log, r"gate: waiting for", POLL_S)
        seen = threads(sm.pid) if held and sm.alive() else []
        shown = "\n".join("%d %s %s" % t for t in seen) + "\n" + h.tail(log, 20)
        mad = [t for t in seen if t[1] == "ibsm"]
        tap.ok(held and len(mad) >= 2 and mad[0][0] == sm.pid and
               all(t[2] == str(CPU) for t in mad),
               "routing held: the event loop's thread and umad2sim's receiver (%d threads named "
               "ibsm) on CPU %d only" % (len(mad), CPU), shown)
        routing = [t for t in seen if t[1] == "ibsm-routing"]
        tap.ok(routing and all(t[2] == cpu_list(MINE) for t in routing),
               "the routing thread on every CPU the process may use (%s)" % cpu_list(MINE), shown)

        open(gate, "w").close()
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        text = h.read(log)
        tap.ok(up and "SM-0020" in text and "stays on CPU %d" % CPU in text,
               "gate released: SUBNET UP; SM-0020 says the MAD path stays on CPU %d" % CPU,
               h.tail(log, 30))

        other = -1 if len(MINE) == 1 else MINE[0]
        with open(conf, "w") as f:
            f.write("mad_cpu %d\n" % other)
        off = du.size(log)
        os.kill(sm.pid, signal.SIGHUP)
        note = du.wait_text(log, off, r"LOOP-0009 .*mad_cpu takes effect at the next start",
                            POLL_S, alive=sm.alive)
        main = [t for t in threads(sm.pid) if t[0] == sm.pid]
        tap.ok(note is not None and main and main[0][2] == str(CPU),
               "SIGHUP with mad_cpu %d in the file: LOOP-0009, the event loop's thread still on "
               "CPU %d" % (other, CPU), "%s\n%s" % (main, du.since(log, off)[-1500:]))
    finally:
        if not os.path.exists(gate):
            open(gate, "w").close()
        sm.stop()
tap.done()
