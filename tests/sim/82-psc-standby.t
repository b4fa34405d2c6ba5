#!/usr/bin/env python3
"""82-psc-standby.t - a second SM starting up does not hide a link change from the master.

A switch's PortStateChange is the master's record that a port changed state since it last read
the switch: the master's next sweep reads the ports of a switch whose bit is set and takes the
ports of a switch whose bit is clear from its last sweep. A second SM that starts (it discovers
the fabric before it learns there is a master) must not clear the bit, or the master never
reads the port that changed. Found by the chaos run (tests/chaos, seed 7 step 9, 2048 hosts):
a host link flapped while a standby started; the host came back INIT, unrouted, for good.

On tiny.net, a master on h1 (priority 10, no periodic sweep, sweep_on_trap FALSE: it sweeps
only on SIGHUP, so nothing races the steps):
  1. a new master leaves no PortStateChange set behind (its first discovery, as a
     non-master, leaves it alone; it clears it once master, as OpenSM does);
  2. h2's link cut, SIGHUP: the master drops h2;
  3. h2's link back: sw1 shows PortStateChange (smpquery switchinfo);
  4. a second SM (priority 0, --once) on h3 discovers the fabric, finds the master and leaves;
     sw1 still shows PortStateChange;
  5. SIGHUP: the master reads sw1's ports and brings h2 back: h2's port ACTIVE with a LID
     (smpquery portinfo), sw1's LFT routes that LID to port 2 (smpquery/ibroute).
Every wait polls for its event with a generous ceiling (POLL_S)."""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 90
tap = h.start(plan=6, timeout=600, need=("smpquery", "ibroute", "ibsim"))
TINY = h.need_fabric(tap, "tiny.net")
SW1, H2 = "0,1", "0,1,2"  # DR paths from h1: sw1, and h2 behind sw1's port 2


def field(text, name):
    m = re.search(r"^%s:\.*(\S+)" % name, text, re.M)
    return m.group(1) if m else None


def psc(sim):
    return field(sim.query(["smpquery", "-D", "switchinfo", SW1], timeout=20).out, "StateChange")


def ups(log):
    return len(re.findall(r"SWP-0002 SUBNET UP", h.read(log)))


with h.Sim(TINY, host="h1") as sim:
    conf = sim.path("master.yaml")
    with open(conf, "w") as f:
        f.write("sweep_on_trap: false\n")
    log = sim.path("master.log")
    sm = sim.start_sm(["-f", log, "-q", "off", "-s", "0", "-p", "10", "-F", conf], host="h1", name="master")

    def sweep(n):
        """SIGHUP the master; True once its SUBNET UP count reached N."""
        sm.popen.send_signal(signal.SIGHUP)
        return h.until(lambda: ups(log) >= n or not sm.alive(), POLL_S) and ups(log) >= n

    up = sm.wait_for(log, r"SWP-0002 SUBNET UP", POLL_S)
    tap.ok(up and psc(sim) == "0",
           "a new master clears PortStateChange once master (sw1 reads StateChange %s)" % psc(sim),
           h.tail(log))

    sim.console('Unlink "h2"[1]')
    dropped = sweep(2) and re.search(r"SWP-0008 CA .*\(h2\) is unreachable", h.read(log))
    tap.ok(dropped, "h2's link cut, SIGHUP: the master drops h2", h.tail(log))

    sim.console('ReLink "h2"[1]')
    tap.ok(psc(sim) == "1", "h2's link back: sw1 shows PortStateChange", "")

    log2 = sim.path("second.log")
    r = sim.run_sm(["--once", "-p", "0", "-f", log2, "-q", "off"], host="h3", timeout=POLL_S)  # exits 2: standby
    second = h.read(log2)
    tap.ok(r.rc == 2 and "another SM is master" in second and psc(sim) == "1",  # 2: standby
           "a second SM (priority 0) discovers, finds the master, leaves sw1's PortStateChange set "
           "(reads %s, rc %s)" % (psc(sim), r.rc), r.describe() + h.tail(log2))

    back = sweep(3)
    pi = sim.query(["smpquery", "-D", "portinfo", H2, "1"], timeout=20).out
    lid = field(pi, "Lid")
    tap.ok(back and field(pi, "LinkState") == "Active" and lid and lid != "0",
           "SIGHUP: the master reads sw1's ports and brings h2 back ACTIVE with LID %s" % lid,
           pi + h.tail(log))
    rt = sim.query(["ibroute", "-D", SW1], timeout=20).out
    routed = lid and re.search(r"^0x%04x 002 " % int(lid), rt, re.M)
    tap.ok(routed, "sw1's LFT sends h2's LID %s out of port 2 (ibroute)" % lid, rt)
    sm.stop()
