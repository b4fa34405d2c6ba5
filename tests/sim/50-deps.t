#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""50-deps.t - `make deps` (tools/deps.sh) installs Debian's opensm without starting or enabling
it: on a host with an InfiniBand port, an OpenSM started by its package's postinst is a second
SM appearing by surprise. Run with stand-ins for dpkg-query, apt-get, id, systemctl and
update-rc.d on PATH, and IBSM_DEPS_POLICY_RC_D pointing at a scratch policy-rc.d; the apt-get
stand-in asks that policy-rc.d what opensm's postinst asks (invoke-rc.d with the init script's
name, deb-systemd-invoke with the unit's) and records the answers. Judged: while apt-get runs,
every action on opensm, opensm.service and opensm@.service is refused (101) and another unit's
is left to the host's own policy-rc.d (or allowed when there is none); afterwards the host's
policy-rc.d is back as it was (or none), and opensm.service is disabled; an opensm already
installed, and a failed apt-get, are handled too; a non-root run only prints the commands.
Python 3 standard library only; under a second."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

tap = h.Tap(plan=10, timeout=60)
DEPS = os.path.join(h.REPO, "tools", "deps.sh")
work = h.Scratch(prefix="ibsm-deps.")
fake = work.path("bin")
os.makedirs(fake)
calls = work.path("calls")
policy = work.path("policy-rc.d")
HOST_POLICY = "#!/bin/sh\n# the host's own\nexit 104\n"


def tool(name, body):
    with open(os.path.join(fake, name), "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(os.path.join(fake, name), 0o755)


# installed: everything but what $MISSING lists
tool("dpkg-query", 'for p in $MISSING; do [ "$p" = "$3" ] && exit 1; done; printf "install ok installed"')
tool("id", 'echo "${FAKE_UID:-0}"')
tool("systemctl", 'echo "systemctl $*" >> "%s"' % calls)
tool("update-rc.d", 'echo "update-rc.d $*" >> "%s"' % calls)
# apt-get install: what opensm's postinst asks policy-rc.d (invoke-rc.d, deb-systemd-invoke),
# and what another package's asks
tool("apt-get", '''echo "apt-get $*" >> "%s"
case "$1" in update) exit 0 ;; esac
P="$IBSM_DEPS_POLICY_RC_D"
for q in "opensm start" "opensm.service start" "opensm@0x1.service restart" "logrotate.service start"; do
  if [ -x "$P" ]; then $P $q; echo "policy $q -> $?" >> "%s"; else echo "policy $q -> none" >> "%s"; fi
done
exit "${APT_RC:-0}"''' % (calls, calls, calls))


def deps(packages, missing, host_policy=None, **extra):
    """Runs deps.sh PACKAGES with MISSING not installed; returns (Result, [calls], policy-rc.d
    text afterwards or None)."""
    for p in (calls, policy):
        if os.path.exists(p):
            os.unlink(p)
    if host_policy is not None:
        with open(policy, "w") as f:
            f.write(host_policy)
        os.chmod(policy, 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ.get("PATH", "/usr/bin:/bin"), MISSING=" ".join(missing),
               IBSM_DEPS_POLICY_RC_D=policy)
    env.update(extra)
    r = h.run(["sh", DEPS] + packages, env=env, timeout=30)
    got = h.read(calls).splitlines() if os.path.exists(calls) else []
    after = h.read(policy) if os.path.lexists(policy) else None
    return r, got, after


def answers(got):
    return {l.split(" -> ")[0][len("policy "):]: l.split(" -> ")[1] for l in got if l.startswith("policy ")}


PKGS = ["opensm", "logrotate", "valgrind"]
# ---- a fresh host, no policy-rc.d of its own
r, got, after = deps(PKGS, ["opensm", "logrotate"])
a = answers(got)
tap.ok(r.rc == 0 and "apt-get install -y -qq opensm logrotate" in got,
       "deps.sh installs what is missing (opensm logrotate)", r.describe() + "\n" + "\n".join(got))
tap.ok(a.get("opensm start") == "101" and a.get("opensm.service start") == "101" and
       a.get("opensm@0x1.service restart") == "101",
       "while apt-get runs, policy-rc.d refuses opensm's init script, opensm.service and opensm@.service (101)",
       str(a))
tap.ok(a.get("logrotate.service start") == "0", "... and allows another package's unit", str(a))
tap.ok(after is None and "systemctl disable opensm.service" in got and
       "without starting or enabling" in r.out,
       "afterwards: no policy-rc.d left, opensm.service disabled, and the output says so",
       "policy-rc.d: %r\n%s\n%s" % (after, "\n".join(got), r.describe()))
# ---- a host with its own policy-rc.d (a container image's)
r, got, after = deps(PKGS, ["opensm", "logrotate"], host_policy=HOST_POLICY)
a = answers(got)
tap.ok(r.rc == 0 and a.get("opensm.service start") == "101" and a.get("logrotate.service start") == "104",
       "with the host's own policy-rc.d: opensm refused, another unit answered by the host's (104)", str(a))
tap.ok(after == HOST_POLICY and not os.path.exists(policy + ".ibsm-deps"),
       "afterwards the host's policy-rc.d is back as it was", "policy-rc.d: %r" % after)
# ---- opensm already installed: left alone
r, got, after = deps(PKGS, ["logrotate"])
tap.ok(r.rc == 0 and answers(got).get("opensm.service start") == "none" and
       not any(c.startswith(("systemctl", "update-rc.d")) for c in got),
       "opensm already installed: no policy-rc.d written, its service not touched", "\n".join(got))
# ---- apt-get fails: exit 1, the host's policy-rc.d put back all the same
r, got, after = deps(PKGS, ["opensm"], host_policy=HOST_POLICY, APT_RC="100")
tap.ok(r.rc == 1 and after == HOST_POLICY and "apt-get failed" in r.err,
       "apt-get fails: deps.sh exits 1 and the host's policy-rc.d is back", r.describe() + "\npolicy: %r" % after)
# ---- nothing missing: nothing run
r, got, after = deps(PKGS, [])
tap.ok(r.rc == 0 and not got and after is None, "nothing missing: nothing run", "\n".join(got))
# ---- not root: the commands, with the warning about opensm's service
r, got, after = deps(PKGS, ["opensm"], FAKE_UID="1000")
tap.ok(r.rc == 1 and not got and "sudo apt-get install -y opensm" in r.err and
       "systemctl disable --now opensm.service" in r.err,
       "not root: prints the install command and how to stop OpenSM's service, runs nothing", r.describe())
tap.done()
