# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "device" (sourced by the VM's /init): the raw-ioctl programs of
# tests/device, each printing its own KTAP report (ktap_run: a program that
# dies adds a failing report; make test-vm T=PROGRAM runs one).

ktap_run sieve_abi_test
ktap_run sieve_bad_test
ktap_run sieve_conc_test 10
ktap_run sieve_exchange_test 200
# sieve.fuzz=N on the kernel command line (the debug run) sets the count.
ktap_run sieve_fuzz_test "$(sed -n 's/.*sieve\.fuzz=\([0-9][0-9]*\).*/\1/p' /proc/cmdline | grep . || echo 100000)" 0x5eedf00d
ktap_run sieve_regress_test
ktap_run sieve_procfs_test
ktap_run sieve_readers_test
true
