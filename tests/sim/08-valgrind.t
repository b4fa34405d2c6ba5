#!/usr/bin/env python3
"""08-valgrind.t - ibsm brings up the demo fabric (etc/fabrics/demo.net) under valgrind memcheck: no invalid access,
no uninitialised use, no leak (errors inside libumad2sim.so itself are suppressed by
tests/valgrind/umad2sim.supp); the fabric it leaves must still pass the checks."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=8, timeout=600)
if not h.which("valgrind"):
    tap.skip_all("valgrind not installed")
here = os.path.dirname(os.path.abspath(__file__))
supp = os.path.join(here, "..", "valgrind", "umad2sim.supp")
glib_supp = os.path.join(here, "..", "valgrind", "glib.supp")
net = os.path.join(here, "..", "..", "etc", "fabrics", "demo.net")  # the demo fabric
with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    vlog = sim.path("valgrind.txt")
    cmd = ["valgrind", "--error-exitcode=99", "--leak-check=full",
           "--show-leak-kinds=definite,indirect,possible",
           "--errors-for-leak-kinds=definite,indirect,possible",
           "--suppressions=" + supp, "--suppressions=" + glib_supp, "--log-file=" + vlog,
           h.ibsm_path()]
    r = sim.run(cmd + ["--once", "-f", log, "-D", "0x43"], timeout=300)
    report = h.read(vlog)
    m = re.search(r"ERROR SUMMARY: (\d+) errors", report)
    tap.ok(r.rc == 0 and not r.crashed(), "ibsm --once under valgrind exits 0 (99 = memcheck error)",
           r.describe() + "\n" + report[-3000:])
    tap.ok(m is not None and m.group(1) == "0", "valgrind: 0 errors", report[-3000:])
    leaks = re.findall(r"(definitely|indirectly|possibly) lost: ([\d,]+) bytes", report)
    tap.ok(leaks and all(v == "0" for _, v in leaks), "valgrind: nothing lost", str(leaks))
    tap.ok("SUBNET UP" in h.read(log), "log says SUBNET UP", h.tail(log))

    # the daemon path under valgrind: event loop, -A cache, SIGHUP reload, a trap, SIGTERM
    import re as _re
    import signal
    import time
    dlog = sim.path("daemon.log")
    dvlog = sim.path("valgrind-daemon.txt")
    dcmd = [c if not c.startswith("--log-file=") else "--log-file=" + dvlog for c in cmd]
    bg = sim.start_sm(["-A", "-s", "1", "-f", dlog], cmd=dcmd, name="vg-daemon")
    ok = bg.wait_for(dlog, "SUBNET UP", timeout=120)
    if ok:
        bg.popen.send_signal(signal.SIGHUP)
        bg.wait_for(dlog, "LOOP-0005", timeout=60)
        time.sleep(3)
        ca = _re.findall(r'^Hca\s+\d+\s+"([^"]+)"', h.read(net), _re.M)
        if len(ca) > 3:
            sim.console('Unlink "%s"[1]' % ca[3])
        time.sleep(4)
    rc = bg.stop()
    dreport = h.read(dvlog)
    tap.ok(ok, "daemon under valgrind reaches SUBNET UP", h.tail(dlog))
    dm = _re.search(r"ERROR SUMMARY: (\d+) errors", dreport)
    tap.ok(dm is not None and dm.group(1) == "0", "daemon under valgrind: 0 errors", dreport[-3000:])
    dleaks = _re.findall(r"(definitely|indirectly|possibly) lost: ([\d,]+) bytes", dreport)
    tap.ok(not dleaks or all(v == "0" for _, v in dleaks), "daemon: nothing lost", str(dleaks))
    tap.ok("SWP-0008" in h.read(dlog) or len(ca) <= 3, "daemon noticed the unlinked CA", h.tail(dlog))
tap.done()
