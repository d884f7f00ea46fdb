# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "kunit" (debug kernel only; sourced by the VM's /init): loads
# sieve_kunit.ko, whose KUnit suites run while it loads, then prints each
# suite's KTAP report from /sys/kernel/debug/kunit/<suite>/results and
# unloads it. The steps around the module are a KTAP report of their own:
# a module that does not load, a suite whose results are missing, a module
# that does not unload or filters or memory it leaves behind in sieve.ko
# are failures, not silence.
#
# KUnit's debugfs report nests the suite one level down (a "1..1" plan
# whose one result is the suite); the runner counts unindented results
# only, so each suite is printed one level up, as a document whose
# results are its cases. A case's parameters stay nested: one case, one
# result. (KUnit 6.1 keeps only the last parameter's lines in debugfs; a
# failing case's diagnostics are all in the kernel log, dmesg.txt.)

kunit_dbg=/sys/kernel/debug/kunit
kunit_params=/sys/module/sieve/parameters
kunit_suites="sieve_filter sieve_registry"

# A suite's results file, one level up; comments stay.
kunit_flatten() {
	awk '/^    / { print substr($0, 5); next } /^#/ { print }' "$1"
}

kunit_mem_before=$(cat "$kunit_params/memory_in_use")
kunit_filters_before=$(cat "$kunit_params/filters_in_use")

if insmod "$SIEVE_MODDIR/sieve_kunit.ko"; then
	ktap_result OK "insmod sieve_kunit.ko (runs the KUnit suites)"
else
	ktap_result FAIL "insmod sieve_kunit.ko (runs the KUnit suites)"
fi

# Kept in /tmp: the results go away with the module.
for kunit_suite in $kunit_suites; do
	kunit_file=$kunit_dbg/$kunit_suite/results
	# debugfs files say they are empty: only the copy's size tells.
	if cat "$kunit_file" >"/tmp/kunit-$kunit_suite.ktap" 2>/dev/null &&
		[ -s "/tmp/kunit-$kunit_suite.ktap" ]; then
		ktap_result OK "KTAP results of KUnit suite $kunit_suite"
	else
		echo "sieve-kunit: no $kunit_file: did the module load, with CONFIG_KUNIT_DEBUGFS?" >&2
		ktap_result FAIL "KTAP results of KUnit suite $kunit_suite (missing $kunit_file)"
	fi
done

if grep -q '^sieve_kunit ' /proc/modules; then
	if rmmod sieve_kunit; then
		ktap_result OK "rmmod sieve_kunit"
	else
		ktap_result FAIL "rmmod sieve_kunit"
	fi
fi

# The suites' exit destroys what a case left: nothing may stay behind.
kunit_mem_after=$(cat "$kunit_params/memory_in_use")
kunit_filters_after=$(cat "$kunit_params/filters_in_use")
if [ "$kunit_mem_after" = "$kunit_mem_before" ] &&
	[ "$kunit_filters_after" = "$kunit_filters_before" ]; then
	ktap_result OK "sieve's memory and filters in use back to where they were"
else
	ktap_result FAIL "sieve's memory and filters in use back to where they were\
 (memory $kunit_mem_before -> $kunit_mem_after,\
 filters $kunit_filters_before -> $kunit_filters_after)"
fi

ktap_print
for kunit_suite in $kunit_suites; do
	[ -s "/tmp/kunit-$kunit_suite.ktap" ] && kunit_flatten "/tmp/kunit-$kunit_suite.ktap"
done
true
