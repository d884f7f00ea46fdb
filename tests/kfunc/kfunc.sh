# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "kfunc" (sourced by the VM's /init): XDP programs calling
# sieve.ko's kfuncs (tests/kfunc/kfunc_test.c). sieve.ko must have BTF,
# which is where its kfuncs live: without it the suite fails, it does not
# skip.

if [ ! -e /sys/kernel/btf/sieve ]; then
	printf 'KTAP version 1\n1..1\nnot ok 1 kfunc: sieve.ko has BTF (/sys/kernel/btf/sieve); it was built without kfuncs\n'
else
	ktap_run sieve_kfunc_test
	# Real traffic between namespaces needs veth: a module in Debian's
	# kernel (the loader test says loudly when it is missing).
	[ -e /lib/sieve/veth.ko ] && insmod /lib/sieve/veth.ko
	ktap_run sieve_loader_test
fi
true
