# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "kfunc-bench" (only in `make bench-kfunc`'s VM): ns per packet
# of XDP programs asking sieve.ko's filters through kfuncs, against the
# kernel's bloom-filter and hash maps, and the time from a delete to the
# first packet passed (sieve_kfunc_test -b); block and unblock through the
# loader, per backend (sieve_loader_test -b). The tables go to
# $SIEVE_OUT/kfunc-bench.txt.

if sieve_kfunc_test -b "$SIEVE_OUT/kfunc-bench.txt" &&
	sieve_loader_test -b "$SIEVE_OUT/kfunc-bench.txt"; then
	printf 'KTAP version 1\n1..1\nok 1 kfunc-bench: measured\n'
else
	printf 'KTAP version 1\n1..1\nnot ok 1 kfunc-bench: sieve_kfunc_test -b or sieve_loader_test -b failed\n'
fi
true
