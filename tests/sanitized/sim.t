#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""sim.t - the simulated bring-up, daemon and input tests again, against the AddressSanitizer
+ UBSan build of ibsm and its engines (build/asan, made by `make check`): each test must pass
as it does with the plain build, and no sanitizer may report anything: ASan and LSan reports
go to files in a scratch directory (any file there is a failure, shown); UBSan's go to the
SM's stderr, but the build has -fno-sanitize-recover=all, so the first one aborts the SM and
fails the test that ran it (its output shows the report). libumad2sim is preloaded
ahead of the ASan runtime, hence verify_asan_link_order=0; its own over-read of the send
buffer is suppressed (asan.supp). One TAP line per test run and one per report check.
The sanitized SM is slower: the ceilings of the tests' waits are scaled by IBSM_TEST_SLOW
(3 unless set; tests/sim/harness.py). IBSM_SANITIZED_ONLY="26 34" runs only the tests whose
names start with those words (to chase one test)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
sim_dir = os.path.join(repo, "tests", "sim")
build = os.environ.get("IBSM_ASAN_BUILD") or os.path.join(repo, "build", "asan")
# bring-up, standby, bad input, daemon life, configuration, partitions, engine holes
TESTS = ["01-bringup-ftree.t", "02-bringup-torus.t", "03-bringup-irregular.t", "04-lmc2.t",
         "06-standby.t", "07-bad-input.t", "14-daemon-links.t", "15-daemon-signals.t",
         "16-daemon-standby.t", "17-config.t", "18-partitions.t", "21-holes.t", "10-lossy.t",
         "22-start-hardening.t", "24-input-files.t", "26-handover.t", "29-sa.t",
         "31-saquery.t", "32-reports.t", "33-multicast.t", "34-qos.t", "35-qos-policy.t",
         "36-torus2qos.t", "37-chains.t", "39-opensm-dropin.t", "41-sa-lengths.t",
         "42-sa-partitions.t", "43-faults.t", "45-hostile-files.t",
         "46-readme.t", "47-engine-names.t", "48-engine-missing.t", "49-engine-vls.t",
         "55-lash.t", "56-file-engine.t", "57-nue.t", "60-console.t", "61-perfmgr.t", "62-metrics.t", "63-logs.t", "64-report.t",
         "66-repair.t", "67-sa-parity.t", "69-sa-db.t", "70-wire-parity.t", "71-routing-keys.t", "72-enhanced-qos.t", "74-offsweep-balancing.t", "75-vendor-keys.t", "76-trap-keys.t",
         "77-sa-keys.t", "82-psc-standby.t", "83-route-overlap.t", "85-cc.t", "86-repair-resume.t", "87-dumps-slow.t",
         "88-mad-cpu.t"]

only = os.environ.get("IBSM_SANITIZED_ONLY", "").split()
if only:
    TESTS = [t for t in TESTS if any(t.startswith(o) for o in only)]

print("1..%d" % (2 * len(TESTS)))
sys.stdout.flush()
if not os.access(os.path.join(build, "ibsm"), os.X_OK):
    print("Bail out! %s/ibsm not built (make check builds it: make B=build/asan ...)" % build)
    sys.exit(1)

n = 0
scratch = tempfile.mkdtemp(prefix="ibsm-sanitized.")
try:
    for t in TESTS:
        reports = os.path.join(scratch, t[:-2])
        os.makedirs(reports)
        env = dict(os.environ)
        env.pop("IBSM_SM_CMD", None)
        env["IBSM_BUILD"] = build
        env["IBSM_SANITIZED"] = "1"  # tests that loop long loop less
        # ceilings of waits (harness.patience): the sanitized SM is about 3x slower than the
        # plain one, on top of whatever slowness the caller declared
        try:
            slow = float(os.environ.get("IBSM_TEST_SLOW") or 1)
        except ValueError:
            slow = 1.0
        env["IBSM_TEST_SLOW"] = "%g" % (3 * max(slow, 1.0))
        common = "log_path=%s/%%s:print_stacktrace=1" % reports
        env["ASAN_OPTIONS"] = ("verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:"
                               "suppressions=%s:" % os.path.join(here, "asan.supp")) + common % "asan"
        env["LSAN_OPTIONS"] = common % "lsan"
        env["UBSAN_OPTIONS"] = "halt_on_error=1:" + common % "ubsan"
        t0 = time.time()
        # the test stops every process it starts (harness.py); its own timeout bounds it
        p = subprocess.run([sys.executable, os.path.join(sim_dir, t)], env=env, cwd=repo,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        out = p.stdout
        bad = [l for l in out.splitlines() if l.startswith("not ok") and "# TODO" not in l]
        n += 1
        ok = p.returncode == 0 and not bad and "Bail out!" not in out
        print("%s %d - %s passes against the sanitized build (%.0f s)" % (
            "ok" if ok else "not ok", n, t, time.time() - t0))
        if not ok:
            # each failed check with its diagnostics (they may be far from the end), then the end
            lines, shown = out.splitlines(), []
            for k, l in enumerate(lines):
                if l.startswith("not ok") or l.startswith("Bail out!"):
                    shown.append(l)
                    j = k + 1
                    while j < len(lines) and j < k + 80 and lines[j].startswith("#"):
                        shown.append(lines[j])
                        j += 1
            shown += ["... (the end of its output)"] + lines[-15:]
            for l in shown:
                print("# " + l)
                sys.stderr.write("# %s: %s\n" % (t, l))  # kept in a CI log without -v
        files = sorted(glob.glob(os.path.join(reports, "*")))
        n += 1
        print("%s %d - %s: no AddressSanitizer, LeakSanitizer or UBSan report" % (
            "not ok" if files else "ok", n, t))
        for f in files[:4]:
            print("# ---- %s" % os.path.basename(f))
            with open(f, errors="replace") as fh:
                for l in fh.read().splitlines()[:80]:
                    print("# " + l)
                    sys.stderr.write("# %s: %s\n" % (t, l))
        sys.stdout.flush()
finally:
    shutil.rmtree(scratch, ignore_errors=True)
