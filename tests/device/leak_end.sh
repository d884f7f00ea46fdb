# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "leak_end" (sourced by the VM's /init, after the device suites):
#  1. every suite destroyed what it made: /proc/sieve lists no filter and
#     the module's memory in use is 0, the readers' (reader_memory_in_use)
#     too;
#  2. sieve_leak_test churn: every kind of allocation, 20 times over, then
#     5000 tiny filters; the module's count back to 0;
#  3. the kernel's own figures back near where leak_start.sh found them:
#     VmallocUsed within 1 MiB (a leaked 6 MB table would show six times
#     over; the slack is thread stacks, which are vmalloc'd and cached,
#     and per-CPU chunks; measured: 0-32 KiB), SUnreclaim within 1 MiB
#     (5000 tiny filters leaking 256 bytes each would be 1.2 MiB; the slack
#     is kernel objects of the many processes and files the suites opened,
#     which slab caches keep; measured: 250-400 KiB), Percpu within 256 KiB
#     (5000 filters' per-CPU counters, 32 bytes x 2 CPUs each, would be
#     312 KiB; measured: 0);
#     Slab (reclaimable included) is reported, not judged: dentries and
#     inodes come and go with the shell;
#  4. the module unload destroys filters left behind: rmmod succeeds with
#     filters in the registry, VmallocUsed drops back, and a fresh insmod
#     starts empty (the VM's /init unloads it once more at the end).

# shellcheck disable=SC2034 # read by ktap_result (tests/vm/init.sh)
ktap_prefix="leak_end: "

le_meminfo() {
	awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo
}

le_start() {
	awk -v k="$1" '$1 == k { print $2 }' /tmp/sieve-leak.start
}

# "N M": filters and bytes of the module, once RCU has freed what it will.
le_module() {
	local i=0 line
	while :; do
		line=$(grep '^# filters ' /proc/sieve 2>/dev/null | tail -n 1)
		# shellcheck disable=SC2086 # split into its fields on purpose
		set -- $line
		if [ "${5:-x}" = 0 ] || [ $i -ge 50 ]; then
			echo "${3:-?} ${5:-?}"
			return
		fi
		i=$((i + 1))
		sleep 0.1
	done
}

# Judges one meminfo figure against the start: le_judge NAME KEY TOL_KIB.
le_judge() {
	local name=$1 start now delta
	start=$(le_start "$2")
	now=$(le_meminfo "$name")
	delta=$((now - start))
	if [ "$delta" -le "$3" ]; then
		ktap_result OK "$name back to its start: $start -> $now KiB (delta $delta, tolerance $3)"
	else
		ktap_result FAIL "$name back to its start: $start -> $now KiB (delta $delta, tolerance $3)"
	fi
}

# shellcheck disable=SC2046 # split into its fields on purpose
set -- $(le_module)
if [ "$1" = 0 ] && [ "$2" = 0 ]; then
	ktap_result OK "the suites left no filter and no memory (filters $1, bytes $2)"
else
	ktap_result FAIL "the suites left no filter and no memory (filters $1, bytes $2; $(grep -v '^#' /proc/sieve | head -n 5 | tr '\n' ';'))"
fi

rd=$(cat /sys/module/sieve/parameters/reader_memory_in_use 2>&1)
if [ "$rd" = 0 ]; then
	ktap_result OK "the suites left no readers' memory (bytes $rd)"
else
	ktap_result FAIL "the suites left no readers' memory (reader_memory_in_use: $rd)"
fi

# Its own KTAP report: the figures are judged below, after it.
sieve_leak_test churn 20 || [ $? = 1 ] ||
	printf 'KTAP version 1\n1..1\nnot ok 1 sieve_leak_test churn died\n'

sync
echo 3 >/proc/sys/vm/drop_caches
sleep 1
le_judge VmallocUsed vmalloc 1024
le_judge SUnreclaim sunreclaim 1024
le_judge Percpu percpu 256
echo "sieve-vm: Slab $(le_start slab) -> $(le_meminfo Slab) KiB (reported, not judged)" >&2
echo "# leak_end: Slab $(le_start slab) -> $(le_meminfo Slab) KiB (reclaimable included: not judged)"

# The unload destroys what is left.
before=$(le_meminfo VmallocUsed)
if sieve_leak_test leave; then
	ktap_result OK "filters left behind for the unload (a 6 MB one among them)"
else
	ktap_result FAIL "filters left behind for the unload"
fi
loaded=$(le_meminfo VmallocUsed)
if rmmod sieve; then
	ktap_result OK "rmmod sieve with filters in the registry"
else
	ktap_result FAIL "rmmod sieve with filters in the registry ($(cat /sys/module/sieve/refcnt 2>&1) users)"
fi
sleep 1
after=$(le_meminfo VmallocUsed)
if [ $((after - before)) -le 1024 ]; then
	ktap_result OK "the unload freed them: VmallocUsed $before -> $loaded -> $after KiB"
else
	ktap_result FAIL "the unload freed them: VmallocUsed $before -> $loaded -> $after KiB"
fi
if insmod "$SIEVE_MODDIR/sieve.ko"; then
	# shellcheck disable=SC2046 # split into its fields on purpose
	set -- $(le_module)
	if [ "$1" = 0 ] && [ "$2" = 0 ]; then
		ktap_result OK "insmod again starts empty (filters $1, bytes $2)"
	else
		ktap_result FAIL "insmod again starts empty (filters $1, bytes $2)"
	fi
else
	ktap_result FAIL "insmod sieve.ko again"
fi

ktap_print
true
