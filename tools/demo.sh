#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# demo.sh - `make demo`: ibsm brings up a small simulated fat tree (ibsim + libumad2sim, no
# InfiniBand hardware), then ibnetdiscover shows every node with the LID ibsm gave it.
#
# Environment (all optional):
#   IBSM_DEMO_NET       fabric file (default etc/fabrics/demo.net)
#   IBSM_DEMO_SM        SM program (default build/ibsm)
#   IBSM_DEMO_SM_ARGS   its arguments (default "--once --progress"; "-f LOG" is appended),
#                       e.g. IBSM_DEMO_SM=opensm IBSM_DEMO_SM_ARGS="--once -d 2 -s 0"
#   IBSM_DEMO_TIMEOUT   seconds the SM may take (default 120)
# Exit status: 0 when the SM reached SUBNET UP, non-zero otherwise.
# shellcheck disable=SC2317 # stop_pid and cleanup run from traps
set -u
# infiniband-diags live in /usr/sbin, which a Debian user's PATH lacks
PATH=$PATH:/usr/sbin:/sbin

root=$(cd "$(dirname "$0")/.." && pwd)
net=${IBSM_DEMO_NET:-$root/etc/fabrics/demo.net}
sm=${IBSM_DEMO_SM:-$root/build/ibsm}
sm_args=${IBSM_DEMO_SM_ARGS-"--once --progress"}
limit=${IBSM_DEMO_TIMEOUT:-120}

die() { echo "demo: $*" >&2; exit 1; }

