# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "device" (sourced by the VM's /init): the raw-ioctl programs of
# tests/device, each printing its own KTAP report. A program that dies (a
# signal, a crash) adds a failing report of its own, so a crash is never
# silence.

# Runs one program; its report goes to stdout.
device_run() {
	local name=$1 rc
	shift
	echo "sieve-vm: device: $name $*" >&2
	"$name" "$@"
	rc=$?
	# 0 all passed, 1 some failed (the report says which); else it died.
	if [ "$rc" -gt 1 ]; then
		printf 'KTAP version 1\n1..1\nnot ok 1 %s %s exited with status %d\n' \
			"$name" "$*" "$rc"
	fi
}

device_run sieve_abi_test
device_run sieve_bad_test
device_run sieve_conc_test 10
device_run sieve_exchange_test 200
# sieve.fuzz=N on the kernel command line (the debug run) sets the count.
device_run sieve_fuzz_test "$(sed -n 's/.*sieve\.fuzz=\([0-9][0-9]*\).*/\1/p' /proc/cmdline | grep . || echo 100000)" 0x5eedf00d
device_run sieve_regress_test
device_run sieve_procfs_test
device_run sieve_readers_test
true
