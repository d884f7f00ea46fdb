# SPDX-License-Identifier: GPL-2.0
#
# The VM suite (included by the top Makefile).
#
# `make test-vm` builds sieve.ko and sieve_test.ko for Debian's kernel
# whose headers are the newest /usr/src/linux-headers-*-$(DEB_ARCH) (amd64
# on x86-64; whatever KDIR the host `make` builds for), boots that kernel's image (fetched with
# apt-get download, cached in build/vm/kernel/) under qemu in software
# emulation, runs the in-VM suites and the host-side checks, and fails on
# any failed test, kernel oops/BUG/WARNING/lockup/hung task, or timeout.
# `make vm-shell` boots the same VM to an interactive shell.
#
# Variables: VM_TIMEOUT (seconds, default 180), VM_KDIR (headers tree),
# VM_ARCH (run.sh --arch: x86 or arm64), VM_BUSYBOX (a static busybox of
# the VM's machine, default the host's),
# VM_BUILD (where the modules, the initramfs and the run go; default
# build/vm). tests/debug/debug.mk sets VM_KDIR and VM_BUILD on a sub-make's
# command line to build and run the same VM on its debug kernel.
# Other suites extend the VM through these lists (use +=):
#   VM_KBUILD_DIRS  source folders the module build needs (copied to $(VM_BUILD)/src)
#   VM_KBUILD_EXTRA folders among those whose Kbuild the top Kbuild does not
#                   name: built as more obj-m folders (e.g. a KUnit module
#                   that only the debug kernel can load)
#   VM_MODULES      modules, relative to $(VM_SRC), put in the VM's /lib/sieve
#   VM_SCRIPTS      suite scripts run in the VM, in list order (see init.sh)
#   VM_PROGS        statically linked programs (targets of your own rules)
#                   put in the VM's /tests/bin
#   VM_CHECKS       host programs run as `PROG build/vm/run/files` after the
#                   VM stops; they print KTAP (e.g. the parity check)
# For example, a suite of ioctl tests would add, in its own .mk:
#   VM_PROGS += $(BUILD)/ioctl_test     (its rule links it with -static)
#   VM_SCRIPTS += tests/ioctl/vm.sh     (runs ioctl_test, prints KTAP)

VM_KDIR ?= $(DEBIAN_KDIR)
VM_ABI = $(patsubst linux-headers-%,%,$(notdir $(VM_KDIR)))
VM_BUILD := $(BUILD)/vm
VM_SRC := $(VM_BUILD)/src
VM_INITRD := $(VM_BUILD)/initramfs.cpio.gz
VM_TIMEOUT ?= 180
VM_ARCH ?=
VM_BUSYBOX ?=

VM_KBUILD_DIRS += kmod include tests/vm tests/cases
VM_KBUILD_EXTRA +=
VM_MODULES += kmod/sieve.ko tests/vm/sieve_test.ko kmod/example/sieve_dedup.ko
VM_SCRIPTS += tests/vm/core.sh
VM_PROGS +=
VM_CHECKS += $(VM_BUILD)/parity

VM_VERBOSE = $(if $(filter 1,$(V)),--verbose)
# T=NAME (the top Makefile): only the VM's suites whose name holds NAME
# (core, device, library, kfunc, ...: VM_SCRIPTS' names) and the test
# programs so named (sieve_fuzz_test, ...: those a suite runs with
# ktap_run), by init.sh's sieve.only=; the host checks judge the core
# suite's files, so they run when it does.
VM_ONLY = $(if $(T),--append sieve.only=$(T))
vm_checks = $(if $(T),$(if $(findstring $(T),core),$(VM_CHECKS)),$(VM_CHECKS))

.PHONY: test-vm vm-kernel vm-modules vm-initrd vm-shell demo-vm

# Prerequisites written $$(LIST) are expanded late (.SECONDEXPANSION in the
# top Makefile), so lists extended by .mk files included after this one count.

