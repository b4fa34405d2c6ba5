#!/usr/bin/env python3
"""41-sa-lengths.t - the SA never reads past the MAD that arrived. From a host, every attribute
with every method at every length from nothing to a whole MAD (tests/clients/sa_mad sends
each exactly as long as asked; umad2sim passes the length through), and afterwards the SM is
still up and answering. What is specified:
- shorter than the SA header (56 bytes: MAD 24, RMPP 12, SA 20): dropped, no answer (from 2
  bytes on: umad2sim's receiver thread, in the SM's process, dereferences a NULL agent for a MAD
  without its class byte and kills the SM; a kernel never delivers a MAD shorter than its header);
- a record shorter than its attribute's (IBA 15.2.5; a MultiPathRecord's fixed 24 bytes):
  ERR_REQ_INVALID (0x0200), for every method the SA serves;
- a whole record: answered (whatever the status: the request's merits decide).
Then a ServiceRecord cut short (80 of its 176 bytes) is refused and nothing of it, or of the
SM's memory, can be read back; the same bytes sent whole are registered and read back by
another host exactly as sent (the lease the SM keeps, the ServiceKey it zeroes).
Under the sanitized build (tests/sanitized/sim.t) any read past a MAD is an ASan report."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 60
HDR = 56
# attribute -> record bytes a request must carry (IBA 15.2.5; 0: ClassPortInfo, and
# attributes this SA does not serve, which are answered without a look at the record)
ATTRS = {0x0001: 0, 0x0003: 36, 0x0011: 108, 0x0012: 68, 0x0013: 16, 0x0014: None, 0x0015: 72,
         0x0016: 0, 0x0017: 72, 0x0018: 25, 0x0020: 8, 0x0030: 72, 0x0031: 176, 0x0033: 72,
         0x0035: 64, 0x0036: 72, 0x0038: 52, 0x0039: 0, 0x003A: 24, 0x003B: 0, 0x00F3: 64,
         0x0099: 0}
# Get, Set, GetTable, GetMulti, Delete: the SA's; Report (the SA sends Reports, takes none) and
# two responses: never answered, whatever their length
SA_METHODS = (0x01, 0x02, 0x12, 0x14, 0x15)
METHODS = SA_METHODS
RESPONSES = (0x06, 0x81, 0x86)

tap = h.start(plan=8, timeout=900, need=("saquery",))
net = h.need_fabric(tap, "ftree-small.net")
tool = os.path.join(h.build_dir(), "tests", "clients", "sa_mad")
if not os.access(tool, os.X_OK):
    tap.bail_out("%s not built (run make)" % tool)


def ask(sim, host, lines, window=32, timeout_ms=1000, verbose=False):
    """sa_mad from HOST with the RMPP library; one answer (a list of lines) per request."""
    argv = [tool, "-w", str(window), "-t", str(int(h.patience(timeout_ms)))] + (["-v"] if verbose else [])
    r = h.run(argv, env=sim.env(host, rmpp=True), cwd=sim.rundir, stdin_text="".join(lines),
              timeout=600)
    answers = []
    for line in r.out.splitlines():
        if line.startswith("rec ") and answers:
            answers[-1].append(line[4:])
        else:
            answers.append([line])
    return r, answers


def status(answer):
    parts = answer[0].split()
    return int(parts[1], 16) if parts[0] == "status" else None


with h.Sim(net) as sim:
    log = sim.path("ibsm.log")
    sm = sim.start_sa_sm("ibsm", "h1", log)
    up = sm.wait_for(log, r"SUBNET UP", POLL_S)
    tap.ok(up, "ibsm on h1 brings the subnet up", h.tail(log))
    snap = sim.collect()

    # the record size SwitchInfoRecord has in this SA (libibmad's SwitchInfo fields): the
    # shortest SWIR Get it answers with something else than REQ_INVALID, which must be > 4
    _, probe = ask(sim, "h3", ["0x12 0x14 0 %d\n" % (HDR + n) for n in range(0, 41)])
    swir = next((n for n, a in enumerate(probe) if status(a) not in (None, 0x0200)), None)
    ATTRS[0x0014] = swir
    tap.ok(swir is not None and 4 < swir <= 40, "SwitchInfoRecord needs %s record bytes" % swir)

    # lengths 0 .. the SA header, and responses of any length: dropped (asked in one wide
    # window, each waiting 0.5 s)
    short = ["%d %d 0 %d\n" % (m, a, n) for a in ATTRS for m in METHODS for n in range(2, HDR)]
    short += ["%d %d 0 %d\n" % (m, a, n) for a in ATTRS for m in RESPONSES
              for n in range(2, HDR + (ATTRS[a] or 0) + 1)]
    r, got = ask(sim, "h3", short, window=256, timeout_ms=500)
    answered = [(q.strip(), a[0]) for q, a in zip(short, got) if a[0].startswith("status")]
    tap.ok(r.rc == 0 and len(got) == len(short) and not answered,
           "%d requests shorter than the SA header (every attribute and method, 2-55 bytes), and "
           "Reports and responses sent to the SA (any length): none answered" % len(short),
           "%s; answered: %s" % (r.err[-300:], answered[:5]))

    # the SA header and a record cut short: REQ_INVALID; a whole record: answered
    cut, whole = [], []
    for a, need in ATTRS.items():
        for m in METHODS:
            for n in range(0, (need or 0) + 1):
                line = "%d %d 0xffffffffffffffff %d %s\n" % (m, a, HDR + n, "a5" * n)
                (cut if n < need else whole).append((m, a, n, line))
            whole.append((m, a, 200, "%d %d 0 full\n" % (m, a)))
    reqs = cut + whole
    r, got = ask(sim, "h3", [x[3] for x in reqs], window=32, timeout_ms=3000)
    bad_cut, bad_whole = [], []
    for (m, a, n, _), ans in zip(reqs, got):
        st = status(ans)
        need = ATTRS[a]
        if m in SA_METHODS and n < (need or 0):
            if st != 0x0200:
                bad_cut.append("method 0x%02x attr 0x%04x %d/%d bytes: %s" % (m, a, n, need, ans[0]))
        elif st is None:
            bad_whole.append("method 0x%02x attr 0x%04x %d bytes: %s" % (m, a, n, ans[0]))
    n_cut = sum(1 for x in cut if x[0] in SA_METHODS)
    tap.ok(len(got) == len(reqs) and not bad_cut,
           "%d requests whose record is cut short (every attribute the SA serves, every method, "
           "every length below the record's): REQ_INVALID" % n_cut, "; ".join(bad_cut[:6]) + r.err[-300:])
    tap.ok(len(got) == len(reqs) and not bad_whole,
           "%d requests with the SA header and a whole record (or none needed): each answered"
           % (len(reqs) - len(cut)), "; ".join(bad_whole[:6]))

    # still up: saquery from another host
    q = sim.run(["saquery", "NR"], env=sim.env("h5", rmpp=True), timeout=30)
    tap.ok(q.rc == 0 and q.out.count("NodeRecord dump") >= 24 and sm.alive(),
           "afterwards the SM runs and answers saquery NR whole (%d records)"
           % q.out.count("NodeRecord dump"), q.text[-400:])

    # a ServiceRecord cut short, then whole: ServiceID 0x1234, the GID of h3's port, P_Key 0xffff
    h3 = sim.node(snap, "h3")
    port = list(h3.ports.values())[0]
    rec = bytearray(176)
    rec[0:8] = (0x1234).to_bytes(8, "big")
    rec[8:16] = (0xfe80000000000000).to_bytes(8, "big")
    rec[16:24] = port.guid.to_bytes(8, "big")
    rec[24:26] = (0xffff).to_bytes(2, "big")
    rec[32:48] = bytes(range(0x40, 0x50))        # ServiceKey: not shown to clients
    rec[48:72] = b"ibsm-test-short-record\0\0"     # ServiceName (first 24 of 64 bytes)
    rec[72:80] = bytes(range(0x60, 0x68))        # ServiceName, bytes 24-31
    mask = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 6)  # ID, GID, P_Key, Name
    sent = 80
    line = "2 0x31 %d %d %s\n" % (mask, HDR + sent, rec[:sent].hex())
    _, a1 = ask(sim, "h3", [line])
    _, a2 = ask(sim, "h5", ["0x12 0x31 1 full %s\n" % rec[:8].hex()], verbose=True)
    tap.ok(status(a1[0]) == 0x0200 and status(a2[0]) == 0 and len(a2[0]) == 1,
           "a ServiceRecord Set of %d of its 176 bytes: REQ_INVALID, and a GetTable from another "
           "host finds nothing of it" % sent, "%s / %s" % (a1, a2))
    line = "2 0x31 %d full %s\n" % (mask, rec[:sent].hex())
    _, a3 = ask(sim, "h3", [line])
    _, a4 = ask(sim, "h5", ["0x12 0x31 1 full %s\n" % rec[:8].hex()], verbose=True)
    want = bytearray(rec[:sent]) + bytearray(176 - sent)
    want[28:32] = b"\xff\xff\xff\xff"            # no lease asked: kept for good
    want[32:48] = bytes(16)                      # the ServiceKey is never shown
    got_rec = bytes.fromhex(a4[0][1]) if len(a4[0]) > 1 else b""
    tap.ok(status(a3[0]) == 0 and status(a4[0]) == 0 and len(a4[0]) == 2 and got_rec[:176] == bytes(want),
           "the same bytes sent whole are registered, and read back from another host byte for "
           "byte as sent, zeros after them", "%s / %s / want %s" % (a3, a4, bytes(want).hex()))
    sm.stop()
tap.done()
