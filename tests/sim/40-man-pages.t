#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""40-man-pages.t - the man pages (doc/man/) render cleanly and agree with what they describe:
man(1) renders each without a groff warning and mandoc's lint finds nothing at warning level;
ibsm(8)'s OPTIONS names every flag `build/ibsm --help` lists, and every flag it names there is
one ibsm has; ibsm.yaml(5)'s KEYS names every key of the `ibsm --create-config` template (core
and engines); ibsm-engine(7) names every member of the structs a plug-in fills or is lent, names
no ibsm_/IBSM_ identifier the SDK headers lack, and gives the ABI version routing.h has. When
a flag or key is added, this test says which page to update. Python 3 standard library only;
no simulator."""
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

MAN = os.path.join(h.REPO, "doc", "man")
PAGES = ["ibsm.8", "ibsm-cli.8", "ibsm.yaml.5", "ibsm-engine.7"]
HEADERS = [os.path.join(h.REPO, "include", "ibsm", n) for n in ("fabric.h", "routing.h", "orchestrator.h")]
# the structs whose every member the engine page names: what a plug-in fills in, what it is lent
STRUCTS = ["ibsm_engine", "ibsm_core", "ibsm_orchestrator", "ibsm_orch_core"]
# IBSM_ names the engine page may use that are not the SDK's: environment variables
NOT_SDK = {"IBSM_PLUGIN_PATH"}

tap = h.Tap(plan=14, timeout=120)
miss = [t for t in ("man", "groff", "mandoc") if not h.which(t)]
if miss:
    tap.fail_all("missing %s (run make deps: man-db, groff-base, mandoc)" % ", ".join(miss))
if not os.access(h.ibsm_path(), os.X_OK):
    tap.bail_out("%s not built (run make)" % h.ibsm_path())


def render(page):
    """The page as man(1) shows it (plain text, 80 columns), and groff's warnings."""
    env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80", MAN_KEEP_FORMATTING="")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    r = h.run(["man", "-l", "--warnings", "-P", "cat", "-E", "ascii", page], env=env, timeout=60)
    text = re.sub(r".\x08", "", r.out)            # overstrike (bold, underline) to plain text
    return r, text


def section(text, name):
    """The lines of section NAME of a rendered page (up to the next heading)."""
    m = re.search(r"^%s\n(.*?)(?=^[A-Z][A-Z ]+\n|\Z)" % re.escape(name), text, re.S | re.M)
    return m.group(1) if m else ""


rendered = {}
for page in PAGES:
    path = os.path.join(MAN, page)
    r, text = render(path)
    rendered[page] = text
    tap.ok(r.rc == 0 and not r.err.strip() and len(text) > 1000,
           "man -l --warnings renders %s without a warning (%d characters)" % (page, len(text)), r.describe())
for page in PAGES:
    r = h.run(["mandoc", "-T", "lint", "-W", "warning", os.path.join(MAN, page)], timeout=60)
    tap.ok(r.rc == 0 and not r.text.strip(), "mandoc -T lint -W warning: nothing to say about %s" % page,
           r.describe())

# ---- ibsm.8 and `ibsm --help`
env = {k: v for k, v in os.environ.items() if k not in ("IBSM_PLUGIN_PATH", "LD_PRELOAD")}
r = h.run([h.ibsm_path(), "--help"], env=env, timeout=60)
help_flags = set()
for line in r.out.splitlines():
    m = re.match(r"\s+(-\w)?(?:,\s*)?(--[\w-]+)", line)
    if m:
        help_flags.update(f for f in m.groups() if f)
options = section(rendered["ibsm.8"], "OPTIONS")


def named(flag, text):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(flag), text) is not None


missing = sorted(f for f in help_flags if not named(f, options))
page_flags = set()
for line in options.splitlines():
    m = re.match(r" {7}(-.*)$", line)                 # a tag line: "-g, --guid=GUID"
    if m:
        page_flags.update(re.findall(r"(?<![\w-])(--?[\w-]+)", m.group(1)))
unknown = sorted(f for f in page_flags if f not in help_flags)
tap.ok(r.rc == 0 and len(help_flags) > 20 and not missing,
       "ibsm(8) OPTIONS names every flag of ibsm --help (%d)" % len(help_flags),
       "add to doc/man/ibsm.8, OPTIONS: %s" % " ".join(missing) if missing else r.describe())
tap.ok(page_flags and not unknown, "every flag ibsm(8) OPTIONS lists is one ibsm --help has (%d)" % len(page_flags),
       "not in ibsm --help: %s" % " ".join(unknown))

# ---- ibsm.yaml.5 and the template
with tempfile.NamedTemporaryFile("w", suffix=".yaml") as empty:
    r = h.run([h.ibsm_path(), "-F", empty.name, "-c", "-"], env=env, timeout=60)
keys = set(re.findall(r"^(?:# )?([a-z][a-z0-9_]*): ", r.out, re.M))
keys_text = section(rendered["ibsm.yaml.5"], "KEYS")
missing = sorted(k for k in keys if not re.search(r"(?<![\w])%s(?![\w])" % k, keys_text))
tap.ok(r.rc == 0 and len(keys) > 40 and not missing,
       "ibsm.yaml(5) KEYS names every key of ibsm --create-config (%d)" % len(keys),
       "add to doc/man/ibsm.yaml.5, KEYS: %s" % " ".join(missing) if missing else r.describe())

# ---- ibsm-engine.7 and the SDK headers
sdk = "\n".join(h.read(p) for p in HEADERS)
engine_src = h.read(os.path.join(MAN, "ibsm-engine.7"))
engine_text = rendered["ibsm-engine.7"]


def members(struct):
    """Member names of `struct NAME { ... };` in the SDK headers."""
    m = re.search(r"struct %s \{(.*?)\n\};" % struct, sdk, re.S)
    if not m:
        return []
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fn = re.search(r"\(\*(\w+)\)", decl)
        if fn:
            names.append(fn.group(1))
            continue
        for part in decl.split(","):
            w = re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", part.strip())
            if w:
                names.append(w[-1])
    return names


unnamed = ["%s.%s" % (s, n) for s in STRUCTS for n in members(s) if not named(n, engine_text)]
total = sum(len(members(s)) for s in STRUCTS)
tap.ok(total > 30 and not unnamed, "ibsm-engine(7) names every member of struct %s (%d)" % (", ".join(STRUCTS), total),
       "not named in doc/man/ibsm-engine.7: %s" % " ".join(unnamed))
idents = set(re.findall(r"\b(?:ibsm|IBSM)_\w+", engine_src.replace("\\", "")))
invented = sorted(i for i in idents - NOT_SDK if not re.search(r"\b%s\b" % i, sdk))
tap.ok(len(idents) > 20 and not invented,
       "every ibsm_/IBSM_ name in ibsm-engine(7) exists in the SDK headers (%d)" % len(idents),
       "not in include/ibsm/*.h: %s" % " ".join(invented))
major = re.search(r"#define IBSM_ABI_MAJOR (\d+)", sdk)
minor = re.search(r"#define IBSM_ABI_MINOR (\d+)", sdk)
abi = "%s.%s" % (major.group(1), minor.group(1)) if major and minor else "?"
said = re.findall(r"This ibsm implements ABI (\d+\.\d+)", " ".join(engine_text.split()))
tap.ok(said == [abi], "ibsm-engine(7) gives the ABI of routing.h (%s)" % abi, "the page says %s" % said)
tap.done()
