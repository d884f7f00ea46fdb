# SPDX-License-Identifier: GPL-2.0
#
# The debug-kernel suite (included by the top Makefile after
# tests/device/device.mk).
#
# `make test-debug` builds, once per machine, a kernel from Debian's
# linux-source-6.1: tinyconfig plus tests/debug/debug.config (KASAN,
# lockdep, atomic-sleep checks, kmemleak, UBSAN, KUnit, fault injection,
# hung-task and soft-lockup detectors, panic on oops; BPF and BTF for the
# modules, for tests/kfunc), cached in
# cache/debug-kernel/ (git-ignored, kept by `make clean`; rebuilt only when
# the fragment's settings or the source package's version change; see
# kernel.sh). A cold build took about 5.5 minutes on 2 cores (1.7 GB)
# before BPF and BTF were added; with them, 50 minutes on a 2-core host
# busy with other builds (2.4 GB).
# Then it builds the VM's modules against that tree, and boots the whole VM
# suite of `make test-vm` on it, plus the debug-only additions below, with
# the ioctl fuzz run at DEBUG_FUZZ calls. Any failed case, any KASAN,
# UBSAN, lockdep or atomic-sleep report, WARN, BUG or oops, and any object
# kmemleak finds unreferenced after the suites fails the run (run.sh,
# init.sh). Results in $(RESULTS)/debug; everything else in build/debug/.
#
# The VM part is vm.mk's own rules, run by a sub-make with VM_KDIR and
# VM_BUILD pointing at the debug tree and build/debug/vm, and
# SIEVE_DEBUG_VM=1, which adds the lists below to vm.mk's.
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
#
# Variables: DEBUG_VM_TIMEOUT (seconds), DEBUG_FUZZ (ioctl fuzz calls).
# `make debug-shell` boots the debug VM to an interactive shell.

DEBUG_VM_SCRIPTS +=
DEBUG_VM_PROGS +=
DEBUG_VM_MODULES +=
DEBUG_VM_KBUILD_DIRS +=

# The KUnit and fault-injection parts extend the lists above.
-include $(sort $(wildcard tests/kunit/*.mk tests/faultinj/*.mk))

DEBUG_CACHE := $(TOP)/cache/debug-kernel
DEBUG_KDIR := $(DEBUG_CACHE)/linux
DEBUG_BUILD := $(BUILD)/debug
DEBUG_CONFIG := tests/debug/debug.config
DEBUG_FUZZ ?= 1000000
# KASAN, lockdep and kmemleak under software emulation: the whole VM run
# (1M fuzz calls included, ~90 s of it) takes ~215 s on a 2-core host;
# four times that, for a busy one.
DEBUG_VM_TIMEOUT ?= 900

SUITES += debug
DEB_PACKAGES += linux-source-6.1 flex bison bc xz-utils pahole

.PHONY: test-debug debug-kernel debug-vm-run

debug-kernel:
	$(Q)tests/debug/kernel.sh $(DEBUG_CONFIG) $(DEBUG_CACHE) >/dev/null

# The sub-make's variables: vm.mk's rules on the debug tree; the modules
# with debug information, so that a report's module address resolves to a
# line (scripts/faddr2line build/debug/vm/src/kmod/sieve.ko FUNC+OFF).
debug_vm_make = $(MAKE) VM_KDIR=$(DEBUG_KDIR) VM_ABI=6.1-debug VM_BUILD=$(DEBUG_BUILD)/vm \
	SIEVE_DEBUG_VM=1 KCFLAGS=-g

test-debug: debug-kernel
	$(Q)$(debug_vm_make) debug-vm-run

ifeq ($(SIEVE_DEBUG_VM),1)
VM_KBUILD_DIRS += $(DEBUG_VM_KBUILD_DIRS)
VM_KBUILD_EXTRA += $(DEBUG_VM_KBUILD_DIRS)
VM_MODULES += $(DEBUG_VM_MODULES)
VM_SCRIPTS += $(DEBUG_VM_SCRIPTS)
VM_PROGS += $(DEBUG_VM_PROGS)
endif

# Only meaningful in the sub-make above.
debug-vm-run: vm-initrd $$(VM_CHECKS)
	$(Q)mkdir -p $(RESULTS)
	$(call msg,VM,booting the debug kernel (timeout $(DEBUG_VM_TIMEOUT)s, $(DEBUG_FUZZ) fuzz calls))
	$(Q)tests/vm/run.sh --kernel $(DEBUG_CACHE)/boot --initrd $(VM_INITRD) \
		--out $(VM_BUILD)/run --timeout $(DEBUG_VM_TIMEOUT) $(addprefix --check ,$(vm_checks)) \
		--append "sieve.fuzz=$(DEBUG_FUZZ)" --results $(RESULTS)/debug $(VM_VERBOSE) $(VM_ONLY)

# `make debug-shell`: the same VM on the debug kernel, to an interactive shell.
.PHONY: debug-shell debug-vm-shell
debug-shell: debug-kernel
	$(Q)$(debug_vm_make) debug-vm-shell
debug-vm-shell: vm-initrd
	$(Q)tests/vm/run.sh --kernel $(DEBUG_CACHE)/boot --initrd $(VM_INITRD) \
		--out $(VM_BUILD)/run --append "sieve.fuzz=$(DEBUG_FUZZ)" --shell
