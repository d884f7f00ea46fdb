#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test VM (busybox sh). Loads sieve.ko, runs every suite
# script in /tests (in name order), unloads the module, and reports to the
# host over the second serial port, which nothing else writes to, so
# kernel messages on the console can never cut a line of it in two:
#
#   SIEVE-VM: suite NAME          a suite's KTAP output follows
#   SIEVE-VM: end NAME rc=N       the suite script exited with N
#   SIEVE-VM: file NAME           the content of /out/NAME follows
#   SIEVE-VM: endfile NAME
#   SIEVE-VM: done                everything was sent; powering off
#
# A suite script is sourced in a subshell with cwd /tmp; it prints KTAP
# on stdout, diagnostics on stderr (the console), may use the programs in
# /tests/bin (on PATH), the modules in $SIEVE_MODDIR, and leaves files for
# the host in $SIEVE_OUT. The init also reports its own steps as the
# suite "vm". It always ends in poweroff -f, unless a suite never returns:
# the host's timeout is there for that.

SIEVE_MODDIR=/lib/sieve
SIEVE_OUT=/out
RESULTS=/dev/ttyS1
PATH=/tests/bin:/bin
export SIEVE_MODDIR SIEVE_OUT PATH

vm_ntests=0
vm_ktap=""

# Records one result of the "vm" suite: vm_result OK|FAIL description.
vm_result() {
	vm_ntests=$((vm_ntests + 1))
	if [ "$1" = OK ]; then
		vm_ktap="${vm_ktap}ok $vm_ntests $2
"
	else
		vm_ktap="${vm_ktap}not ok $vm_ntests $2
"
	fi
}

# Runs a command, records it as a test of the "vm" suite, and shows its
# error output on the console if it fails.
vm_step() {
	local name=$1 err
	shift
	if err=$("$@" 2>&1); then
		vm_result OK "$name"
	else
		echo "sieve-vm: '$*' failed: $err" >&2
		vm_result FAIL "$name"
	fi
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
	exec 3>"$RESULTS"
	stty -F "$RESULTS" raw -echo 2>/dev/null
}

# Sends one line to the host.
say() {
	echo "SIEVE-VM: $*" >&3
}

run_suites() {
	local script name rc

	for script in /tests/*.sh; do
		[ -f "$script" ] || continue
		name=${script##*/}
		name=${name%.sh}
		name=${name#[0-9][0-9]-}
		echo "sieve-vm: running suite $name" >&2
		say "suite $name"
		(cd /tmp && . "$script") >&3
		rc=$?
		say "end $name rc=$rc"
	done
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
		vm_result OK "kernel not tainted by an oops, warning, lockup or bad page"
	else
		vm_result FAIL "kernel not tainted by an oops, warning, lockup or bad page (tainted=$tainted)"
	fi
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
	vm_step "insmod sieve.ko" insmod "$SIEVE_MODDIR/sieve.ko"
	run_suites
	vm_step "rmmod sieve" rmmod sieve
	check_taint
	say "suite vm"
	printf 'KTAP version 1\n1..%d\n%s' "$vm_ntests" "$vm_ktap" >&3
	say "end vm rc=0"
	dmesg >"$SIEVE_OUT/dmesg.txt"
	send_files
	say "done"
}

main
sync
poweroff -f
