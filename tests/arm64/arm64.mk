# SPDX-License-Identifier: GPL-2.0
#
# arm64 (aarch64) from an x86-64 Debian host: the whole build cross-built
# with Debian's gcc-aarch64-linux-gnu, its cases run under emulation.
#
#   make build-arm64     userspace (libsieve, the CLI, sieve-agent, the
#                        static CLI of the VM), the BPF objects (for
#                        __TARGET_ARCH_arm64) and the VM's modules (sieve.ko,
#                        sieve_test.ko) against Debian's arm64 headers, in
#                        build/arm64/ (a sub-make with CROSS_COMPILE, see the
#                        top Makefile)
#   make test-arm64-unit the cross build, then the unit runner built for
#                        arm64 (with UBSan) under qemu-user: the cases the
#                        kernel runs too (tests/cases), the hash, libsieve's
#                        local filters, the layers and the sizing
#                        (ARM64_UNIT_FILTER; the rest is x86-64's unit
#                        suite's: the store's cases spin for minutes under
#                        qemu-user). Part of `make test` (~2 min).
#   make test-arm64      Debian's arm64 kernel under qemu-system-aarch64
#                        (software emulation; ~20 s of boot and suites, part
#                        of `make test`): the VM of vm.mk, with its
#                        core suite (sieve_test.ko's cases in the kernel,
#                        the parity of its hashes and tables with x86-64
#                        userspace's) and the CLI on /dev/sieve
#                        (tests/arm64/cli.sh).
#   make test-arm64-dkms DKMS builds sieve.ko for that kernel from the
#                        sieve-dkms tree (dkms.conf claims aarch64), and the
#                        arm64 VM loads it for the CLI smoke of test-dkms.
#                        Part of `make test` (~1 min).
#
# The arm64 headers (same ABI as the host's Debian headers) and a static
# arm64 busybox are fetched, never installed: tests/arm64/fetch.sh. The
# kernel image is fetched as the x86 one is (tests/vm/kernel.sh). Debian's
# arm64 image holds no ELF vmlinux for module BTF, so the arm64 sieve.ko
# has no kfuncs (kmod/btf/objtree.sh says so once per build).
#
# Defined on an x86-64 host building for itself only: the sub-makes build
# for arm64 and must not recurse.
ifeq ($(shell uname -m)-$(KERNEL_ARCH),x86_64-x86)

ARM64_CROSS := aarch64-linux-gnu-
ARM64_BUILD := $(BUILD)/arm64
ARM64_CACHE := $(TOP)/cache/arm64
# The host's Debian headers' ABI, of the arm64 flavour (they share -common).
ARM64_ABI = $(patsubst linux-headers-%-$(DEB_ARCH),%-arm64,$(notdir $(DEBIAN_KDIR)))
arm64_headers = tests/arm64/fetch.sh headers $(ARM64_ABI) $(ARM64_CACHE)
# The sub-make: everything for arm64, in build/arm64/; the VM's modules
# against the arm64 headers (KDIR and VM_KDIR: a shell variable $kdir the
# recipe sets from $(arm64_headers)).
ARM64_MAKE = $(MAKE) CROSS_COMPILE=$(ARM64_CROSS) BUILD=$(ARM64_BUILD) \
	RESULTS=$(ARM64_BUILD)/test-results KDIR=$$kdir VM_KDIR=$$kdir
# libsieve's device_absent asks a file that is no sieve device an ioctl and
# wants ENOTTY: qemu-user answers ioctls it does not know with ENOSYS.
# With T=NAME (the top Makefile), the cases whose name holds NAME instead.
ARM64_UNIT_FILTER ?= $(if $(T),$(T),sieve_test_ hash libsieve sizing layers estimates) !device_absent
ARM64_QEMU_USER := qemu-aarch64 -L /usr/aarch64-linux-gnu

