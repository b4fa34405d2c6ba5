#!/usr/bin/env python3
"""32-reports.t - event forwarding judged by a subscriber of its own (tests/clients/
sa_subscribe.c, libibumad only): on ftree-small with ibsm a daemon on h1, h5 subscribes to
traps 64 and 65 (SubnAdmSet(InformInfo)); saquery IIR lists its two subscriptions. h9's link
is taken down in the simulator: the subscriber gets a Report of trap 65 (GID out of service)
naming h9's port GID within one sweep, and answers it with a ReportResp; the link comes back:
a Report of trap 64 (in service) for the same GID. Then the subscriber unsubscribes and
saquery IIR lists none. A subscriber that never answers (-q) gets its Report again (resent
until the retries run out). The subscribers run with -S: ibsim hands an unsolicited request
(a Report) only to a client attached as an SM, which -S makes them (see sa_subscribe.c)."""
import ipaddress
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SWEEP_S = 45  # one sweep: ibsm sweeps on the switch's trap 128, at the latest every 10 s
tap = h.start(plan=8, timeout=400, need=("saquery",))
net = h.need_fabric(tap, "ftree-small.net")
client = os.path.join(h.build_dir(), "tests", "clients", "sa_subscribe")
if not os.path.isfile(client) or not os.path.isfile(h.rmpp_path()):
    tap.bail_out("%s or the RMPP library not built (run make)" % client)


def gid_of(guid):
    return str(ipaddress.IPv6Address((0xfe80 << 112) | guid))


with h.Sim(net, host="h1") as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sa_sm("ibsm", "h1", log)
    tap.ok(sm.wait_for(log, r"SUBNET UP", 60), "ibsm on h1 brings the subnet up", h.tail(log))
    snap = sim.collect()
    h9 = sim.node(snap, "h9")
    h9_guid = list(h9.ports.values())[0].guid
    sub = sim.start_sm(["-S", "-t", "64", "-t", "65", "-n", "2", "-w", "150"], host="h5", name="sub",
                       cmd=[client], count=False)
    ok = sub.wait_for(None, r"subscribed 65 status", 30)
    tap.ok(ok and re.search(r"subscribed 64 status 0x0000", sub.output()) and
           re.search(r"subscribed 65 status 0x0000", sub.output()),
           "h5 subscribes to traps 64 and 65 (the SA answers status 0)", sub.output())
    r = sim.run(["saquery", "IIR"], host="h3", timeout=30, env=sim.env("h3", rmpp=True))
    traps = sorted(int(x) for x in re.findall(r"trap_num\.+(\d+)", r.out))
    tap.is_(traps, [64, 65], "saquery IIR lists the two subscriptions", r.describe())

    sim.console('Unlink "leaf3"[1]')
    got65 = sub.wait_for(None, r"report trap 65 .*subject %s " % re.escape(gid_of(h9_guid)), SWEEP_S)
    tap.ok(got65, "h9's link down: a Report of trap 65 names h9's GID %s" % gid_of(h9_guid),
           sub.output() + h.tail(log))
    sim.console('ReLink "leaf3"[1]')
    got64 = sub.wait_for(None, r"report trap 64 .*subject %s " % re.escape(gid_of(h9_guid)), SWEEP_S)
    tap.ok(got64, "h9's link up again: a Report of trap 64 for the same GID", sub.output() + h.tail(log))
    rc = sub.popen.wait(timeout=60)
    tap.ok(rc == 0 and re.search(r"reports 2", sub.output()), "the subscriber acknowledged both and "
           "unsubscribed (exit 0)", "exit %s\n%s" % (rc, sub.output()))
    r = sim.run(["saquery", "IIR"], host="h3", timeout=30, env=sim.env("h3", rmpp=True))
    tap.ok(r.rc == 0 and "trap_num" not in r.out, "saquery IIR lists no subscription after it "
           "unsubscribed", r.describe())

    # a subscriber that never acknowledges: its Report comes again
    dead = sim.start_sm(["-S", "-t", "65", "-q", "-N", "-n", "2", "-w", "60"], host="h6", name="dead",
                        cmd=[client], count=False)
    dead.wait_for(None, r"subscribed 65 status", 30)
    sim.console('Unlink "leaf3"[2]')
    again = dead.wait_for(None, r"(report trap 65 .*\n){2}", SWEEP_S)
    tids = re.findall(r"report trap 65 .* tid (0x[0-9a-f]+)", dead.output())
    tap.ok(again and len(tids) >= 2 and len(set(tids)) == 1, "a subscriber that does not answer gets "
           "the same Report again (same TID)", dead.output())
    dead.stop()
    sm.stop()
tap.done()
