# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "leak_start" (sourced by the VM's /init, before the device
# suites): notes the module's memory in use and the kernel's VmallocUsed,
# Slab, SUnreclaim and Percpu figures in /tmp/sieve-leak.start, for
# leak_end.sh to compare once every suite has destroyed its filters.

leak_n=0
leak_ktap=""

leak_result() {
	leak_n=$((leak_n + 1))
	if [ "$1" = OK ]; then
		leak_ktap="${leak_ktap}ok $leak_n leak_start: $2
"
	else
		leak_ktap="${leak_ktap}not ok $leak_n leak_start: $2
"
	fi
}

# "# filters N memory_bytes M", the last line of /proc/sieve.
leak_module_line() {
	grep '^# filters ' /proc/sieve 2>/dev/null | tail -n 1
}

leak_meminfo() {
	awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo
}

echo 3 >/proc/sys/vm/drop_caches
line=$(leak_module_line)
if [ -n "$line" ]; then
	leak_result OK "/proc/sieve ends with the module's accounting ($line)"
else
	leak_result FAIL "/proc/sieve ends with '# filters N memory_bytes M' (got: $(tail -n 1 /proc/sieve 2>&1))"
fi
# shellcheck disable=SC2086 # split into its fields on purpose
set -- $line
if [ "${3:-x}" = 0 ] && [ "${5:-x}" = 0 ]; then
	leak_result OK "no filter and no memory in use at the start"
else
	leak_result FAIL "no filter and no memory in use at the start (filters ${3:-?}, bytes ${5:-?})"
fi
perm=$(stat -c '%a %u' /dev/sieve 2>&1)
if [ "$perm" = "600 0" ]; then
	leak_result OK "/dev/sieve is 0600 root"
else
	leak_result FAIL "/dev/sieve is 0600 root (got mode, uid: $perm)"
fi
{
	echo "vmalloc $(leak_meminfo VmallocUsed)"
	echo "slab $(leak_meminfo Slab)"
	echo "sunreclaim $(leak_meminfo SUnreclaim)"
	echo "percpu $(leak_meminfo Percpu)"
} >/tmp/sieve-leak.start
echo "sieve-vm: memory at the start: $(tr '\n' ' ' </tmp/sieve-leak.start)(KiB)" >&2

printf 'KTAP version 1\n1..%d\n%s' "$leak_n" "$leak_ktap"
true