.PHONY: build-arm64 test-arm64-unit test-arm64 test-arm64-dkms
build-arm64:
	$(call msg,CROSS,arm64 in $(ARM64_BUILD))
	$(Q)kdir=$$($(arm64_headers)) && $(ARM64_MAKE) user bpf vm-modules $(ARM64_BUILD)/static/sieve

# Its result is $(RESULTS)/arm64-unit, like any suite's.
test-arm64-unit: build-arm64
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/arm64-unit
	$(Q)kdir=; status=0; $(ARM64_MAKE) test-unit UNIT_SANITIZE=undefined UNIT_CLI= \
		UNIT_FILTER="$(ARM64_UNIT_FILTER)" UNIT_RUN="$(ARM64_QEMU_USER)" || status=1; \
		cp $(ARM64_BUILD)/test-results/unit $(RESULTS)/arm64-unit 2>/dev/null || \
		echo "0 1" >$(RESULTS)/arm64-unit; exit $$status
SUITES += arm64-unit

# The VM: vm.mk's rules in the sub-make, its lists replaced by the arm64
# smoke's (command-line variables win over the fragments' +=); the parity
# check is the host's own build (x86-64 userspace against the arm64
# kernel's values). Its result is $(RESULTS)/arm64.
ARM64_VM_TIMEOUT ?= 900
ARM64_VM_VARS = VM_ARCH=arm64 VM_BUSYBOX=$$busybox VM_TIMEOUT=$(ARM64_VM_TIMEOUT) \
	VM_KERNEL_MODULES="drivers/virtio/virtio_mmio.ko drivers/char/virtio_console.ko"
arm64_busybox = busybox=$$(tests/arm64/fetch.sh busybox $(ARM64_CACHE))
test-arm64: build-arm64 $(VM_BUILD)/parity
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/arm64
	$(Q)$(arm64_busybox) && kdir=$$($(arm64_headers)) && \
		status=0; $(ARM64_MAKE) test-vm $(ARM64_VM_VARS) \
		VM_SCRIPTS="tests/vm/core.sh tests/arm64/cli.sh" VM_PROGS=$(ARM64_BUILD)/static/sieve \
		VM_CHECKS=$(VM_BUILD)/parity VM_MODULES="kmod/sieve.ko tests/vm/sieve_test.ko" \
		|| status=1; \
		cp $(ARM64_BUILD)/test-results/vm $(RESULTS)/arm64 2>/dev/null || \
		echo "0 1" >$(RESULTS)/arm64; exit $$status
SUITES += arm64

# dist/dkms/dkms.conf's aarch64: DKMS builds sieve.ko from the sieve-dkms
# tree for Debian's arm64 kernel (dkms -a aarch64, cross-compiled), which
# the arm64 VM then loads for the CLI's smoke (tests/dist/dist.mk's
# test-dkms in the sub-make). Its result is $(RESULTS)/arm64-dkms.
test-arm64-dkms: build-arm64
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/arm64-dkms
	$(Q)$(arm64_busybox) && kdir=$$($(arm64_headers)) && \
		status=0; $(ARM64_MAKE) test-dkms $(ARM64_VM_VARS) || status=1; \
		cp $(ARM64_BUILD)/test-results/dkms $(RESULTS)/arm64-dkms 2>/dev/null || \
		echo "0 1" >$(RESULTS)/arm64-dkms; exit $$status
SUITES += arm64-dkms

# The cross compiler and emulators; the arm64 libraries the build links
# (Debian multiarch: dpkg --add-architecture arm64, done by `make deps`).
DEB_FOREIGN_ARCHS += arm64
DEB_PACKAGES += gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user qemu-system-arm \
	$(addsuffix :arm64,libc6-dev libbpf-dev libelf-dev zlib1g-dev libsqlite3-dev \
	libcmocka-dev libinih-dev libsystemd-dev libmicrohttpd-dev libhiredis-dev libcurl4-openssl-dev \
	libjson-c-dev libpcap-dev)

endif