[ -f "$net" ] || die "no fabric file $net"
net=$(cd "$(dirname "$net")" && pwd)/$(basename "$net")
case $sm in
*/*) [ -x "$sm" ] || die "$sm is missing (run make all)" ;;
*) command -v "$sm" >/dev/null || die "$sm not found" ;;
esac
for tool in ibsim ibnetdiscover timeout; do
	command -v $tool >/dev/null || die "$tool not found (make deps)"
done
umad2sim=$(dpkg -L libumad2sim0 2>/dev/null | grep '/libumad2sim\.so$' | head -n 1)
if [ -z "$umad2sim" ] || [ ! -f "$umad2sim" ]; then
	die "libumad2sim.so not found (make deps)"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ibsm-demo.XXXXXX") || die "mktemp failed"
sim_pid=""
sm_pid=""

# stop_pid PID: SIGTERM, up to 5 s grace, then SIGKILL; reaps it.
stop_pid() {
	kill "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return 0; }
	n=0
	while kill -0 "$1" 2>/dev/null && [ "$n" -lt 50 ]; do
		# a reaped-by-shell child answers kill -0 no more; a zombie does: check its state
		case $(ps -o stat= -p "$1" 2>/dev/null) in Z*) break ;; esac
		sleep 0.1
		n=$((n + 1))
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

cleanup() {
	trap - EXIT INT TERM HUP PIPE
	[ -n "$sm_pid" ] && stop_pid "$sm_pid"
	[ -n "$sim_pid" ] && stop_pid "$sim_pid"
	rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

# ---- the simulator: own socket name, sized from the file, console on a held-open fifo
sizes=$(awk '/^[ \t]*(Switch|Hca|Ca)[ \t]/ {
		nodes++; if ($1 == "Switch") { sw++; ports += $2 + 1 } else ports += $2 }
	END { print nodes + 16, sw + 16, ports + 64 }' "$net")
# shellcheck disable=SC2086 # three numbers
set -- $sizes
sock="ibsm-demo-$$-$(basename "$scratch")"
mkfifo "$scratch/console" || die "mkfifo failed"
(
	cd "$scratch" || exit 1
	unset LD_PRELOAD
	IBSIM_SOCKNAME=$sock
	export IBSIM_SOCKNAME
	# <> keeps the fifo open read-write: ibsim's console never sees EOF
	exec ibsim -s -N "$1" -S "$2" -P "$3" "$net" <>"$scratch/console" >"$scratch/ibsim.log" 2>&1
) &
sim_pid=$!
n=0
until grep -q 'sim>' "$scratch/ibsim.log" 2>/dev/null; do
	kill -0 "$sim_pid" 2>/dev/null || { cat "$scratch/ibsim.log" >&2; die "ibsim failed"; }
	[ $n -lt 300 ] || die "ibsim not ready after 30 s"
	sleep 0.1
	n=$((n + 1))
done

echo "demo: fabric $(basename "$net") simulated by ibsim (pid $sim_pid)"
echo "demo: running $(basename "$sm") $sm_args"

# ---- the SM, attached to the first CA of the file through libumad2sim
log=$scratch/sm.log
t0=$(date +%s.%N)
(
	cd "$scratch" || exit 1
	IBSIM_SOCKNAME=$sock LD_PRELOAD=$umad2sim OSM_TMP_DIR=$scratch OSM_CACHE_DIR=$scratch
	export IBSIM_SOCKNAME LD_PRELOAD OSM_TMP_DIR OSM_CACHE_DIR
	# shellcheck disable=SC2086 # sm_args is a word list on purpose
	exec timeout -s TERM "$limit" "$sm" $sm_args -f "$log" >"$scratch/sm.out" 2>&1 </dev/null
) &
sm_pid=$!
# --progress lines go to the SM's stderr: show them as they come
tail_at=0
while kill -0 "$sm_pid" 2>/dev/null; do
	case $(ps -o stat= -p "$sm_pid" 2>/dev/null) in Z* | "") break ;; esac
	lines=$(wc -l <"$scratch/sm.out")
	if [ "$lines" -gt "$tail_at" ]; then
		sed -n "$((tail_at + 1)),${lines}p" "$scratch/sm.out" | grep -v '^ibwarn: .*sim_connect' |
			sed 's/^/  | /'
		tail_at=$lines
	fi
	sleep 0.1
done
wait "$sm_pid"
rc=$?
sm_pid=""
t1=$(date +%s.%N)
sed -n "$((tail_at + 1)),\$p" "$scratch/sm.out" | grep -v '^ibwarn: .*sim_connect' |
	sed 's/^/  | /'

if [ $rc -ne 0 ] || ! grep -q 'SUBNET UP' "$log" 2>/dev/null; then
	[ $rc -eq 124 ] && echo "demo: the SM did not finish within $limit s" >&2
	echo "demo: the SM failed (exit status $rc); last lines of its log:" >&2
	tail -n 20 "$log" >&2 2>/dev/null
	[ $rc -ne 0 ] || rc=1
	exit $rc
fi

# ---- what the fabric looks like now, seen by a diagnostic tool (not by the SM)
topo=$scratch/ibnetdiscover.txt
(
	cd "$scratch" || exit 1
	IBSIM_SOCKNAME=$sock LD_PRELOAD=$umad2sim
	export IBSIM_SOCKNAME LD_PRELOAD
	exec ibnetdiscover
) >"$topo" 2>"$scratch/ibnetdiscover.err" || {
	cat "$scratch/ibnetdiscover.err" >&2
	die "ibnetdiscover failed"
}

# one row per switch and per CA port: kind lid name guid
awk '
/^Switch[ \t]/ {
	name = $0; sub(/^[^#]*# "/, "", name); sub(/".*/, "", name)
	guid = $3; gsub(/"/, "", guid); sub(/^S-/, "0x", guid)
	lid = $0; sub(/.* lid /, "", lid); sub(/ .*/, "", lid)
	print "S", lid, name, guid
	next
}
/^(Ca|Hca)[ \t]/ { ca = $0; sub(/^[^#]*# "/, "", ca); sub(/".*/, "", ca); nports = $2; next }
/^$/ { ca = "" }
/^\[[0-9]+\]\(/ && ca != "" {
	port = $1; sub(/^\[/, "", port); sub(/\].*/, "", port)
	guid = $1; sub(/.*\(/, "", guid); sub(/\).*/, "", guid)
	lid = $0; sub(/^[^#]*# lid /, "", lid); sub(/ .*/, "", lid)
	print "C", lid, (nports > 1 ? ca "/" port : ca), sprintf("0x%016s", guid)
}' "$topo" | sort -k2,2n >"$scratch/nodes.txt"

switches=$(grep -c '^S ' "$scratch/nodes.txt")
caports=$(grep -c '^C ' "$scratch/nodes.txt")
cas=$(grep -c -E '^(Ca|Hca)[[:space:]]' "$topo")
with_lid=$(awk '$2 != 0' "$scratch/nodes.txt" | wc -l)
duplicates=$(awk '$2 != 0 { print $2 }' "$scratch/nodes.txt" | uniq -d | wc -l)

# time: ibsm's --progress summary ("ibsm: SUBNET UP: ..., 0.123 s"), else its STATS total
# (taken at exit), else the wall clock around the SM
seconds=$(sed -n 's/.*SUBNET UP: .*, \([0-9.]*\) s$/\1/p' "$scratch/sm.out" | tail -n 1)
[ -n "$seconds" ] || seconds=$(sed -n 's/.*STATS total smps=[0-9]* seconds=\([0-9.]*\).*/\1/p' \
	"$log" "$scratch/sm.out" | tail -n 1)
smps=$(sed -n 's/.*STATS total smps=\([0-9]*\).*/\1/p' "$log" "$scratch/sm.out" | tail -n 1)
if [ -n "$seconds" ]; then
	seconds="$seconds s"
else
	seconds=$(echo "$t0 $t1" | awk '{ printf "%.2f s (wall clock)", $2 - $1 }')
fi
# engine: -R in the arguments, else what the log names, else the default
engine=$(echo " $sm_args " | sed -n 's/.* -R \([^ ]*\) .*/\1/p')
# ibsm's --progress summary names the engine that routed; its log the configured chain
[ -n "$engine" ] || engine=$(cat "$scratch/sm.out" "$log" |
	grep -o -i -E 'engines?[ =:]+[A-Za-z0-9_,-]+' | head -n 1 | sed -E 's/.*[ =:]//; s/,$//')
[ -n "$engine" ] || engine=$(grep -o -E '[A-Za-z0-9_-]+ tables configured on all switches' "$log" |
	head -n 1 | cut -d' ' -f1)
[ -n "$engine" ] || engine="default"

echo
echo "Summary"
echo "  nodes:          $((switches + cas)) ($switches switches, $cas CAs with $caports ports)"
echo "  LIDs assigned:  $with_lid of $((switches + caports))$([ "$duplicates" -gt 0 ] &&
	echo ", $duplicates DUPLICATE")"
echo "  routing engine: $engine"
echo "  SUBNET UP in:   $seconds$([ -n "$smps" ] && echo ", $smps SMPs")"
echo
echo "Switches (LID, node GUID, name), from ibnetdiscover:"
awk '$1 == "S" { printf "  %5s  %s  %s\n", $2, $4, $3 }' "$scratch/nodes.txt"
echo
echo "CA ports (LID name):"
awk -v cols=4 '$1 == "C" { cell[n++] = sprintf("%5s %-14s", $2, $3) }
	END {
		rows = int((n + cols - 1) / cols)
		for (r = 0; r < rows; r++) {
			line = ""
			for (c = 0; c < cols && r + c * rows < n; c++)
				line = line cell[r + c * rows]
			sub(/ +$/, "", line)
			print line
		}
	}' "$scratch/nodes.txt"

if [ "$with_lid" -ne $((switches + caports)) ] || [ "$duplicates" -gt 0 ]; then
	echo "demo: some ports have no LID or share one" >&2
	exit 1
fi
echo
echo "By hand, the same fabric: README.md, \"Running it\"."
exit 0
