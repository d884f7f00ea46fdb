# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "core" (sourced by the VM's /init): loads sieve_test.ko, which
# runs the shared filter-core cases inside the kernel as it loads and
# computes the jhash and filter-table values the host compares with the
# userspace port (parity.c); passes on its KTAP report and those values,
# then unloads it. The steps around the module are a KTAP report of their
# own, so a module that fails to load or unload is a failure, not silence.

core_dbg=/sys/kernel/debug/sieve_test
core_n=0
core_ktap=""

core_result() {
	core_n=$((core_n + 1))
	if [ "$1" = OK ]; then
		core_ktap="${core_ktap}ok $core_n $2
"
	else
		core_ktap="${core_ktap}not ok $core_n $2
"
	fi
}

if insmod "$SIEVE_MODDIR/sieve_test.ko"; then
	core_result OK "insmod sieve_test.ko"
	# Kept in /tmp first: the module must be gone before the report ends.
	if cat "$core_dbg/ktap" >/tmp/core.ktap && [ -s /tmp/core.ktap ]; then
		core_result OK "read the in-kernel KTAP report"
	else
		core_result FAIL "read the in-kernel KTAP report"
	fi
	# An empty or missing file is reported by parity on the host.
	cat "$core_dbg/parity" >"$SIEVE_OUT/sieve_parity.txt"
	if rmmod sieve_test; then
		core_result OK "rmmod sieve_test"
	else
		core_result FAIL "rmmod sieve_test"
	fi
else
	core_result FAIL "insmod sieve_test.ko"
fi

printf 'KTAP version 1\n1..%d\n%s' "$core_n" "$core_ktap"
[ -f /tmp/core.ktap ] && cat /tmp/core.ktap
true
