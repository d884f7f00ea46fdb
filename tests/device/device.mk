# SPDX-License-Identifier: GPL-2.0
#
# tests/device: /dev/sieve in the VM (included by the top Makefile after
# tests/vm/vm.mk, whose lists it extends).
#
# `make test-vm` runs, after the core suite, in this order:
#   leak_start.sh  notes the module's memory, VmallocUsed and Slab
#   device.sh      the raw-ioctl programs: ABI, bad input, concurrency,
#                  exchange under readers, fuzz, regressions, /proc/sieve,
#                  what read-only files can cost writers (readers_test)
#   library.sh     the same commands through libsieve and through the CLI
#   agent_filters.sh  the agent's persistent filters (userspace/agent/filters.c)
#                  saved, sieve.ko reloaded, restored with the same answers
#   dedup.sh       the example module sieve_dedup.ko on a device filter
#   leak_end.sh    everything destroyed: memory back where it started;
#                  module unload destroys what is left
# Each program is statically linked and prints one KTAP report.
#
# `make bench-vm` (part of `make bench`, not of `make test`) boots the VM
# with only the benchmark: per-key cost of add and query through single
# ioctls and batches of 16, 256 and 4096 keys, against the cores called
# directly in the kernel by sieve_bench_kmod.ko. The table goes to
# $(BUILD)/device/bench.txt. DEV_BENCH_KEYS sets the keys per measurement.

DEV_DIR := $(BUILD)/device
DEV_CFLAGS = $(CFLAGS) $(SIEVE_CFLAGS) -static -pthread
DEV_HDRS := tests/device/dev.h $(CORE_HDRS)
DEV_TESTS := abi bad conc exchange fuzz leak regress procfs readers
DEV_PROGS := $(patsubst %,$(DEV_DIR)/sieve_%_test,$(DEV_TESTS))
DEV_BENCH_KEYS ?= 200000

# These suites take about 50 s in software emulation (the whole VM run
# 60-70 s on a 2-core host, more when it is busy): vm.mk's default 180 s
# leaves too little slack. A value from the command line or the
# environment still wins.
ifeq ($(origin VM_TIMEOUT),file)
VM_TIMEOUT := 300
endif

VM_PROGS += $(DEV_PROGS) $(DEV_DIR)/sieve_lib_test $(DEV_DIR)/sieve_layers_test $(CLI_STATIC)
VM_PROGS += $(DEV_DIR)/sieve_agent_filters_test
VM_SCRIPTS += tests/device/leak_start.sh tests/device/device.sh tests/device/library.sh
VM_SCRIPTS += tests/device/agent_filters.sh tests/device/dedup.sh tests/device/leak_end.sh

