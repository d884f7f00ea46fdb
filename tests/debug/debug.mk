# SPDX-License-Identifier: GPL-2.0
#
# The debug-kernel suite (included by the top Makefile after
# tests/device/device.mk). Work in progress: the lists below are final.
#
# Debug-only additions to the VM (use +=, paths as in vm.mk's lists):
#   DEBUG_VM_SCRIPTS  suite scripts run in the VM after VM_SCRIPTS
#   DEBUG_VM_PROGS    statically linked programs put in /tests/bin
#   DEBUG_VM_MODULES  modules, relative to the copy of the sources the VM's
#                     modules are built from (as VM_MODULES: e.g.
#                     tests/kunit/sieve_kunit.ko), put in /lib/sieve
#   DEBUG_VM_KBUILD_DIRS  folders holding a Kbuild for those modules (e.g.
#                     tests/kunit): copied with the sources, and built as
#                     extra obj-m folders of the top Kbuild; they are built
#                     against the debug kernel only (KUnit is built in there)

DEBUG_VM_SCRIPTS +=
DEBUG_VM_PROGS +=
DEBUG_VM_MODULES +=
DEBUG_VM_KBUILD_DIRS +=

# The KUnit and fault-injection parts extend the lists above.
-include $(sort $(wildcard tests/kunit/*.mk tests/faultinj/*.mk))
