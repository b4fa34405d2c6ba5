#!/usr/bin/env python3
"""05-offline-vs-sim.t - the offline model (ibsm --fabric FILE --once) and the model ibsm
discovers on ibsim from the same FILE agree: both opensm-subnet.lst dumps have the same node
GUIDs (type, port count), port GUIDs and links (LIDs and states ignored), and the discovered
one equals what ibnetdiscover sees."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

FABRICS = ["ftree-small.net", "irregular.net", "tiny.net"]
PER_FABRIC = 6

tap = h.start(plan=PER_FABRIC * len(FABRICS), timeout=150)


def lst_parsed(path, what):
    text = h.read(path)
    model = h.parse_subnet_lst(text)
    tap.ok(text and not model[3], "%s wrote a parseable opensm-subnet.lst" % what,
           "%s: %s" % (path, "missing or empty" if not text else "; ".join(model[3][:5])))
    return model


for name in FABRICS:
    net = h.need_fabric(tap, name)
    offline = None
    if h.sm_override():
        tap.skip("offline run on %s" % name, "IBSM_SM_CMD replaces ibsm: no offline mode", 2)
    else:
        scratch = h.Scratch()
        osm = scratch.path("osm")
        os.makedirs(osm)
        log = scratch.path("ibsm.log")
        r = scratch.run(h.sm_cmd() + ["--fabric", net, "--once", "-f", log], timeout=60,
                        OSM_TMP_DIR=osm, OSM_CACHE_DIR=osm)
        tap.ok(r.rc == 0 and not r.crashed(), "%s: ibsm --fabric --once exits 0" % name,
               r.describe())
        offline = lst_parsed(os.path.join(osm, "opensm-subnet.lst"), "%s offline" % name)
        scratch.stop()

    with h.Sim(net) as sim:
        log = sim.path("ibsm.log")
        r = sim.run_sm(["--once", "-f", log], timeout=60)
        tap.ok(r.rc == 0 and not r.crashed(), "%s: ibsm --once on ibsim exits 0" % name,
               r.describe())
        online = lst_parsed(os.path.join(sim.osmdir, "opensm-subnet.lst"), "%s on ibsim" % name)
        snap = sim.collect()
        tap.check("%s: discovered model equals what ibnetdiscover sees" % name,
                  h.compare_models(online, h.snapshot_model(snap), "ibsm's dump", "ibnetdiscover"))
    if offline is None:
        tap.skip("%s: offline model equals the discovered one" % name, "no offline run")
    else:
        tap.check("%s: offline model equals the discovered one" % name,
                  h.compare_models(offline, online, "offline", "ibsim"))
tap.done()
