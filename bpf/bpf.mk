# SPDX-License-Identifier: GPL-2.0
#
# bpf/: the XDP blocklist (sieve_xdp.bpf.c) and the bloom map's fast fill
# (bloom_fill.bpf.c), built with clang -target bpf into $(BUILD)/bpf/.
# They include the headers they share with userspace, include/sieve_xdp*.h.
# The benchmark's programs are tests/bpf/bench's, built by make bench only.

# <asm/types.h> lives under the multiarch include directory.
BPF_ARCH_INCLUDE := $(addprefix -I,$(wildcard /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)))
# The target's architecture (KERNEL_ARCH, top Makefile) for bpf_tracing.h's
# register names; -MMD -MP: header dependencies from the compiler.
BPF_CFLAGS := -O2 -g -Wall -target bpf -mcpu=v3 -D__TARGET_ARCH_$(KERNEL_ARCH) -MMD -MP
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
# The blocklist asking /dev/sieve filters through sieve.ko's kfuncs: the same
# source with SIEVE_XDP_KFUNC, an object of its own (it loads only where
# sieve.ko is).
BPF_FILTER_OBJ := $(BUILD)/bpf/sieve_xdp_filter.bpf.o
BPF_OBJS += $(BPF_FILTER_OBJ)
bpf: $(BPF_OBJS)
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$<)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) \
		-I$(TOP)/include -I$(TOP)/include/uapi $(BPF_ARCH_INCLUDE) -c $< -o $@
$(BPF_FILTER_OBJ): bpf/sieve_xdp.bpf.c
	$(call msg,BPF,$< [kfunc])
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) \
		-DSIEVE_XDP_KFUNC -I$(TOP)/include -I$(TOP)/include/uapi $(BPF_ARCH_INCLUDE) \
		-c $< -o $@

# clang, llvm and libbpf-dev are in the top Makefile's list.
DEB_PACKAGES += bpftool
