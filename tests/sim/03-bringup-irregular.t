#!/usr/bin/env python3
"""03-bringup-irregular.t - ibsm --once brings up an irregular fabric with loops, a parallel link and a dual-homed host
(tests/fabrics/irregular.net) on ibsim; infiniband-diags then judge ports, LIDs and every route."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

h.bringup_test("irregular.net")
