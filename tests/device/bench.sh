# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "bench" (only in `make bench-vm`'s VM, not in `make test`):
# loads sieve_bench_kmod.ko and runs sieve_bench_dev, which times the
# device and the in-kernel cores and writes the table to $SIEVE_OUT.
# device.mk puts the number of keys (DEV_BENCH_KEYS) in place of @KEYS@.

if insmod "$SIEVE_MODDIR/sieve_bench_kmod.ko"; then
	sieve_bench_dev @KEYS@
	rmmod sieve_bench_kmod
else
	printf 'KTAP version 1\n1..1\nnot ok 1 insmod sieve_bench_kmod.ko\n'
fi
true
