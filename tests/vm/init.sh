#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh in the VM, which dash's dialect matches
#
# /init of the test VM (busybox sh). Loads sieve.ko, runs every suite
# script in /tests (in name order), unloads the module, and reports to the
# host over the second serial port (arm64: a virtio console), which nothing else writes to, so
# kernel messages on the console can never cut a line of it in two:
#
#   SIEVE-VM: suite NAME          a suite's KTAP output follows
#   SIEVE-VM: end NAME rc=N       the suite script exited with N
#   SIEVE-VM: file NAME           the content of /out/NAME follows
#   SIEVE-VM: endfile NAME
#   SIEVE-VM: done                everything was sent; powering off
#
# sieve.only=NAME on the command line (make test-vm T=NAME) runs only the
# suites whose name holds NAME, and the test programs so named of the suites
# that run them with ktap_run (sieve_fuzz_test of device.sh, ...); a NAME
# that matches nothing fails the run.
#
# A suite script is sourced in a subshell with cwd /tmp; it prints KTAP
# on stdout, diagnostics on stderr (the console), may use the programs in
# /tests/bin (on PATH), the modules in $SIEVE_MODDIR, the ktap_* helpers
# below, and leaves files for
# the host in $SIEVE_OUT. The init also reports its own steps as the
# suite "vm"; on a kernel with kmemleak (the debug kernel) one of them is a
# scan after the suites, which fails with the report if any object is
# unreferenced. It always ends in poweroff -f or, on a kernel that cannot
# power off (no ACPI, as on the debug kernel), reboot -f, which qemu's -no-reboot turns into an
# exit; unless a suite never returns: the host's timeout is there for that.

SIEVE_MODDIR=/lib/sieve
SIEVE_OUT=/out
RESULTS=/dev/ttyS1
KMEMLEAK=/sys/kernel/debug/kmemleak
PATH=/tests/bin:/bin
export SIEVE_MODDIR SIEVE_OUT PATH

# ---- KTAP: the one report helper of the VM's suites ----
# The suites, sourced in a subshell, use these on a report of their own
# (run_suites empties it for each): ktap_result, ktap_step, ktap_diag add
# to it, ktap_print prints it; ktap_prefix starts each description. The
# init's own steps are the report of the suite "vm".
ktap_n=0
ktap_lines=""
ktap_prefix=""

# ktap_result OK|FAIL DESCRIPTION: one result.
ktap_result() {
	ktap_n=$((ktap_n + 1))
	if [ "$1" = OK ]; then
		ktap_lines="${ktap_lines}ok $ktap_n $ktap_prefix$2
"
	else
		ktap_lines="${ktap_lines}not ok $ktap_n $ktap_prefix$2
"
	fi
}

# ktap_diag FILE: its lines (at most 200) as diagnostics of the last result.
ktap_diag() {
	local line n=0

	while IFS= read -r line && [ $n -lt 200 ]; do
		ktap_lines="${ktap_lines}# $line
"
		n=$((n + 1))
	done <"$1"
	[ $n -lt 200 ] || ktap_lines="${ktap_lines}# (cut at 200 lines: the whole report is in the run's files)
"
}

# ktap_step DESCRIPTION COMMAND...: a result, OK when COMMAND exits 0; its
# output goes to the console when it fails.
ktap_step() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ktap_result OK "$name"
	else
		echo "sieve-vm: $ktap_prefix'$*' failed: $out" >&2
		ktap_result FAIL "$name"
	fi
}

# ktap_wants NAME: whether the suite's case NAME runs: always, unless the
# suite runs for sieve.only= (ktap_only, set by run_suite) and NAME does
# not hold it. A case that runs so is noted for run_suite.
ktap_only=""
ktap_wants() {
	[ -n "$ktap_only" ] || return 0
	case $1 in *"$ktap_only"*) : >/tmp/sieve-only.matched ;; *) return 1 ;; esac
}

# ktap_run PROG [ARG...]: a test program that prints its own KTAP report
# and exits 0 (all passed) or 1 (some failed), if ktap_wants it; one that
# dies (any other status) adds a failing report, so a crash is never
# silence.
ktap_run() {
	local rc

	ktap_wants "$1" || return 0
	echo "sieve-vm: $ktap_prefix$*" >&2
	"$@"
	rc=$?
	[ "$rc" -le 1 ] || printf 'KTAP version 1\n1..1\nnot ok 1 %s exited with status %d\n' "$*" "$rc"
}

