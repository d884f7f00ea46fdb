# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "faultinj" (debug kernel; sourced by the VM's /init): the
# fail-nth sweep of tests/faultinj/faultinj_test.c, one KTAP report
# (ktap_run: a program that dies adds a failing report of its own).

ktap_run sieve_faultinj_test
# It restores the knobs itself; if it died, nothing may fail by chance.
for faultinj_attr in failslab fail_page_alloc; do
	echo 0 >"/sys/kernel/debug/$faultinj_attr/probability" 2>/dev/null
done
true
