"""saquery's text output, read the same way by every test that compares ibsm's SA with
OpenSM's (31-saquery, 42-sa-partitions, 67-sa-parity, 68-pr-parity): record blocks, and the
LID -> port GUID map that lets two SMs' answers be compared although they number LIDs
differently."""

import os
import re

import harness as h


def need_clients(tap, *clients):
    """The RMPP test library and the named tests/clients programs, or bail out; returns
    the clients' paths in order."""
    paths = [os.path.join(h.build_dir(), "tests", "clients", c) for c in clients]
    for need in [h.rmpp_path()] + paths:
        if not os.path.isfile(need):
            tap.bail_out("%s not built (run make)" % need)
    return paths


def blocks(text):
    """saquery's output -> list of record blocks (each a list of lines)."""
    out, cur = [], None
    for line in text.splitlines():
        if re.match(r"^\S.*(dump|ClassPortInfo):?\s*$", line):
            cur = [line.strip()]
            out.append(cur)
        elif cur is not None and line.strip():
            cur.append(line.rstrip())
        elif line.strip():
            out.append([line.strip()])
    return out


def lid_map(text):
    """LID -> port GUID, from saquery NR."""
    m = {}
    for b in blocks(text):
        lid = guid = None
        for line in b:
            x = re.match(r"^\s*lid\.+(\d+)", line)
            if x:
                lid = int(x.group(1))
            x = re.match(r"^\s*port_guid\.+(0x[0-9a-f]+)", line)
            if x:
                guid = x.group(1)
        if lid is not None and guid:
            m[lid] = guid
    return m