# ktap_print: the report, as one KTAP document.
ktap_print() {
	printf 'KTAP version 1\n1..%d\n%s' "$ktap_n" "$ktap_lines"
}

setup() {
	/bin/busybox --install -s /bin
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	mount -t debugfs debugfs /sys/kernel/debug
	mount -t tmpfs tmpfs /tmp
	mount -t tmpfs tmpfs "$SIEVE_OUT"
	exec </dev/console >/dev/console 2>&1
	# A task stuck in D state for 20 s is reported (and fails the run),
	# well before the host's timeout: checked every 5 s, not every 20.
	echo 20 >/proc/sys/kernel/hung_task_timeout_secs
	echo 5 >/proc/sys/kernel/hung_task_check_interval_secs
	results_port
	exec 3>"$RESULTS"
	stty -F "$RESULTS" raw -echo 2>/dev/null
}

# sieve.results=hvc0 on the command line (run.sh --arch arm64, whose virt
# machine has a single UART): the reports go to the virtio console, whose
# modules (and virtio-mmio's, its transport) are in /lib/sieve.
results_port() {
	local port n=0

	port=$(sed -n 's/.*sieve\.results=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
	[ -n "$port" ] || return 0
	insmod "$SIEVE_MODDIR/virtio_mmio.ko"
	insmod "$SIEVE_MODDIR/virtio_console.ko"
	while [ ! -c "/dev/$port" ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	RESULTS=/dev/$port
}

# Sends one line to the host.
say() {
	echo "SIEVE-VM: $*" >&3
}

# run_suite SCRIPT NAME ONLY: sources SCRIPT, its report to the host, as
# suite NAME; with ONLY (sieve.only= naming none of the suite but maybe
# some of its cases, ktap_wants), the report is sent only if a case ran.
# Its status: whether it ran.
run_suite() {
	local script=$1 name=$2 only=$3 rc

	echo "sieve-vm: running suite $name${only:+ (the cases named *$only*)}" >&2
	rm -f /tmp/sieve-only.matched /tmp/sieve-only.out
	if [ -z "$only" ]; then
		say "suite $name"
		# shellcheck source=/dev/null # the suites of VM_SCRIPTS, each checked on its own
		(ktap_n=0 ktap_lines="" ktap_prefix=""; cd /tmp && . "$script") >&3
		rc=$?
		say "end $name rc=$rc"
		return 0
	fi
	# shellcheck source=/dev/null # as above
	(ktap_n=0 ktap_lines="" ktap_prefix="" ktap_only=$only; cd /tmp && . "$script") \
		>/tmp/sieve-only.out
	rc=$?
	[ -e /tmp/sieve-only.matched ] || return 1
	say "suite $name"
	cat /tmp/sieve-only.out >&3
	say "end $name rc=$rc"
}

# Every suite of /tests in name order; under sieve.only=NAME, a suite whose
# name holds NAME, and the cases named so of a suite that picks its own
# (one that calls ktap_run or ktap_wants).
run_suites() {
	local script name only ran=0

	only=$(sed -n 's/.*sieve\.only=\([A-Za-z0-9_.-]*\).*/\1/p' /proc/cmdline)
	for script in /tests/*.sh; do
		[ -f "$script" ] || continue
		name=${script##*/}
		name=${name%.sh}
		name=${name#[0-9][0-9]-}
		case $name in
		*"$only"*) run_suite "$script" "$name" "" && ran=$((ran + 1)) ;;
		*) grep -q 'ktap_run\|ktap_wants' "$script" &&
			run_suite "$script" "$name" "$only" && ran=$((ran + 1)) ;;
		esac
	done
	[ -z "$only" ] || [ $ran -gt 0 ] ||
		ktap_result FAIL "sieve.only=$only (make T=$only) matches a suite or a case"
}

send_files() {
	local f

	for f in "$SIEVE_OUT"/*; do
		[ -f "$f" ] || continue
		say "file ${f##*/}"
		cat "$f" >&3
		# Terminate an unterminated last line, so the marker stays alone.
		[ -z "$(tail -c 1 "$f")" ] || echo >&3
		say "endfile ${f##*/}"
	done
}

