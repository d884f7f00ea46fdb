# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "procfs_bench" (only in `make bench-procfs-vm`'s VM): what
# listing 200 filters costs through /proc/sieve, INFO and the CLI
# (tests/device/procfs_test.c), as KTAP diagnostics.

sieve_procfs_test bench
true
