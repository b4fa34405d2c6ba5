#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# deps.sh - installs the Debian packages ibsm needs that are missing (as root), or prints
# the command to do so. Arguments: package names.
#
# Debian's opensm (the reference SM the tests run by hand) starts and enables its service when
# installed: on a host with an InfiniBand port that is a second SM appearing by surprise. So it
# is installed with a policy-rc.d (see invoke-rc.d(8); deb-systemd-invoke honours it too) that
# refuses every action on opensm, opensm.service and opensm@*.service while apt-get runs (any
# other unit is left to the host's own policy-rc.d, if it has one, which is put back after),
# then its service is disabled (systemctl; update-rc.d for its init script). An opensm that was
# installed before is left as it is.
# IBSM_DEPS_POLICY_RC_D names another policy-rc.d path (tests/sim/38-packaging.t).
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
	case " $missing " in *" opensm "*)
		echo "deps: (opensm's package starts and enables its SM: then run" \
		     "sudo systemctl disable --now opensm.service)" >&2 ;;
	esac
	exit 1
fi

policy=${IBSM_DEPS_POLICY_RC_D:-/usr/sbin/policy-rc.d}
saved=""
opensm=""
case " $missing " in *" opensm "*) opensm=1 ;; esac
restore() {
	[ -n "$opensm" ] || return 0
	rm -f "$policy"
	[ -z "$saved" ] || mv -f "$saved" "$policy"
	opensm=""
}
if [ -n "$opensm" ]; then
	trap 'restore; exit 1' INT TERM HUP
	if [ -e "$policy" ] || [ -L "$policy" ]; then
		saved="$policy.ibsm-deps"
		mv -f "$policy" "$saved" || exit 1
	fi
	# exit 101: action forbidden (invoke-rc.d(8)); anything else goes to the host's own policy
	{
		echo '#!/bin/sh'
		echo '# written by ibsm tools/deps.sh while it installs opensm; removed after'
		echo 'for a in "$@"; do case "$a" in opensm|opensm.service|opensm@*) exit 101 ;; esac; done'
		[ -z "$saved" ] || echo "[ -x \"$saved\" ] && exec \"$saved\" \"\$@\""
		echo 'exit 0'
	} > "$policy" && chmod 755 "$policy" || { restore; exit 1; }
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq $missing >/dev/null
rc=$?
if [ -n "$opensm" ]; then
	restore
	trap - INT TERM HUP
	# not enabled either: the next boot starts no OpenSM
	if command -v systemctl >/dev/null 2>&1; then
		systemctl disable opensm.service >/dev/null 2>&1 || true
	fi
	if command -v update-rc.d >/dev/null 2>&1 && [ -e /etc/init.d/opensm ]; then
		update-rc.d opensm disable >/dev/null 2>&1 || true
	fi
	[ $rc = 0 ] && echo "deps: opensm installed without starting or enabling its service" \
		"(systemctl enable --now opensm starts it)"
fi
[ $rc = 0 ] || { echo "deps: apt-get failed" >&2; exit 1; }
