#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# deps.sh - installs the Debian packages ibsm needs that are missing (as root), or prints
# the command to do so. Arguments: package names.
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq $missing >/dev/null || { echo "deps: apt-get failed" >&2; exit 1; }
else
	echo "deps: missing packages:$missing" >&2
	echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
