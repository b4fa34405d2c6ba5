#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""46-readme.t - README.md's examples run as written. Every code block of the README (indented
or fenced) is run, or named in NOT_RUN with the reason, or fails: a block whose commands this
test does not know (SAFE, DENY) is not run at all, so the test never installs, deletes or
reconfigures anything. The set-up block's `make demo` runs tools/demo.sh (what `make demo` runs
once `make deps` and `make all` are done, on the build under test); `make check` is not run (it
runs this test). Every other block is pasted into an interactive bash on a pseudo-terminal (job
control on, as at a terminal: a background job that reads the terminal is stopped there), at
the top of a copy of the source tree (symbolic links; build/ holds the build under test and
takes what the lines write), with a Debian user's PATH (no /usr/sbin) and IBSIM_SOCKNAME set to
a name of this test's own, so the simulator the lines start is private. Each line's exit status
is one test; then each phase of `--once -f - --progress` shows once, `sminfo` names ibsm's port
MASTER, the offline dumps are written, and the lines leave no process running (every process
started with this test's IBSIM_SOCKNAME is found in /proc and stopped by its pid, also on
failure). The text: the plugin ABI quoted is routing.h's, no document outside the repository is
cited, and the repository paths it names exist. IBSM_README=FILE judges another text (to watch
the test fail on a broken copy). Python 3 standard library only."""
import glob
import os
import pty
import re
import select
import signal
import sys
import termios
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

README = os.environ.get("IBSM_README") or os.path.join(h.REPO, "README.md")
SESSION_TIMEOUT = 90.0  # seconds for one pasted block (the README's takes 1-3 s)
# A Debian user's PATH: no /usr/sbin, where infiniband-diags are (the README names them in full)
USER_PATH = "/usr/local/bin:/usr/bin:/bin"

# Blocks that are not run, by their first line, and why.
NOT_RUN = [
    (r"^base < config", "the layer order, not a command"),
    (r"^sudo make install\b", "installs into /usr/local as root and runs the installed ibsm on a host "
     "with an InfiniBand port; tests/sim/19-sdk-example.t takes the same steps into a scratch tree "
     "and runs the example engine on ibsim"),
]

# What this test is willing to run: a pasted line's commands (after VAR=value words) must be
# among these, and no line may hold a word of DENY. A block with anything else fails unrun (name
# it in NOT_RUN, or extend this list): the test never installs, deletes or reconfigures anything.
SAFE = re.compile(r"^(build/ibsm|ibsim|export|until|while|do|done|kill|wait|sleep|grep|cat|head|tail|"
                  r"ls|echo|printf|dpkg|true|/usr/sbin/(sminfo|saquery|smpquery|iblinkinfo|ibnetdiscover|"
                  r"ibstat|ibroute|dump_fts|perfquery|ibportstate|ibtracert))$")
DENY = re.compile(r"\b(sudo|su|make|apt|apt-get|rm|rmdir|mv|systemctl|dd|chmod|chown|install|mount)\b"
                  r"|>\s*/(?!dev/null)|\bdpkg\s+-(?!L\b)|\bkill\s+(?:-\w+\s+)*-?[01]\b")

tap = h.start(timeout=240, need=("sminfo",))
token = "ibsm-readme-%d-%s" % (os.getpid(), os.urandom(4).hex())
text = h.read(README)
if not text:
    tap.bail_out("cannot read %s" % README)

# ----------------------------------------------------------------------------- the blocks


def code_blocks(md):
    """(heading, line number, [lines]) of every code block: fenced (```) and indented (4 spaces
    after a blank line, outside a fence)."""
    out, heading, lines = [], "", md.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((heading, i + 2, lines[i + 1:j]))
            i = j + 1
            continue
        if line.startswith("    ") and line.strip() and (i == 0 or not lines[i - 1].strip()):
            j = i
            body = []
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                body.append(lines[j][4:])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            out.append((heading, i + 1, body))
            i = j
            continue
        i += 1
    return out


def commands(body):
    """The block's command lines: continuation lines (trailing backslash) joined, blank ones
    dropped."""
    cmds, cur = [], ""
    for line in body:
        cur += line
        if cur.endswith("\\"):
            cur = cur[:-1] + " "
            continue
        if cur.strip():
            cmds.append(cur)
        cur = ""
    if cur.strip():
        cmds.append(cur)
    return cmds


def unsafe(cmd):
    """Why the test will not run CMD (a command outside SAFE, a DENY word), or None."""
    c = bare(cmd)
    if DENY.search(c):
        return "`%s` holds `%s`" % (c, DENY.search(c).group(0))
    plain = re.sub(r"\d*>&\d+|\d*(?:>>|>|<)\s*\S+", " ", c)   # redirections are not commands
    plain = re.sub(r"\b[A-Za-z_]\w*=(\$\()", r"\1", plain)      # VAR=$(cmd): cmd is looked at
    plain = re.sub(r"(?:^|(?<=\s))[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|\S*)", " ", plain)  # VAR=value
    for part in re.split(r"\s*(?:&&|\|\||[;&|]|\$\(|\))\s*", plain):
        words = part.split()
        if words and not SAFE.match(words[0]):
            return "`%s` runs `%s`" % (c, words[0])
    return None


def bare(cmd):
    """A command without its trailing comment (`  # ...`)."""
    return re.sub(r"\s+#\s.*$", "", cmd).strip()

# ----------------------------------------------------------------------------- processes


def ours():
    """Pids of the processes started with this test's IBSIM_SOCKNAME (from /proc/*/environ)."""
    needle = ("IBSIM_SOCKNAME=%s\0" % token).encode()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if needle in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop_ours():
    """SIGTERM every process of ours, SIGKILL after 5 s; returns the pids that were running."""
    pids = [p for p in ours() if running(p)]
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = h.deadline(5)
    while time.time() < end and any(running(p) for p in pids):
        time.sleep(0.05)
    for p in pids:
        if running(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return pids


class Reaper:
    """In the harness's list of things to stop: on any exit, signal or alarm, the processes
    of this test's socket name are stopped by pid."""

    def stop(self):
        if self in h._live:
            h._live.remove(self)
        stop_ours()


h._live.append(Reaper())

# ----------------------------------------------------------------------------- the tree


scratch = h.Scratch(prefix="ibsm-readme.")
top = scratch.path("src")
os.makedirs(os.path.join(top, "build"))
os.makedirs(scratch.path("home"))
for name in os.listdir(h.REPO):
    if name.startswith(".") or name == "build" or name.startswith("build-") or name.startswith("sys-"):
        continue
    os.symlink(os.path.join(h.REPO, name), os.path.join(top, name))
# build/: what `make` builds, from the build under test; what the lines write stays here
for name in ("ibsm", "plugins", "tests"):
    os.symlink(os.path.join(h.build_dir(), name), os.path.join(top, "build", name))


def user_env(**extra):
    env = {"PATH": USER_PATH, "HOME": scratch.path("home"), "LANG": "C.UTF-8", "TERM": "dumb",
           "USER": os.environ.get("USER", "root"), "IBSIM_SOCKNAME": token}
    # a sanitized build under test keeps its sanitizer settings
    env.update({k: v for k, v in os.environ.items() if k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")})
    env.update(extra)
    return env

# ----------------------------------------------------------------------------- an interactive bash


def paste(cmds):
    """CMDS pasted into an interactive bash at a terminal, then `exit`. Returns ([(rc, output)]
    per command, the whole transcript, whether it timed out)."""
    mark = "@@%s@@" % token
    env = user_env(PS1="", PS2="", HISTFILE="/dev/null",
                   PROMPT_COMMAND='printf "\\n%s %%d\\n" $?' % mark)
    pid, fd = pty.fork()
    if pid == 0:  # the child: its own session, the pty its controlling terminal
        try:
            os.chdir(top)
            attrs = termios.tcgetattr(0)
            attrs[3] &= ~termios.ECHO           # the transcript holds output, not the paste
            termios.tcsetattr(0, termios.TCSANOW, attrs)
            os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "--noediting", "-i"], env)
        finally:
            os._exit(127)
    data, timed_out, status = b"", False, None
    os.write(fd, ("\n".join(cmds) + "\nexit\n").encode())
    end = h.deadline(SESSION_TIMEOUT)
    while True:
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                end = min(end, time.time() + 1.0)   # a schedule: drain what is left
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:                        # EIO: every holder of the terminal is gone
                chunk = b""
            if not chunk and status is not None:
                break
            data += chunk
        if time.time() > end:
            timed_out = status is None
            break
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(fd)
    out = data.decode(errors="replace").replace("\r\n", "\n")
    parts = re.split(r"\n?%s (\d+)\n" % re.escape(mark), out)
    # parts: [before the first prompt, rc, output, rc, output, ...]; the first prompt has no command
    results = []
    rcs, outputs = parts[1::2], parts[2::2]
    for k in range(1, len(rcs)):
        results.append((int(rcs[k]), outputs[k - 1]))
    return results, out, timed_out

# ----------------------------------------------------------------------------- the text


def check_text():
    lines = text.split("\n")
    # the plugin ABI: routing.h's IBSM_ABI_MAJOR.MINOR, also what ibsm --version says
    hdr = h.read(os.path.join(h.REPO, "include", "ibsm", "routing.h"))
    major = re.search(r"#define IBSM_ABI_MAJOR (\d+)", hdr)
    minor = re.search(r"#define IBSM_ABI_MINOR (\d+)", hdr)
    abi = "%s.%s" % (major.group(1), minor.group(1)) if major and minor else "?"
    quoted = re.findall(r"routing\.h`, ABI (\d+\.\d+)", text) + re.findall(r"plugin ABI \(`(\d+\.\d+)`\)", text)
    newer = [v for v in re.findall(r"\bABI (\d+\.\d+)", text)
             if tuple(map(int, v.split("."))) > tuple(map(int, abi.split(".")))] if abi != "?" else []
    tap.ok(abi != "?" and len(quoted) >= 2 and set(quoted) == {abi} and not newer,
           "the plugin ABI the README quotes is routing.h's (%s): %s" % (abi, ", ".join(quoted) or "none found"),
           "routing.h: %s; README: %s; newer than the header: %s" % (abi, quoted, newer))
    v = h.run([h.ibsm_path(), "--version"], timeout=30)
    tap.ok(("plugin ABI %s" % abi) in v.out, "ibsm --version says plugin ABI %s" % abi, v.describe())
    # only public references: no notes, seeds or paths of the development machine
    bad = [(n + 1, l.strip()) for n, l in enumerate(lines)
           if re.search(r"\bseeds?\s+\d{3}\b|/work/|\bnotes/|shared/seeds|\bseed 0", l)]
    tap.ok(not bad, "the README cites no document outside the repository",
           "\n".join("README.md:%d: %s" % b for b in bad))
    # every repository path it names exists (build/ products aside: the build makes them)
    tops = set(os.listdir(h.REPO))
    missing = []
    for n, l in enumerate(lines):
        for t in re.findall(r"`([^`\s]+)`", l) + re.findall(r"\]\(([^)\s]+)\)", l):
            t = t.rstrip(".,;:")
            first = t.split("/")[0]
            if "/" not in t or first not in tops or first.startswith("build"):
                continue
            p = os.path.join(h.REPO, t)
            if not (os.path.exists(p) or glob.glob(p) or glob.glob(p + "*")):
                missing.append("README.md:%d: %s" % (n + 1, t))
    tap.ok(not missing, "every repository path the README names exists", "\n".join(missing))


check_text()

# ----------------------------------------------------------------------------- the blocks, run

blocks = code_blocks(text)
tap.ok(len(blocks) >= 3, "README.md has code blocks (%d)" % len(blocks))
to_run = []
for heading, lineno, body in blocks:
    cmds = commands(body)
    first = cmds[0] if cmds else ""
    why = next((r for rx, r in NOT_RUN if re.search(rx, first)), None)
    if why:
        tap.note("README.md:%d (%s) not run: %s" % (lineno, heading, why))
    elif all(bare(c) in ("make demo", "make check") for c in cmds):
        for c in cmds:
            if bare(c) == "make check":
                rule = re.search(r"^check:", h.read(os.path.join(h.REPO, "Makefile")), re.M)
                tap.ok(bool(rule), "README.md:%d `make check`: the Makefile has the target (not run: it "
                       "runs every test, this one too)" % lineno)
            else:
                to_run.append(("demo", lineno, heading, cmds))
    else:
        why = [w for w in map(unsafe, cmds) if w]
        if why:
            tap.ok(False, "README.md:%d (%s): a block this test does not run: %s" % (lineno, heading, why[0]),
                   "name it in NOT_RUN with the reason, or let SAFE take its commands:\n%s" % "\n".join(why))
        else:
            to_run.append(("paste", lineno, heading, cmds))


def phase_lines(output):
    """{phase: how many lines show it}, for the phases the log names (PHS-0001 phase NAME:)
    or --progress prints ('  NAME  detail  N SMPs  S s')."""
    names = set(re.findall(r"PHS-0001 phase (\w+):", output))
    names |= set(re.findall(r"^\s+(?:\|\s+)?(\w+)\s+.*\s\d+ SMPs\s+[\d.]+ s$", output, re.M))
    return {n: len(re.findall(r"(PHS-0001 phase %s:|^\s+(?:\|\s+)?%s\s+.*\s\d+ SMPs\s+[\d.]+ s$)"
                              % (n, n), output, re.M)) for n in names}


def check_once(label, output):
    counts = phase_lines(output)
    twice = {n: c for n, c in counts.items() if c != 1}
    tap.ok(len(counts) >= 5 and not twice,
           "%s: each phase shows once (%s)" % (label, ", ".join(sorted(counts))),
           "lines per phase: %s\n%s" % (counts, output[-3000:]))


netfile = h.NetFile(os.path.join(h.REPO, "etc", "fabrics", "demo.net"))
nodes = len(netfile.nodes)

for kind, lineno, heading, cmds in to_run:
    where = "README.md:%d (%s)" % (lineno, heading)
    if kind == "demo":
        # `make demo` = make deps; make all; sh tools/demo.sh: the last step, on the build under test
        r = h.run(["sh", "tools/demo.sh"], env=user_env(), cwd=top, timeout=150)
        tap.ok(r.rc == 0 and re.search(r"LIDs assigned:\s+%d of %d" % (nodes, nodes), r.out),
               "%s `make demo`: tools/demo.sh brings the demo fabric up (every port a LID)" % where,
               r.describe())
        check_once("%s `make demo`" % where, r.out)
        continue
    results, transcript, timed_out = paste(cmds)
    tap.ok(not timed_out and len(results) == len(cmds),
           "%s: %d lines pasted into an interactive bash, each ran%s" % (where, len(cmds),
                                                                      " (timed out)" if timed_out else ""),
           "statuses seen: %d of %d\n%s" % (len(results), len(cmds), transcript[-4000:]))
    for i, cmd in enumerate(cmds):
        rc, out = results[i] if i < len(results) else (None, "")
        tap.ok(rc == 0, "%s line %d exits 0: %s" % (where, i + 1, bare(cmd)),
               "exit status %s; its output:\n%s" % (rc, out[-3000:]))
        c = bare(cmd)
        if "--once" in c and "--progress" in c and rc is not None:
            check_once("%s line %d" % (where, i + 1), out)
            tap.ok("ibsm: SUBNET UP: %d nodes" % nodes in out,
                   "%s line %d: --progress sums up (SUBNET UP, %d nodes)" % (where, i + 1, nodes), out[-2000:])
        if c.endswith("sminfo") and rc is not None:
            guid = "0x%x" % (0x0002c90300000001)  # hca-1 port 1: the first CA of demo.net
            m = re.search(r"sm guid %s, .* state \d+ (SMINFO_\w+)" % guid, out)
            tap.ok(m and m.group(1) == "SMINFO_MASTER",
                   "%s line %d: sminfo: ibsm's port (%s) answers, %s" % (where, i + 1, guid,
                                                                          m.group(1) if m else "?"), out)
        if "--fabric" in c and "0x43" in c and rc is not None:
            dumps = [n for n in ("opensm-subnet.lst", "opensm.fdbs", "opensm.mcfdbs")
                     if not os.path.isfile(os.path.join(top, "build", n))]
            tap.ok(not dumps, "%s line %d: the offline run wrote its dumps into build/" % (where, i + 1),
                   "missing: %s" % dumps)
    end = h.deadline(5)          # kill returns at once; the SM takes up to 0.1 s to exit
    while time.time() < end and any(running(p) for p in ours()):
        time.sleep(0.05)
    left = stop_ours()
    tap.ok(not left, "%s: the lines stop every process they start" % where,
           "still running after the block, stopped now: %s" % left)
    sysdirs = glob.glob(os.path.join(top, "sys-*"))
    tap.ok(not sysdirs, "%s: no ./sys-<pid>/ left behind" % where, "%s" % sysdirs)

tap.ok(any(k == "paste" for k, *_ in to_run), "a block of commands was run (Running it)")
tap.done()