$(DEV_DIR)/sieve_%_test: tests/device/%_test.c tests/device/dev.c $(DEV_HDRS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(DEV_CFLAGS) -o $@ $< tests/device/dev.c

# libsieve's own test links the static library.
$(DEV_DIR)/sieve_lib_test: tests/device/lib_test.c tests/device/dev.c $(DEV_HDRS) \
		userspace/lib/libsieve.h $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(DEV_CFLAGS) -o $@ $< tests/device/dev.c \
		$(BUILD)/libsieve.a -lm

# The layer policy on both sides: the device and libsieve's local filters.
$(DEV_DIR)/sieve_layers_test: tests/device/layers_test.c tests/device/dev.c $(DEV_HDRS) \
		tests/cases/layer_seqs.h userspace/lib/libsieve.h $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(DEV_CFLAGS) -o $@ $< tests/device/dev.c \
		$(BUILD)/libsieve.a -lm

# The agent's persistent filters: filters.c, which needs only libsieve and
# libc, linked in as it is (the agent's own build is userspace/agent's).
$(DEV_DIR)/sieve_agent_filters_test: tests/device/agent_filters_test.c tests/device/dev.c \
		userspace/agent/filters.c userspace/agent/agent.h userspace/conf/conf.h userspace/sources/*.h \
		userspace/xdp/store.h $(DEV_HDRS) userspace/lib/libsieve.h $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(DEV_CFLAGS) -Iuserspace/agent -Iuserspace/conf -Iuserspace/sources -Iuserspace/xdp \
		-Iinclude -o $@ $< \
		tests/device/dev.c \
		userspace/agent/filters.c $(BUILD)/libsieve.a -lm

# ---- make bench-procfs-vm -----------------------------------------------------

# The test VM with one suite and no host check: the time /proc/sieve, INFO
# and `sieve filter list` take over 200 filters (sieve_procfs_test bench),
# in the diagnostics. Not part of `make bench`: a minute or two.
.PHONY: bench-procfs-vm
bench-procfs-vm:
	$(Q)$(MAKE) test-vm VM_SCRIPTS=tests/device/procfs_bench.sh VM_CHECKS= \
		RESULTS=$(DEV_DIR)/procfs-bench-results

# ---- make bench-vm ----------------------------------------------------------

# The bench module is built from a copy of tests/device's Kbuild and source
# in $(DEV_DIR)/kmod, against the VM's headers, the very sources sieve.ko
# was built from ($(VM_SRC)) and its exports.
DEV_KMOD_DIR := $(DEV_DIR)/kmod
DEV_BENCH_INITRD := $(DEV_DIR)/bench-initramfs.cpio.gz
BENCHES += bench-vm
.PHONY: bench-vm dev-bench-kmod

$(DEV_DIR)/sieve_bench_dev: tests/device/bench_dev.c tests/device/dev.c $(DEV_HDRS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(DEV_CFLAGS) -O2 -o $@ $< tests/device/dev.c

dev-bench-kmod: vm-modules
	$(call msg,KBUILD,$(DEV_KMOD_DIR)/sieve_bench_kmod.ko)
	$(Q)mkdir -p $(DEV_KMOD_DIR) && cp -p tests/device/Kbuild tests/device/sieve_bench_kmod.c \
		$(DEV_KMOD_DIR)/
	$(Q)$(MAKE) -C $(VM_KDIR) M=$(DEV_KMOD_DIR) SIEVE_TOP=$(VM_SRC) \
		KBUILD_EXTRA_SYMBOLS=$(VM_SRC)/Module.symvers CONFIG_DEBUG_INFO_BTF_MODULES= \
		$(if $(filter 1,$(V)),V=1) modules >$(if $(filter 1,$(V)),/dev/stderr,/dev/null)

# Its own initramfs: sieve.ko, the bench module and program, one script.
bench-vm: vm-kernel dev-bench-kmod $(DEV_DIR)/sieve_bench_dev
	$(call msg,CPIO,$(DEV_BENCH_INITRD))
	$(Q)sed 's/@KEYS@/$(DEV_BENCH_KEYS)/' tests/device/bench.sh >$(DEV_DIR)/bench.sh
	$(Q)tests/vm/initramfs.sh $(DEV_BENCH_INITRD) tests/vm/init.sh \
		$(VM_SRC)/kmod/sieve.ko=/lib/sieve/sieve.ko \
		$(DEV_KMOD_DIR)/sieve_bench_kmod.ko=/lib/sieve/sieve_bench_kmod.ko \
		$(DEV_DIR)/sieve_bench_dev=/tests/bin/sieve_bench_dev \
		$(DEV_DIR)/bench.sh=/tests/10-bench.sh
	$(call msg,VM,bench: $(DEV_BENCH_KEYS) keys per measurement)
	$(Q)tests/vm/run.sh --kernel "$$($(vm_kernel))" --initrd $(DEV_BENCH_INITRD) \
		--out $(DEV_DIR)/bench-run --timeout 900 --results $(DEV_DIR)/bench-results \
		>$(DEV_DIR)/bench-run.log 2>&1 || { cat $(DEV_DIR)/bench-run.log; exit 1; }
	$(Q)cp $(DEV_DIR)/bench-run/files/bench.txt $(DEV_DIR)/bench.txt && cat $(DEV_DIR)/bench.txt
