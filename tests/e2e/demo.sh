#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-e2e, part 4: `make demo-xdp`'s script (userspace/xdp/demo.sh),
# as the README promises it: it shows blocking with real traffic and exits
# 0; it exits 1 when a block is reported done but not enforced (a sieve
# whose `block` does nothing); and whichever way it ends (success, that
# failure, SIGTERM) it leaves no namespace, pin folder or store behind.
# Then the README's quick start for the blocklist, run as written (its
# names made this run's own): the pings it promises, and nothing left.
#
# Usage: demo.sh SIEVE RESULTS_FILE [CASE_SUBSTRING]
set -u

SIEVE=$(realpath "$1")
RESULTS=$2
FILTER=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
DEMO=$HERE/../../userspace/xdp/demo.sh
WORK=$(mktemp -d /tmp/sieve-e2e-demo.XXXXXX)
TAG=d$$
PIN_ROOT=/sys/fs/bpf/sieve
dpid=

cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	# What a failed case's demo may have left, named by this run's tags.
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		case $ns in sieve-demo-*-$TAG* | qs-*-$TAG) ip netns del "$ns";; esac
	done
	rm -rf "$WORK"
}
at_exit cleanup


# The pin folder of the demo's namespace, once its interface is attached:
# netns-INODE (empty when the demo is gone). Waits at most 30 s.
pin_folder() {
	local d
	for _ in $(seq 600); do
		for d in "$PIN_ROOT"/netns-*/"svdemo$1"; do
			[ -d "$d" ] && { dirname "$d"; return 0; }
		done
		sleep 0.05
	done
	return 1
}

# Nothing of the demo tagged $1 is left: namespaces, pins (folder $2, if
# known), the store (its TMPDIR, $3).
check_clean() {
	ip netns list 2>/dev/null | grep -q "sieve-demo-.*-$1\b" && fail "namespaces left: $(ip netns list 2>/dev/null | grep "$1")"
	# shellcheck disable=SC2010 # names this test made: no newlines, no dashes first
	ls -d "$PIN_ROOT"/netns-*/"svdemo$1" 2>/dev/null | grep -q . && fail "pins of svdemo$1 left"
	[ -n "$2" ] && [ -e "$2" ] && fail "pin folder $2 left"
	[ -z "$(ls -A "$3")" ] || fail "store left in $3: $(ls -A "$3")"
}

# run_demo TAG SIEVE: the demo in the background (bounded), its pin folder
# noted as soon as it attaches; sets $dpid, $folder, $tmp.
run_demo() {
	tmp=$WORK/tmp-$1; mkdir -p "$tmp"
	TMPDIR=$tmp SIEVE_DEMO_TAG=$1 timeout 180 "$DEMO" "$2" >"$WORK/out-$1" 2>&1 &
	dpid=$!
	folder=$(pin_folder "$1") || folder=
}

case_demo_xdp() {
	local t=${TAG}a rc=0
	run_demo $t "$SIEVE"
	[ -n "$folder" ] || fail "the demo never attached"
	wait $dpid || rc=$?; dpid=
	[ $rc = 0 ] || { fail "demo exited $rc"; sed 's/^/      /' "$WORK/out-$t" | tail -n 15; }
	grep -q '0 of 5 answered' "$WORK/out-$t" || fail "no ping was shown dropped"
	grep -q '== Done: every verdict' "$WORK/out-$t" || fail "the demo did not reach its end"
	check_clean $t "$folder" "$tmp"
}

# A sieve that says it blocked and did not: the demo must notice.
case_demo_xdp_unenforced() {
	local t=${TAG}b rc=0 fake=$WORK/fake-sieve
	cat >"$fake" <<-EOF
	#!/bin/sh
	[ "\$1 \$2" = "xdp block" ] && { echo "default: blocked 1; 1 interface in step"; exit 0; }
	exec "$SIEVE" "\$@"
	EOF
	chmod +x "$fake"
	run_demo $t "$fake"
	wait $dpid || rc=$?; dpid=
	[ $rc = 1 ] || fail "demo over a block that is not enforced exited $rc, want 1"
	grep -q 'DEMO FAILED: 198.51.100.2 is blocked but 5 of 5 pings got through' "$WORK/out-$t" ||
		fail "no line naming the unenforced block: $(grep DEMO "$WORK/out-$t")"
	check_clean $t "$folder" "$tmp"
}

case_demo_xdp_killed() {
	local t=${TAG}c rc=0
	run_demo $t "$SIEVE"
	[ -n "$folder" ] || fail "the demo never attached"
	kill -TERM $dpid
	wait $dpid || rc=$?; dpid=
	[ $rc = 143 ] || fail "demo killed with SIGTERM exited $rc, want 143"
	check_clean $t "$folder" "$tmp"
}

# The README's block from `ip netns add qs-cl` to `ip netns del qs-sv`,
# names given this run's tag, run with the CLI under test first on PATH
# and a store of its own; the ping summaries in order and each step's line.
case_demo_readme_quick_start() {
	local t=$TAG out summary folder=
	awk '/^    ip netns add qs-cl/ { on = 1 } on { print substr($0, 5) } on && /ip netns del qs-sv/ { exit }' \
		"$HERE/../../README.md" |
		sed -e "s/qs-cl/qs-cl-$t/g; s/qs-sv/qs-sv-$t/g; s/veth-cl/vqc$t/g; s/veth-sv/vqs$t/g" \
		>"$WORK/quick.sh"
	[ "$(grep -c . "$WORK/quick.sh")" -ge 15 ] || { fail "no quick start found in README.md"; return; }
	mkdir -p "$WORK/qs-state"
	out=$(PATH=$(dirname "$SIEVE"):$PATH SIEVE_STATE_DIR=$WORK/qs-state timeout 120 bash "$WORK/quick.sh" 2>&1)
	summary=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' <<<"$out" | tr '\n' ' ')
	[ "$summary" = "3 0 3 " ] || fail "pings received: '$summary', want '3 0 3 '"
	for line in "vqs$t: attached" "default: blocked 1;" "dropped_source +3 pkts" \
		"default: unblocked 1;" "vqs$t: detached"; do
		grep -Eq "$line" <<<"$out" || fail "no line '$line' in the quick start's output"
	done
	[ "$case_failed" = 0 ] || sed 's/^/      /' <<<"$out" | tail -n 40
	ip netns list 2>/dev/null | grep -q "qs-.*-$t" && fail "the quick start left its namespaces"
	# shellcheck disable=SC2010 # names this test made: no newlines, no dashes first
	ls -d "$PIN_ROOT"/netns-*/"vqs$t" 2>/dev/null | grep -q . && fail "the quick start left pins"
}

CASES="demo_xdp demo_xdp_unenforced demo_xdp_killed demo_readme_quick_start"

if [ "$(id -u)" != 0 ]; then
	echo "test-e2e needs root (network namespaces, XDP)"; echo "0 1" >"$RESULTS"; exit 2
fi
# shellcheck disable=SC2086 # the names: one argument each
for c in $(cases_matching e2e_ "$FILTER" $CASES); do
	"case_$c"
	case_report "e2e_$c"
done
finish "$RESULTS"
