#!/usr/bin/env python3
"""76-trap-keys.t - OpenSM's trap and fatal-error keys, judged on the fabric and in the log.

A. babbling_port_policy (OpenSM 3.3.23's trap receiver): a client on h3 (tests/clients/
   trap_send) sends 251 identical traps 129 naming one port of sw2. With the key off, the port
   stays LinkUp (smpquery portinfo, PhysLinkState) once every trap was received (the log counts
   them); with babbling_port_policy TRUE the 251st disables it: smpquery reads PhysLinkState
   Disabled on that port (the switch's side: nearer to the SM than the CA's), and the log says
   TRP-0003.
B. sweep_on_trap: a host unlinked in ibsim (trap 128 from sw2). With the default (TRUE) and no
   periodic sweep (-s 0), a sweep follows the trap. With sweep_on_trap FALSE and a light sweep
   every 5 s, the trap starts nothing: the first sweep after it comes after a light sweep that
   saw the change (LSW-0001 between the trap and the sweep's line).
C. exit_on_fatal: two CAs with one GUID linked back to back (ibsim -I lets the net file say so):
   by default ibsm exits with status 1 and a FATAL line naming the GUID and the port, after
   DSC-0004 naming both places; with -y (--stay_on_fatal) it keeps running and sweeping.
Every wait polls for its event with a generous ceiling (POLL_S)."""
import os
import re
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 90
TRAPS = 251  # OpenSM disables once 250 came before: the 251st
tap = h.start(plan=10, timeout=900, need=("smpquery", "ibsim"))
TINY = h.need_fabric(tap, "tiny.net")
SEND = os.path.join(h.build_dir(), "tests", "clients", "trap_send")
if not os.access(SEND, os.X_OK):
    tap.bail_out("%s not built (make all)" % SEND)
scratch = tempfile.mkdtemp(prefix="ibsm-trapkeys.")


