# SPDX-License-Identifier: GPL-2.0
#
# sieve: `make` builds the module, libsieve, the CLI and the BPF objects;
# `make test` runs every suite; `make demo`; `make bench`. Quiet unless V=1.

.DELETE_ON_ERROR:
.DEFAULT_GOAL := all
# Prerequisites may name lists that fragments included later extend ($$(X)).
.SECONDEXPANSION:

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

TOP := $(CURDIR)
BUILD := $(TOP)/build
RESULTS := $(BUILD)/test-results

# The kernel to build the module for: the running kernel's headers where
# they exist, else the newest Debian linux-headers-*-amd64 tree.
DEBIAN_KDIR = $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
	grep -E -- '-[0-9]+-amd64$$' | sort -V | tail -n 1)
KDIR ?= $(or $(wildcard /lib/modules/$(shell uname -r)/build),$(DEBIAN_KDIR))

# Headers packages ship no vmlinux to base module BTF on: skip it quietly.
NO_MODULE_BTF = $(if $(wildcard $(KDIR)/vmlinux),,CONFIG_DEBUG_INFO_BTF_MODULES=)

CC ?= cc
CLANG ?= clang
CFLAGS ?= -O2 -g
SIEVE_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC \
	-I$(TOP)/include/uapi -I$(TOP)/userspace/lib -I$(TOP)/kmod

# The filter cores: compiled unchanged into sieve.ko and into userspace.
CORE_SRCS := kmod/filter.c kmod/bloom.c kmod/blocked_bloom.c kmod/cuckoo.c kmod/sizing.c \
	kmod/snapshot.c
CORE_HDRS := kmod/filter.h kmod/snapshot.h kmod/sieve_env.h kmod/fixedpoint.h userspace/lib/jhash.h \
	include/uapi/linux/sieve.h
CORE_OBJS := $(patsubst kmod/%.c,$(BUILD)/core/%.o,$(CORE_SRCS))

LIB_SRCS := $(wildcard userspace/lib/*.c)
LIB_OBJS := $(patsubst userspace/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
CLI_SRCS := $(wildcard userspace/cli/*.c)
CLI_OBJS := $(patsubst userspace/cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))

.PHONY: all module user bpf deps test demo bench clean
all: module user bpf

module:
	$(call msg,KBUILD,kmod/sieve.ko)
	$(Q)test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 2; }
	$(Q)$(MAKE) -C $(KDIR) M=$(TOP) $(if $(filter 1,$(V)),V=1) $(NO_MODULE_BTF) modules \
		>$(if $(filter 1,$(V)),/dev/stderr,/dev/null)

user: $(BUILD)/libsieve.a $(BUILD)/libsieve.so $(BUILD)/sieve

$(BUILD)/core/%.o: kmod/%.c $(CORE_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BUILD)/lib/%.o: userspace/lib/%.c $(CORE_HDRS) $(wildcard userspace/lib/*.h)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BUILD)/cli/%.o: userspace/cli/%.c $(CORE_HDRS) $(wildcard userspace/lib/*.h userspace/cli/*.h)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BUILD)/libsieve.a: $(CORE_OBJS) $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libsieve.so: $(CORE_OBJS) $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libsieve.so.0 -o $@ $^

# Other parts of the CLI (the XDP loader) add their objects and libraries.
CLI_EXTRA_OBJS ?=
CLI_LDLIBS ?=
$(BUILD)/sieve: $(CLI_OBJS) $$(CLI_EXTRA_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $(CLI_OBJS) $(CLI_EXTRA_OBJS) $(BUILD)/libsieve.a $(CLI_LDLIBS) -lm

# BPF: an XDP program that passes everything, for now.
# <asm/types.h> lives under the multiarch include directory.
BPF_ARCH_INCLUDE := $(addprefix -I,$(wildcard /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
bpf: $(BPF_OBJS)
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h include/*.h)
	$(call msg,BPF,$<)
	$(Q)mkdir -p $(@D) && $(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 \
		-I$(TOP)/include -I$(TOP)/include/uapi $(BPF_ARCH_INCLUDE) -c $< -o $@

# Debian packages the build, the tests and the demo need. Idempotent, and
# silent when everything is there.
DEB_PACKAGES := make gcc libc6-dev clang llvm libbpf-dev libelf-dev zlib1g-dev \
	linux-headers-amd64 qemu-system-x86 busybox-static cpio gzip libcmocka-dev \
	pkg-config python3
deps:
	$(Q)missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "  DEPS     installing:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
		|| { echo "make deps: apt-get install$$missing failed" >&2; exit 2; }; \
	fi

# Every suite writes "PASSED FAILED" to $(RESULTS)/<suite>; `make test`
# runs them all, even after a failure, and sums them up.
SUITES := unit vm
test: deps
	$(Q)rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	$(Q)status=0; for s in $(SUITES); do $(MAKE) test-$$s || status=1; done; \
		tests/summarize.sh $(RESULTS) $(SUITES) || status=1; exit $$status

include tests/unit/unit.mk
include tests/vm/vm.mk
include tests/bench/bench.mk
# Fragments of other parts (the XDP blocklist and its suites) extend
# SUITES, DEMOS, BENCHES, DEB_PACKAGES, CLI_EXTRA_OBJS and CLI_LDLIBS.
include $(sort $(wildcard bpf/*.mk userspace/xdp/*.mk tests/bpf/*.mk tests/e2e/*.mk))

# `make demo` runs each demo script in turn, with the CLI's path.
DEMOS := userspace/cli/demo.sh $(DEMOS)
demo: deps user
	$(Q)for d in $(DEMOS); do $$d $(BUILD)/sieve || exit $$?; done

clean:
	$(Q)if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(TOP) clean >/dev/null; fi
	$(Q)rm -rf $(BUILD)
