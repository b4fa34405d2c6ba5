#!/usr/bin/env python3
"""01-bringup-ftree.t - ibsm --once brings up a 2-level fat tree (tests/fabrics/ftree-small.net)
on ibsim; infiniband-diags then judge ports, LIDs and every route."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

h.bringup_test("ftree-small.net")
