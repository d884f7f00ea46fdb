# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suites (included by tests/debug/debug.mk): sieve_kunit.ko,
# built against the debug kernel only (KUnit is built into it, not into
# Debian's), and the VM script that loads it and reports its KTAP.
# They run in `make test-debug`.

DEBUG_VM_KBUILD_DIRS += tests/kunit
DEBUG_VM_MODULES += tests/kunit/sieve_kunit.ko
DEBUG_VM_SCRIPTS += tests/kunit/kunit.sh
