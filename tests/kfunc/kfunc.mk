# SPDX-License-Identifier: GPL-2.0
#
# tests/kfunc: sieve.ko's kfuncs from XDP programs, in the VM (make
# test-vm, and make test-debug on the KASAN kernel): kfunc_test.bpf.c's
# programs, and the blocklist's kfunc build (blocklist.c), run through
# BPF_PROG_TEST_RUN by the static runner
# sieve_kfunc_test (libbpf, linked statically; the skeleton embeds the
# object), against /dev/sieve filters of each type (see kfunc_test.c).
# The module must have been built with BTF (kmod/btf/objtree.sh): the
# suite fails, not skips, if sieve.ko has no kfuncs.

KFUNC_DIR := $(BUILD)/kfunc
KFUNC_TEST := $(KFUNC_DIR)/sieve_kfunc_test

$(KFUNC_DIR)/kfunc_test.bpf.o: tests/kfunc/kfunc_test.bpf.c
	$(call msg,BPF,$<)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) \
		-I$(TOP)/bpf -I$(TOP)/include/uapi $(BPF_ARCH_INCLUDE) -c $< -o $@

$(KFUNC_DIR)/kfunc_test.skel.h: $(KFUNC_DIR)/kfunc_test.bpf.o
	$(call msg,GEN,$@)
	$(Q)bpftool gen skeleton $< name kfunc_test > $@

KFUNC_SRCS := tests/kfunc/kfunc_test.c tests/kfunc/blocklist.c tests/device/dev.c tests/bpf/pkt.c
$(KFUNC_TEST): $(KFUNC_SRCS) tests/kfunc/kfunc_test.h tests/kfunc/blocklist.h tests/bpf/pkt.h \
		$(DEV_HDRS) $(wildcard include/sieve_xdp*.h) $(KFUNC_DIR)/kfunc_test.skel.h \
		$(BUILD)/xdp/sieve_xdp_filter.skel.h $(BUILD)/xdp/sieve_xdp.skel.h
	$(call msg,LD,$@)
	$(Q)$(CC) $(DEV_CFLAGS) -I$(KFUNC_DIR) -I$(XDP_DIR) -I$(TOP)/include -o $@ $(KFUNC_SRCS) -lbpf -lelf -lz

# The older program the loader's upgrade case replaces: the filter build
# on the linear digest of the sieve before the keyed one (the bench's
# tests/bpf/bench/sieve_xdp_linear.bpf.c, with SIEVE_XDP_KFUNC).
LOADER_OLD_OBJ := $(KFUNC_DIR)/sieve_xdp_old_filter.bpf.o
$(LOADER_OLD_OBJ): tests/bpf/bench/sieve_xdp_linear.bpf.c
	$(call msg,BPF,$< [kfunc])
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) \
		-DSIEVE_XDP_KFUNC -I$(TOP)/bpf -I$(TOP)/include -I$(TOP)/include/uapi \
		$(BPF_ARCH_INCLUDE) -c $< -o $@
$(KFUNC_DIR)/sieve_xdp_old_filter.skel.h: $(LOADER_OLD_OBJ)
	$(call msg,GEN,$@)
	$(Q)bpftool gen skeleton $< name sieve_xdp_old_filter > $@

# The filter backend's loader (userspace/xdp) against the module, linked
# statically like every VM program.
LOADER_TEST := $(KFUNC_DIR)/sieve_loader_test
LOADER_TEST_SRCS := tests/kfunc/loader_test.c tests/device/dev.c tests/bpf/pkt.c
$(LOADER_TEST): $(LOADER_TEST_SRCS) tests/bpf/pkt.h $(DEV_HDRS) $$(XDP_OBJS) $(BUILD)/libsieve.a \
		$(KFUNC_DIR)/sieve_xdp_old_filter.skel.h
	$(call msg,LD,$@)
	$(Q)$(CC) $(DEV_CFLAGS) $(XDP_CFLAGS) -I$(TOP)/userspace/lib -I$(KFUNC_DIR) -o $@ \
		$(LOADER_TEST_SRCS) $(XDP_OBJS) $(BUILD)/libsieve.a -lbpf -lelf -lz -lsqlite3 -lm -ldl

VM_PROGS += $(KFUNC_TEST) $(LOADER_TEST)
VM_SCRIPTS += tests/kfunc/kfunc.sh

# `make bench-kfunc` (not part of `make bench`): the test VM with only
# tests/kfunc/bench.sh; the table in $(KFUNC_DIR)/bench.txt.
.PHONY: bench-kfunc
bench-kfunc:
	$(Q)$(MAKE) test-vm VM_SCRIPTS=tests/kfunc/bench.sh VM_CHECKS= \
		RESULTS=$(KFUNC_DIR)/bench-results >$(KFUNC_DIR)/bench-run.log 2>&1 || \
		{ cat $(KFUNC_DIR)/bench-run.log; exit 1; }
	$(Q)cp $(VM_BUILD)/run/files/kfunc-bench.txt $(KFUNC_DIR)/bench.txt && \
		cat $(KFUNC_DIR)/bench.txt
