# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "leak_start" (sourced by the VM's /init, before the device
# suites): notes the module's memory in use and the kernel's VmallocUsed,
# Slab, SUnreclaim and Percpu figures in /tmp/sieve-leak.start, for
# leak_end.sh to compare once every suite has destroyed its filters.

# shellcheck disable=SC2034 # read by ktap_result (tests/vm/init.sh)
ktap_prefix="leak_start: "

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
	ktap_result OK "/proc/sieve ends with the module's accounting ($line)"
else
	ktap_result FAIL "/proc/sieve ends with '# filters N memory_bytes M' (got: $(tail -n 1 /proc/sieve 2>&1))"
fi
# shellcheck disable=SC2086 # split into its fields on purpose
set -- $line
if [ "${3:-x}" = 0 ] && [ "${5:-x}" = 0 ]; then
	ktap_result OK "no filter and no memory in use at the start"
else
	ktap_result FAIL "no filter and no memory in use at the start (filters ${3:-?}, bytes ${5:-?})"
fi
perm=$(stat -c '%a %u' /dev/sieve 2>&1)
if [ "$perm" = "600 0" ]; then
	ktap_result OK "/dev/sieve is 0600 root"
else
	ktap_result FAIL "/dev/sieve is 0600 root (got mode, uid: $perm)"
fi
{
	echo "vmalloc $(leak_meminfo VmallocUsed)"
	echo "slab $(leak_meminfo Slab)"
	echo "sunreclaim $(leak_meminfo SUnreclaim)"
	echo "percpu $(leak_meminfo Percpu)"
} >/tmp/sieve-leak.start
echo "sieve-vm: memory at the start: $(tr '\n' ' ' </tmp/sieve-leak.start)(KiB)" >&2

ktap_print
true
