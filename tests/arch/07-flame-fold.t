#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""07-flame-fold.t - bench/flame.py's reading of `perf script` (the flame graphs of `make
bench`): stacks folded root first with their counts, symbols without offsets, an unknown frame
named by its library, samples apart at each blank line and each new sample header, the SVG
well formed with a frame as wide as its share. No perf needed: a canned perf script text."""
import os
import sys
import xml.dom.minidom

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tap import Tap  # noqa: E402
import flame  # noqa: E402

TEXT = """ibsm 
\t            90c0 leaf_a+0x10 (/work/build/ibsm)
\t            9a97 mid+0x7 (/work/build/ibsm)
\t           1de38 main (/work/build/ibsm)

ibsm 
\t            90c1 leaf_a+0x22 (/work/build/ibsm)
\t            9a98 mid+0x9 (/work/build/ibsm)
\t           1de38 main (/work/build/ibsm)
ibsm 
\t            1234 [unknown] (/usr/lib/x86_64-linux-gnu/libfoo.so.1)
\t           1de38 main (/work/build/ibsm)

worker 
\tffffffff81591f22 do_syscall_64 ([kernel.kallsyms])
\t            5555 worker_main (/work/build/ibsm)
"""

tap = Tap(6)
st = flame.fold_text(TEXT)
tap.ok(st.get("main;mid;leaf_a") == 2, "two samples of one stack fold into one line, root first",
       ["%s %d" % kv for kv in st.items()])
tap.ok(st.get("main;[libfoo.so.1]") == 1, "an unknown frame is named by its library and a new "
       "sample header ends the last sample", ["%s %d" % kv for kv in st.items()])
tap.ok(st.get("worker_main;do_syscall_64") == 1 and sum(st.values()) == 4,
       "every sample counted once (4)", ["%s %d" % kv for kv in st.items()])
own, incl = flame.top_functions(st)
tap.ok(own["leaf_a"] == 2 and incl["main"] == 3 and incl["mid"] == 2 and own["main"] == 0,
       "self and inclusive counts", ["own %s" % dict(own), "incl %s" % dict(incl)])
svg = flame.svg(st, "t", width=1020)
try:
    dom = xml.dom.minidom.parseString(svg)
    good = True
except Exception as e:  # noqa: BLE001
    dom, good = None, False
    print("# %s" % e)
tap.ok(good, "the flame graph is well-formed SVG")
widths = {}
for g in (dom.getElementsByTagName("g") if dom else []):
    name = g.getElementsByTagName("title")[0].firstChild.data.split(" (")[0]
    widths[name] = float(g.getElementsByTagName("rect")[0].getAttribute("width"))
tap.ok(abs(widths.get("main", 0) - 750.0) < 0.5 and abs(widths.get("worker_main", 0) - 250.0) < 0.5
       and abs(widths.get("leaf_a", 0) - 500.0) < 0.5,
       "a frame is as wide as its share of the samples (main 3/4 of 1000, leaf_a 2/4)",
       ["%s %.1f" % kv for kv in widths.items()])
