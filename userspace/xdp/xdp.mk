# SPDX-License-Identifier: GPL-2.0
#
# userspace/xdp: the XDP blocklist's loader, linked into the sieve CLI. Its
# libbpf skeleton is generated from the BPF object with `bpftool gen
# skeleton` into $(BUILD)/xdp/, beside the loader's objects.

XDP_DIR := $(BUILD)/xdp
XDP_SKEL := $(XDP_DIR)/sieve_xdp.skel.h
XDP_SRCS := $(wildcard userspace/xdp/*.c)
XDP_OBJS := $(patsubst userspace/xdp/%.c,$(XDP_DIR)/%.o,$(XDP_SRCS))
XDP_CFLAGS := -I$(TOP)/include -I$(TOP)/userspace/xdp -I$(XDP_DIR)

# The filter backend's build of the program (bpf/bpf.mk).
XDP_FILTER_SKEL := $(XDP_DIR)/sieve_xdp_filter.skel.h
# The bloom map's fast fill (userspace/xdp/bloom_fill.c).
XDP_FILL_SKEL := $(XDP_DIR)/bloom_fill.skel.h

$(XDP_SKEL): $(BUILD)/bpf/sieve_xdp.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D) && bpftool gen skeleton $< name sieve_xdp > $@
$(XDP_FILTER_SKEL): $(BPF_FILTER_OBJ)
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D) && bpftool gen skeleton $< name sieve_xdp_filter > $@

$(XDP_FILL_SKEL): $(BUILD)/bpf/bloom_fill.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D) && bpftool gen skeleton $< name bloom_fill > $@

# The skeletons are generated: named here, as -MMD knows them only once built.
$(XDP_DIR)/%.o: userspace/xdp/%.c $(XDP_SKEL) $(XDP_FILTER_SKEL) $(XDP_FILL_SKEL)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(XDP_CFLAGS) -c $< -o $@

# The CLI's `sieve xdp` commands (userspace/cli/xdp*.c) see the loader's headers.
XDP_CLI_OBJS := $(filter $(BUILD)/cli/xdp%,$(CLI_OBJS))
$(XDP_CLI_OBJS): SIEVE_CFLAGS += $(XDP_CFLAGS)

CLI_EXTRA_OBJS += $(XDP_OBJS)
# What every program linking XDP_OBJS needs (the store: SQLite).
XDP_LDLIBS := -lbpf -lelf -lz -lsqlite3
# The CLI is one static-pie executable, glibc, zlib and inih included
# (their archives come with the -dev packages the build depends on;
# debian/rules names their sources in Built-Using): every command is a new
# process, and the dynamic linker's work in it (mapping four libraries,
# 250 symbol lookups, at first call for most) was 0.2 ms of process start
# and 0.1 ms more of a `block`, against an `ipset add` whose whole cost is
# process start (tests/e2e/op_bench.py, make bench-peers). It names no
# NSS function (getpwnam, getaddrinfo): a static glibc would need the
# shared one's modules for those; its dlopen, SQLite's, is cli/nodlopen.c.
# CLI_STATIC_XDP=0: all shared.
CLI_STATIC_XDP ?= 1
XDP_STATIC_LDLIBS := -static-pie -Wl,--wrap=dlopen -lbpf -lelf -lsqlite3 -lz
CLI_LDLIBS += $(if $(filter 1,$(CLI_STATIC_XDP)),$(XDP_STATIC_LDLIBS),$(XDP_LDLIBS))

# `make demo` runs the blocklist live in network namespaces.
DEMOS += userspace/xdp/demo.sh
