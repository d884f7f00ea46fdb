# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "faultinj" (debug kernel; sourced by the VM's /init): the
# fail-nth sweep of tests/faultinj/faultinj_test.c, one KTAP report. A
# program that dies adds a failing report of its own.

echo "sieve-vm: faultinj: sieve_faultinj_test" >&2
sieve_faultinj_test
faultinj_rc=$?
if [ "$faultinj_rc" -gt 1 ]; then
	printf 'KTAP version 1\n1..1\nnot ok 1 sieve_faultinj_test exited with status %d\n' \
		"$faultinj_rc"
fi
# It restores the knobs itself; if it died, nothing may fail by chance.
for faultinj_attr in failslab fail_page_alloc; do
	echo 0 >"/sys/kernel/debug/$faultinj_attr/probability" 2>/dev/null
done
true
