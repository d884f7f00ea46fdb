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

if insmod "$SIEVE_MODDIR/sieve_test.ko"; then
	ktap_result OK "insmod sieve_test.ko"
	# Kept in /tmp first: the module must be gone before the report ends.
	if cat "$core_dbg/ktap" >/tmp/core.ktap && [ -s /tmp/core.ktap ]; then
		ktap_result OK "read the in-kernel KTAP report"
	else
		ktap_result FAIL "read the in-kernel KTAP report"
	fi
	# An empty or missing file is reported by parity on the host.
	cat "$core_dbg/parity" >"$SIEVE_OUT/sieve_parity.txt"
	if rmmod sieve_test; then
		ktap_result OK "rmmod sieve_test"
	else
		ktap_result FAIL "rmmod sieve_test"
	fi
else
	ktap_result FAIL "insmod sieve_test.ko"
fi

ktap_print
[ -f /tmp/core.ktap ] && cat /tmp/core.ktap
true