# Taint flags a healthy run never sets: B (32) bad page, D (128) oops,
# W (512) warning, L (16384) soft lockup. Loading sieve sets only O and E.
check_taint() {
	local tainted

	tainted=$(cat /proc/sys/kernel/tainted)
	if [ $((tainted & 17056)) -eq 0 ]; then
		ktap_result OK "kernel not tainted by an oops, warning, lockup or bad page"
	else
		ktap_result FAIL "kernel not tainted by an oops, warning, lockup or bad page (tainted=$tainted)"
	fi
}

# kmemleak (debug kernel only). Objects the kernel allocated before the
# suites are not theirs, even if a scan finds them unreferenced later (the
# debug kernel's ACPI caches, say): scan once and set aside what it finds
# ("clear"), and note the time (jiffies), so that kmemleak_check counts
# only objects allocated since.
kmemleak_start() {
	[ -w "$KMEMLEAK" ] || return 0
	echo scan >"$KMEMLEAK" && echo clear >"$KMEMLEAK"
	kmemleak_since=$(cat /sys/kernel/debug/sched/debug /proc/timer_list 2>/dev/null |
		sed -n 's/^jiffies *: *//p' | head -n 1)
	[ -n "$kmemleak_since" ] || echo "sieve-vm: no jiffies count found: kmemleak will count every object" >&2
}

# After the suites and the unload: two scans with a pause between (an
# object allocated less than 5 s before a scan is never reported, and a
# pointer still on its way can make a single scan see a leak that is not
# one), then any unreferenced object allocated since kmemleak_start fails
# the run, its report (size, contents, allocation backtrace) in the
# diagnostics and in kmemleak.txt (all of kmemleak's report:
# kmemleak-all.txt).
kmemleak_check() {
	local all="$SIEVE_OUT/kmemleak-all.txt" report="$SIEVE_OUT/kmemleak.txt" old

	[ -w "$KMEMLEAK" ] || return 0
	echo scan >"$KMEMLEAK"
	sleep 5
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >"$all"
	# A report is a block per object: "unreferenced object ...", then
	# "  comm "NAME", pid N, jiffies J", ...
	awk -v since="${kmemleak_since:-0}" '
		/^unreferenced object/ { keep = 0; head = $0; n = 1; next }
		n == 1 { n = 2; j = $0; sub(/.*jiffies /, "", j); keep = (j + 0 >= since + 0)
			 if (keep) print head }
		keep' "$all" >"$report"
	old=$(( $(grep -c '^unreferenced object' "$all") - $(grep -c '^unreferenced object' "$report") ))
	if [ -s "$report" ]; then
		ktap_result FAIL "kmemleak: no unreferenced object after the suites"
		ktap_diag "$report"
	else
		ktap_result OK "kmemleak: no unreferenced object after the suites ($old from before them ignored)"
		rm -f "$report"
	fi
	[ -s "$all" ] || rm -f "$all"
}

# An interactive shell instead of the suites (make vm-shell).
shell_requested() {
	grep -q 'sieve\.shell' /proc/cmdline
}

# The scripted CLI session of `make demo` instead of the suites: only its
# own output goes to the console, then the VM powers off.
demo_requested() {
	grep -q 'sieve\.demo' /proc/cmdline
}

run_demo() {
	dmesg -n 1
	if insmod "$SIEVE_MODDIR/sieve.ko"; then
		(cd /tmp && sh /demo.sh)
		echo "sieve-demo: exit status $?"
	fi
}

main() {
	setup
	if shell_requested; then
		echo "sieve-vm: modules in $SIEVE_MODDIR, suites in /tests; exit to power off"
		setsid cttyhack sh -l
		return
	fi
	if demo_requested; then
		run_demo
		return
	fi
	kmemleak_start
	ktap_step "insmod sieve.ko" insmod "$SIEVE_MODDIR/sieve.ko"
	# Where the modules were, to resolve addresses in a report given after
	# they are gone (kmemleak's backtraces); again before the unload.
	cat /proc/modules >"$SIEVE_OUT/modules.txt"
	run_suites
	cat /proc/modules >>"$SIEVE_OUT/modules.txt"
	ktap_step "rmmod sieve" rmmod sieve
	kmemleak_check
	check_taint
	say "suite vm"
	ktap_print >&3
	say "end vm rc=0"
	dmesg >"$SIEVE_OUT/dmesg.txt"
	send_files
	say "done"
}

main
sync
# Without ACPI (or with its interpreter off, as on the debug kernel)
# poweroff would only halt.
[ -d /sys/firmware/acpi ] && poweroff -f
reboot -f