# The VM's modules are built from a copy of the sources in $(VM_SRC), so
# the host's own `make module` (for KDIR, maybe another kernel) and this
# build never share objects. The modules get BTF (and sieve.ko its
# kfuncs) from the objtree kmod/btf/objtree.sh prepares, as the host's
# `make module` does (the top Makefile's kbuild_tree). Copies keep their
# times, so Kbuild only
# rebuilds what changed; sources deleted from the tree disappear from the
# copy, since every source file is removed before copying. sieve.ko is a
# test build: it counts its whole-table reads (kmod/Kbuild).
vm-modules:
	$(call msg,KBUILD,VM modules for $(VM_ABI))
	$(Q)test -d "$(VM_KDIR)" || { echo "no Debian linux-headers-*-$(DEB_ARCH): run 'make deps'" >&2; exit 2; }
	$(Q)mkdir -p $(VM_SRC) && find $(VM_SRC) -type f \( -name '*.[chS]' -o -name Kbuild \
		-o -name Makefile -o -name cores.mk \) ! -name '*.mod.c' -delete
	$(Q)find -L Kbuild $(VM_KBUILD_DIRS) -type f \( -name '*.[chS]' -o -name Kbuild \
		-o -name Makefile -o -name cores.mk \) ! -name '*.mod.c' -print0 | cpio -pdmL0 --quiet $(VM_SRC)
	$(Q)$(call kbuild_tree,$(VM_KDIR)); $(MAKE) -C $$kdir M=$(VM_SRC) $(KBUILD_ARCH_FLAGS) \
		$(if $(filter 1,$(V)),V=1) \
		SIEVE_KBUILD_EXTRA="$(addsuffix /,$(VM_KBUILD_EXTRA))" SIEVE_COUNT_SCANS=y \
		$$nobtf modules \
		>$(if $(filter 1,$(V)),/dev/stderr,/dev/null)

$(VM_BUILD)/parity: tests/vm/parity.c tests/vm/parity.h $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -o $@ tests/vm/parity.c \
		$(BUILD)/libsieve.a

# The script `make demo` runs in the VM (as /demo.sh) with the CLI.
VM_DEMO := userspace/cli/demo-device.sh

# Modules of the booted kernel's own tree that suites load (veth: the kfunc
# suite's traffic between namespaces), put in the VM's /lib/sieve when that
# tree has them (Debian's image does; the debug kernel has no modules tree).
VM_KERNEL_MODULES := drivers/net/veth.ko
vm_kernel_modules = $(wildcard $(addprefix $(VM_BUILD)/kernel/$(VM_ABI)/lib/modules/$(VM_ABI)/kernel/,\
	$(VM_KERNEL_MODULES)))

# SRC=DEST entries of the initramfs; scripts are numbered in list order.
vm_initrd_entries = $(foreach m,$(VM_MODULES),$(VM_SRC)/$(m)=/lib/sieve/$(notdir $(m))) \
	$(foreach m,$(vm_kernel_modules),$(m)=/lib/sieve/$(notdir $(m))) \
	$(foreach p,$(VM_PROGS),$(p)=/tests/bin/$(notdir $(p))) $(VM_DEMO)=/demo.sh

# After vm-kernel: its tree holds VM_KERNEL_MODULES (not the debug kernel's run).
vm-initrd: vm-modules $(if $(filter 1,$(SIEVE_DEBUG_VM)),,vm-kernel) $$(VM_PROGS)
	$(call msg,CPIO,$(VM_INITRD))
	$(Q)i=10; set --; for s in $(VM_SCRIPTS); do \
		set -- "$$@" "$$s=/tests/$$i-$${s##*/}"; i=$$((i + 1)); done; \
		$(if $(VM_BUSYBOX),BUSYBOX=$(VM_BUSYBOX)) tests/vm/initramfs.sh $(VM_INITRD) tests/vm/init.sh $(vm_initrd_entries) "$$@"

# Debian's image of that kernel, downloaded once (see kernel.sh).
vm_kernel = tests/vm/kernel.sh $(VM_ABI) $(VM_BUILD)/kernel
vm-kernel:
	$(Q)test -n "$(VM_ABI)" || { echo "no Debian linux-headers-*-$(DEB_ARCH): run 'make deps'" >&2; exit 2; }
	$(Q)$(vm_kernel) >/dev/null

test-vm: vm-kernel vm-initrd $$(VM_CHECKS)
	$(Q)mkdir -p $(RESULTS)
	$(call msg,VM,booting $(VM_ABI) (timeout $(VM_TIMEOUT)s))
	$(Q)tests/vm/run.sh --kernel "$$($(vm_kernel))" --initrd $(VM_INITRD) \
		--out $(VM_BUILD)/run --timeout $(VM_TIMEOUT) $(addprefix --check ,$(vm_checks)) \
		--results $(RESULTS)/vm $(VM_VERBOSE) $(VM_ONLY) $(if $(VM_ARCH),--arch $(VM_ARCH))

# `make demo`'s part in the VM: the CLI driving /dev/sieve.
demo-vm: vm-kernel vm-initrd
	$(Q)tests/vm/run.sh --kernel "$$($(vm_kernel))" --initrd $(VM_INITRD) \
		--out $(VM_BUILD)/demo --timeout $(VM_TIMEOUT) --demo

vm-shell: vm-kernel vm-initrd
	$(Q)tests/vm/run.sh --kernel "$$($(vm_kernel))" --initrd $(VM_INITRD) \
		--out $(VM_BUILD)/run --shell
