#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""20-abi10.t - an engine built against the frozen ABI 1.0 SDK still loads and routes in this
core: build/ibsm --plugin-dir build/tests/plugins -R abi10_minhop,no_fallback brings up an
irregular fabric and a torus (LMC 1), and infiniband-diags judge every route, port and LID.
tests/plugins/abi10_minhop.c indexes the fabric arrays directly (1.0 has no accessors) and
declares no configuration keys (1.0 has no config_keys field)."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.start(plan=19, timeout=200)
if h.sm_override():
    tap.skip_all("IBSM_SM_CMD replaces ibsm: this tests ibsm's engine loader")
tplugins = os.path.join(h.build_dir(), "tests", "plugins")
engine = os.path.join(tplugins, "abi10_minhop.so")
if not os.path.isfile(engine):
    tap.bail_out("%s not built (run make)" % engine)

# 1: the engine really is a 1.0 one (its table says so, and is the 1.0 size)
src = h.read(os.path.join(h.REPO, "tests", "plugins", "abi10_minhop.c"))
tap.ok("IBSM_ENGINE_INIT(" in src and "IBSM_ABI_MINOR != 0" in src and
       not re.search(r"\bibsm_(node|port|switch|adj)_at\(|\.config_keys\s*=|\.summary\s*=", src),
       "abi10_minhop.c uses the 1.0 SDK only (IBSM_ENGINE_INIT, a 1.0 guard, no accessors, "
       "no config_keys or summary)")

CASES = [("irregular.net", 0), ("torus-4x4.net", 1)]
for name, lmc in CASES:
    net = h.need_fabric(tap, name)
    with h.Sim(net, lmc=max(lmc, 1)) as sim:
        log = sim.path("ibsm.log")
        env = sim.env()
        env.pop("IBSM_PLUGIN_PATH", None)
        args = ["--once", "-f", log, "-l", str(lmc), "--plugin-dir", tplugins,
                "-R", "abi10_minhop,no_fallback"]
        r = sim.run_sm(args, env=env, timeout=90)
        tap.ok(r.rc == 0 and not r.crashed(),
               "%s: ibsm --plugin-dir build/tests/plugins -R abi10_minhop,no_fallback -l %d exits 0"
               % (name, lmc), r.describe())
        text = h.read(log)
        tap.ok("SUBNET UP" in text, "%s: log says SUBNET UP" % name, h.tail(log))
        tap.ok(re.search(r"RTE-0003 routed by abi10_minhop ", text) and "declined" not in text and
               re.search(r"ENG-0001 abi10_minhop: ABI 1.0 engine: \d+ LFT entries", text),
               "%s: log says RTE-0003 routed by abi10_minhop (and its own line)" % name,
               "\n".join(ln for ln in text.splitlines() if re.search(r"RTE-|ENG-|CHN-", ln))[-1500:]
               or h.tail(log))
        snap, rep = h.fabric_checks(tap, sim, lmc=lmc, diag_log=log)
        tap.check("%s: every route is a shortest path" % name, h.check_routes(snap, rep, minimal=True))
tap.done()
