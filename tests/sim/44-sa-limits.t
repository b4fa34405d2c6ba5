#!/usr/bin/env python3
"""44-sa-limits.t - what one host can take from the SA, beside OpenSM 3.3.23 asked the same on
the same fabric (each SM on a fresh simulator), with tests/clients/sa_mad:
- multicast groups: h3 and then h4 each ask to create 600 groups, h5 a further 50. The
  switches' MFTs hold MulticastFDBCap MLIDs (1024 under ibsim): both SMs stop there with
  NO_RESOURCES (0x0100), every group's MLID fits every switch, and the SA lists exactly that
  many groups. ibsm also keeps one port to SA_MC_MAX_PER_PORT (512) groups, so h3 gets 512 and
  h4 the rest; OpenSM lets h3 have 600 (ibsm is stricter, by design);
- reserved multicast scopes 0 and 15 (IBA 4.1.1) named in an MGID: both SMs make the group, as
  OpenSM's compliance suite expects (osmtest -f m creates one of scope 15, o15-0.1.6);
- InformInfo: h3 subscribes to 70 trap numbers: ibsm takes 64 (SA_INFORM_MAX_PER_PORT) and
  answers NO_RESOURCES after, while h5 still subscribes; OpenSM takes all 70 (noted).
The cap on one answer's size (8 MiB) is judged in tests/unit/test_sa.c: no test fabric here
has that many PathRecords."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

POLL_S = 60
MCMR_CREATE = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 6) | (1 << 7) | (1 << 12) | (1 << 13) | (1 << 16)

tap = h.start(plan=11, timeout=900, need=("opensm", "smpquery"))
net = h.need_fabric(tap, "ftree-small.net")
tool = os.path.join(h.build_dir(), "tests", "clients", "sa_mad")
if not os.access(tool, os.X_OK):
    tap.bail_out("%s not built (run make)" % tool)


def ask(sim, host, lines, verbose=False):
    argv = [tool, "-w", "8", "-t", str(int(h.patience(3000)))] + (["-v"] if verbose else [])
    r = h.run(argv, env=sim.env(host, rmpp=True), cwd=sim.rundir, stdin_text="".join(lines), timeout=600)
    answers = []
    for line in r.out.splitlines():
        if line.startswith("rec ") and answers:
            answers[-1].append(line[4:])
        else:
            answers.append([line])
    return answers


def status(answer):
    parts = answer[0].split()
    return int(parts[1], 16) if parts[0] == "status" else None


def join_line(guid, mgid_hex, scope_state=0x21, mask=MCMR_CREATE):
    r = bytearray(52)
    r[0:16] = bytes.fromhex(mgid_hex)
    r[16:24] = (0xfe80000000000000).to_bytes(8, "big")
    r[24:32] = guid.to_bytes(8, "big")
    r[32:36] = (0x0b1b).to_bytes(4, "big")
    r[40:42] = b"\xff\xff"
    r[48] = scope_state
    return "2 0x38 %d full %s\n" % (mask, r.hex())


def mgid(tag, i, scope=2):
    return "ff%02x" % (0x10 | scope) + "0000" + "00" * 6 + "%04x" % tag + "%08x" % i


def inform_line(trap):
    ii = bytearray(36)
    ii[16:18] = b"\xff\xff"           # every LID
    ii[22], ii[23] = 1, 1              # generic, subscribe
    ii[24:26] = b"\xff\xff"           # any type
    ii[26:28] = trap.to_bytes(2, "big")
    ii[31] = 16
    ii[33:36] = b"\xff\xff\xff"
    return "2 0x03 0 full %s\n" % ii.hex()


def run(sm_name):
    """What SM_NAME answers: a dict of counts."""
    got = {}
    with h.Sim(net) as sim:
        log = sim.path("%s.log" % sm_name)
        sm = sim.start_sa_sm(sm_name, "h1", log)
        if not sm.wait_for(log, r"SUBNET UP", POLL_S):
            return {"up": False, "log": h.tail(log)}
        snap = sim.collect()
        r = sim.run(["smpquery", "si", "-D", "0,1"], host="h3")
        got["cap"] = int(next((l.split(".")[-1] for l in r.out.splitlines() if "McastFdbCap" in l), "0"))
        guid = {n: list(sim.node(snap, n).ports.values())[0].guid for n in ("h3", "h4", "h5")}
        got["before"] = len(ask(sim, "h5", ["0x12 0x38 0 full\n"], verbose=True)[0]) - 1
        for host, tag, n in (("h3", 3, 600), ("h4", 4, 600), ("h5", 5, 50)):
            a = ask(sim, host, [join_line(guid[host], mgid(tag, i)) for i in range(n)])
            got[host] = sum(1 for x in a if status(x) == 0)
            got[host + "-refused"] = sum(1 for x in a if status(x) == 0x0100)
        table = ask(sim, "h5", ["0x12 0x38 0 full\n"], verbose=True)[0]
        mlids = [int(rec[72:76], 16) for rec in table[1:]]
        got["groups"] = len(mlids)
        got["max-mlid"] = max(mlids) if mlids else 0
        # reserved scopes, with room made: h4 leaves 3 of its groups first
        leave = ["0x15 0x38 %d full %s\n" % ((1 << 0) | (1 << 1) | (1 << 16),
                                             join_line(guid["h4"], mgid(4, i)).split()[4]) for i in range(3)]
        got["left"] = [status(x) for x in ask(sim, "h4", leave)]
        scopes = [join_line(guid["h5"], mgid(7, s, scope=s)) for s in (0, 15, 2)]
        got["scopes"] = [status(x) for x in ask(sim, "h5", scopes)]
        a = ask(sim, "h3", [inform_line(1000 + t) for t in range(70)])
        got["inform-h3"] = sum(1 for x in a if status(x) == 0)
        got["inform-h3-refused"] = sum(1 for x in a if status(x) == 0x0100)
        got["inform-h5"] = status(ask(sim, "h5", [inform_line(64)])[0])
        got["alive"] = sm.alive()
        sm.stop()
    got["up"] = True
    return got


ours = run("ibsm")
theirs = run("opensm")
tap.note("ibsm: %s" % ours)
tap.note("OpenSM 3.3.23: %s" % theirs)
tap.ok(ours.get("up") and theirs.get("up") and ours.get("alive"), "both SMs bring ftree-small up, "
       "and ibsm lives through it all", "%s / %s" % (ours.get("log", ""), theirs.get("log", "")))
cap = ours.get("cap", 0)
tap.ok(cap > 0 and cap == theirs.get("cap"), "the switches' MulticastFDBCap: %d" % cap)
tap.ok(theirs.get("groups") == cap and ours.get("groups") == cap,
       "multicast groups listed after the flood: ibsm %s, OpenSM %s: as many as the MFTs hold"
       % (ours.get("groups"), theirs.get("groups")))
tap.ok(0 < ours.get("max-mlid", 0) <= 0xC000 + cap - 1,
       "every ibsm group's MLID fits every switch (highest 0x%04x)" % ours.get("max-mlid", 0))
tap.ok(ours.get("h5") == 0 and ours.get("h5-refused") == 50 and theirs.get("h5") == 0 and
       theirs.get("h5-refused") == 50, "a third host asking for more: NO_RESOURCES from both SMs")
tap.ok(ours.get("h3") == 512 and ours.get("h3-refused") == 88,
       "ibsm: one port gets 512 groups, NO_RESOURCES after (OpenSM gave it %s)" % theirs.get("h3"))
tap.ok(ours.get("before", 0) > 0 and ours.get("h4") == cap - 512 - ours.get("before", 0),
       "ibsm: the second port gets the rest of the MLIDs (%s; %s groups were there before)"
       % (ours.get("h4"), ours.get("before")))
tap.ok(ours.get("left") == [0, 0, 0] and ours.get("scopes") == [0, 0, 0] == theirs.get("scopes"),
       "with room made, groups of scopes 0, 15 and 2: made by both SMs", "%s / %s"
       % (ours.get("scopes"), theirs.get("scopes")))
tap.ok(ours.get("inform-h3") == 64 and ours.get("inform-h3-refused") == 6,
       "ibsm: one port holds 64 subscriptions, NO_RESOURCES for 6 more (OpenSM took %s)"
       % theirs.get("inform-h3"))
tap.ok(ours.get("inform-h5") == 0, "ibsm: another port still subscribes")
tap.ok(theirs.get("inform-h5") == 0 and theirs.get("alive"), "OpenSM: the same subscription succeeds")
tap.done()