def conf(name, text):
    path = os.path.join(scratch, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def field(text, name):
    m = re.search(r"(?m)^%s:\.*(\S+)" % re.escape(name), text)
    return m.group(1) if m else None


def portinfo(sim, path, port, host="h1"):
    """smpquery -D portinfo PATH PORT from HOST: the text."""
    return sim.run(["smpquery", "-D", "portinfo", path, str(port)], host=host, timeout=30).out


def count(log, rx):
    return len(re.findall(rx, h.read(log)))


def start_sm(sim, name, extra):
    log = sim.path("%s.log" % name)
    sm = sim.start_sm(["-f", log, "-q", "off"] + extra, host="h1", name=name)
    return sm, log


# ---- A. babbling_port_policy ---------------------------------------------------------------
# h1[1] - sw1, sw1[7] - sw2: sw2 is DR path 0,1,7; sw2[1] is h3, sw2[2] is h4
SW2 = "0,1,7"
with h.Sim(TINY, host="h1") as sim:
    sm, log = start_sm(sim, "off", ["-s", "0"])
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    sm_lid = field(portinfo(sim, "0", 1), "SMLid")
    sw2_lid = field(portinfo(sim, SW2, 0), "Lid")
    tap.ok(up and sm_lid and sw2_lid, "the fabric is up (SM LID %s, sw2 LID %s)" % (sm_lid, sw2_lid),
           h.tail(log))

    def storm(port):
        """TRAPS traps 129 about sw2 PORT, from h3, 1 ms apart; any the simulator lost (its
        queue to the SM overflows) sent again once the SM is quiet, 5 ms apart (well within
        OpenSM's 60 s between two of an unhealthy port's series), until all came or POLL_S.
        Under load a round can lose most of its traps (a make check with two runs at once lost
        more than five rounds' worth). Returns (the last trap_send Result, all received)."""
        before = count(log, r"TRP-0001 trap 129 from")
        r, gap = None, "1000"
        end = h.deadline(POLL_S)
        while time.time() < end:
            missing = TRAPS - (count(log, r"TRP-0001 trap 129 from") - before)
            if missing <= 0:
                break
            r = sim.run([SEND, sm_lid, "129", sw2_lid, str(port), str(missing), "0", gap], host="h3",
                        timeout=60)
            sm.wait_idle(quiet=1.0, timeout=POLL_S)
            gap = "5000"
            tap.diag("storm round: %d missing before it" % missing)
        tap.diag("storm: %d received" % (count(log, r"TRP-0001 trap 129 from") - before))
        return r, count(log, r"TRP-0001 trap 129 from") - before >= TRAPS

    r, got = storm(1)
    phys = field(portinfo(sim, SW2, 1), "PhysLinkState")
    tap.ok(r.rc == 0 and got and phys == "LinkUp" and "TRP-0003" not in h.read(log),
           "babbling_port_policy off: %d traps 129 about sw2 port 1 received, the port stays %s"
           % (TRAPS, phys), r.describe() + h.tail(log))
    sm.stop()

    on = conf("babble.yaml", "babbling_port_policy: true\n")
    sm, log = start_sm(sim, "on", ["-s", "0", "-F", on])
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    r, got = storm(2)
    disabled = h.until(lambda: field(portinfo(sim, SW2, 2), "PhysLinkState") == "Disabled", POLL_S)
    tap.ok(up and r.rc == 0 and disabled,
           "babbling_port_policy TRUE: after %d traps 129 about sw2 port 2, smpquery reads it Disabled"
           % TRAPS, "received %d of %d; " % (count(log, r"TRP-0001 trap 129 from"), TRAPS)
           + r.describe() + portinfo(sim, SW2, 2) + h.tail(log))
    tap.ok(re.search(r"ERR  TRP-0003 babbling port: LID %s port 2 .* disabling port 2 of "
                     r"0x0*200001 \(sw2\)" % sw2_lid, h.read(log)),
           "the log names the port disabled (TRP-0003)", h.tail(log))
    sm.stop()

# ---- B. sweep_on_trap ------------------------------------------------------------------------
SWEEP = r"SWP-0022|SWP-0005|SUBNET UP"


def after_trap(log):
    """(trap line index, the first sweep line's index after it, a light sweep in between?)"""
    lines = h.read(log).splitlines()
    t = next((i for i, l in enumerate(lines) if re.search(r"TRP-0001 trap 128 from", l)), None)
    if t is None:
        return None, None, False
    s = next((i for i in range(t + 1, len(lines)) if re.search(SWEEP, lines[i])), None)
    light = s is not None and any("LSW-0001" in l for l in lines[t + 1:s])
    return t, s, light


for label, extra, want_light in (("sweep_on_trap TRUE (default, -s 0)", ["-s", "0"], False),
                                 ("sweep_on_trap FALSE (-s 5)",
                                  ["-s", "5", "-F", conf("nosweep.yaml", "sweep_on_trap: false\n")], True)):
    with h.Sim(TINY, host="h1") as sim:
        sm, log = start_sm(sim, "trap128", extra)
        up = sm.wait_for(log, r"SUBNET UP", POLL_S)
        sim.console('Unlink "sw2"[2]')
        h.until(lambda: after_trap(log)[1] is not None or not sm.alive(), POLL_S)
        t, s, light = after_trap(log)
        tap.ok(up and t is not None and s is not None and light == want_light,
               "%s: host h4 unlinked, trap 128 received, %s" %
               (label, "a light sweep sees the change first, then the sweep" if want_light else
                "a sweep follows at once"),
               "trap line %s, sweep line %s, light sweep between: %s\n%s" % (t, s, light, h.tail(log, 30)))
        sm.stop()

# ---- C. exit_on_fatal ------------------------------------------------------------------------
DUP = conf("dup.net", "# two CAs with one GUID, back to back\ncaguid=0x300000\nHca\t1 \"a\"\n"
           "[1]\t\"b\"[1]\n\ncaguid=0x300000\nHca\t1 \"b\"\n[1]\t\"a\"[1]\n")
bindir = os.path.join(scratch, "bin")   # ibsim -I: a net file may repeat a GUID
os.makedirs(bindir)
with open(os.path.join(bindir, "ibsim"), "w") as f:
    f.write("#!/bin/sh\nexec %s -I \"$@\"\n" % h.which("ibsim"))
os.chmod(os.path.join(bindir, "ibsim"), 0o755)
os.environ["PATH"] = bindir + os.pathsep + os.environ["PATH"]
with h.Sim(DUP, host="a") as sim:
    sm = sim.start_sm(["-f", sim.path("fatal.log"), "-q", "off", "-s", "1"], host="a", name="fatal")
    log = sim.path("fatal.log")
    exited = h.until(lambda: not sm.alive(), POLL_S)
    rc = sm.stop()
    text = h.read(log)
    tap.ok(exited and rc == 1, "exit_on_fatal TRUE (default): ibsm exits with status 1 (rc %s)" % rc,
           h.tail(log))
    tap.ok(re.search(r"DSC-0004 duplicate GUID 0x0*300000: port 1 of node 0x0*300000 \(DR path 0 hops\) "
                     r"leads to port 1 of another node with the same GUID \(DR path 1 hops", text) and
           re.search(r"ERR  LOOP-0001 FATAL: duplicate GUID 0x0*300000 found by a link from port 1 to "
                     r"itself", text),
           "the log names the GUID and both places (DSC-0004), then the FATAL line", h.tail(log))
    sm = sim.start_sm(["-f", sim.path("stay.log"), "-q", "off", "-s", "1", "-y"], host="a", name="stay")
    log = sim.path("stay.log")
    saw = sm.wait_for(log, r"SWP-0024 duplicate GUID 0x0*300000", POLL_S)
    # a second heavy sweep after the first fatal finding: it keeps going
    again = h.until(lambda: count(log, r"SWP-0024") >= 2 or not sm.alive(), POLL_S)
    alive = sm.alive()
    tap.ok(saw and again and alive, "-y (exit_on_fatal FALSE): SWP-0024 logged, ibsm keeps running and "
           "sweeping", h.tail(log))
    sm.stop()
    osm = conf("opensm.conf", "exit_on_fatal FALSE\n")
    sm = sim.start_sm(["-f", sim.path("conf.log"), "-q", "off", "-s", "1", "-F", osm], host="a", name="conf")
    log = sim.path("conf.log")
    saw = sm.wait_for(log, r"SWP-0024 duplicate GUID", POLL_S)
    tap.ok(saw and sm.alive(), "exit_on_fatal FALSE in an opensm.conf: ibsm stays", h.tail(log))
    sm.stop()

shutil.rmtree(scratch, ignore_errors=True)
tap.done()
