# SPDX-License-Identifier: GPL-2.0
#
# sieve: `make` builds the module, libsieve, the CLI and the BPF objects;
# `make test` runs every suite; `make demo`; `make bench`; `make deb` (dist/).
# Quiet unless V=1.

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

# The machine the build is for: this one, or another with CROSS_COMPILE
# (e.g. `make CROSS_COMPILE=aarch64-linux-gnu-`, as Kbuild spells it; see
# tests/arm64/arm64.mk). Its names in the kernel's and BPF's terms
# (KERNEL_ARCH: arch/ and __TARGET_ARCH_*) and in Debian's (DEB_ARCH: the
# flavour of its linux-headers and linux-image packages) come from the
# compiler's target, so that nothing assumes x86-64.
ifneq ($(CROSS_COMPILE),)
CC := $(CROSS_COMPILE)gcc
AR := $(CROSS_COMPILE)ar
endif
# This machine's name where there is no compiler yet (make deps installs it).
TARGET_MACHINE := $(or $(firstword $(subst -, ,$(shell $(CC) -dumpmachine 2>/dev/null))),\
	$(shell uname -m))
KERNEL_ARCH := $(or $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(filter x86_64 aarch64,$(TARGET_MACHINE)))),\
	$(error sieve builds for x86_64 and aarch64 only, not '$(TARGET_MACHINE)' ($(CC) -dumpmachine)))
DEB_ARCH := $(patsubst x86,amd64,$(KERNEL_ARCH))

# The kernel to build the module for: KDIR=, else the running kernel's
# headers where they exist and it is the machine built for, else the newest
# Debian linux-headers-ABI-$(DEB_ARCH) tree (a flavour's, not -common).
DEBIAN_KDIR = $(shell ls -d /usr/src/linux-headers-*-$(DEB_ARCH) 2>/dev/null | \
	grep -E -- '-[0-9]+-$(DEB_ARCH)$$' | sort -V | tail -n 1)
RUNNING_KDIR = $(if $(filter $(TARGET_MACHINE),$(shell uname -m)),$(wildcard /lib/modules/$(shell uname -r)/build))
KDIR ?= $(or $(RUNNING_KDIR),$(DEBIAN_KDIR))
# Kbuild's own words for the same choice, on every module build.
KBUILD_ARCH_FLAGS := ARCH=$(KERNEL_ARCH) $(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE))

# sieve.ko gets BTF, and with it its kfuncs for XDP and TC, where the
# kernel has module BTF: kmod/btf/objtree.sh prepares a copy of the
# headers tree that can make it (vmlinux from the kernel's image,
# resolve_btfids from linux-source-6.1), once, in cache/btf/ (kept by
# `make clean`). Where it cannot, it says why, once, and the module is
# built from the tree as it is, without BTF or kfuncs.
# $(call kbuild_tree,HEADERS) is shell: sets $kdir and $nobtf for the
# Kbuild command line.
BTF_CACHE := $(TOP)/cache/btf
kbuild_tree = if kdir=$$($(TOP)/kmod/btf/objtree.sh $(1) $(BTF_CACHE)); then nobtf=; \
	else kdir=$(1); nobtf=CONFIG_DEBUG_INFO_BTF_MODULES=; fi

CLANG ?= clang
CFLAGS ?= -O2 -g
# The shared library and the CLI are linked with LDFLAGS (the Debian build's hardening).
LDFLAGS ?=
# userspace/lib before kmod: the cores' <sieve_env.h> is userspace/lib's
# here (kmod's is the kernel's). -MMD -MP: each object's header
# dependencies, from the compiler, in a .d file beside it (read at the end
# of this file), so no rule lists headers.
# Recursive (=), like the other fragments' flags, so that target-specific
# += naming a fragment's variable works whatever the order they are read in.
SIEVE_CFLAGS = -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -MMD -MP \
	-I$(TOP)/include/uapi -I$(TOP)/userspace/lib -I$(TOP)/kmod

# The filter cores: compiled unchanged into sieve.ko and into userspace;
# their list is kmod/cores.mk's, which kmod/Kbuild reads too.
include kmod/cores.mk
CORE_SRCS := $(patsubst %,kmod/%.c,$(SIEVE_CORES))
# Headers are found by -MMD; rules of other fragments that still name
# CORE_HDRS get nothing from it.
CORE_HDRS :=
CORE_OBJS := $(patsubst kmod/%.c,$(BUILD)/core/%.o,$(CORE_SRCS))

LIB_SRCS := $(wildcard userspace/lib/*.c)
LIB_OBJS := $(patsubst userspace/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
CLI_SRCS := $(wildcard userspace/cli/*.c)
CLI_OBJS := $(patsubst userspace/cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))

.PHONY: all module user bpf deps test demo bench clean install completion man
all: module user bpf completion

module:
	$(call msg,KBUILD,kmod/sieve.ko)
	$(Q)test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 2; }
	$(Q)$(call kbuild_tree,$(KDIR)); \
		$(MAKE) -C $$kdir M=$(TOP) $(KBUILD_ARCH_FLAGS) $(if $(filter 1,$(V)),V=1) $$nobtf modules \
		>$(if $(filter 1,$(V)),/dev/stderr,/dev/null)

user: $(BUILD)/libsieve.a $(BUILD)/libsieve.so $(BUILD)/sieve

$(BUILD)/core/%.o: kmod/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BUILD)/lib/%.o: userspace/lib/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BUILD)/cli/%.o: userspace/cli/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

# sieve's version, in one place: the file VERSION (`sieve --version`; the
# Debian changelog's too).
SIEVE_VERSION := $(shell cat $(TOP)/VERSION)
$(BUILD)/cli/command.o: SIEVE_CFLAGS += -DSIEVE_VERSION='"$(SIEVE_VERSION)"'
$(BUILD)/cli/command.o: VERSION

$(BUILD)/libsieve.a: $(CORE_OBJS) $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The shared library exports libsieve.h's API only (libsieve.map); the
# soname's number changes when that API breaks.
LIB_VERSION := 0.1.0
LIB_SONAME := libsieve.so.0
$(BUILD)/libsieve.so.$(LIB_VERSION): $(CORE_OBJS) $(LIB_OBJS) userspace/lib/libsieve.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=userspace/lib/libsieve.map \
		-o $@ $(CORE_OBJS) $(LIB_OBJS)

$(BUILD)/libsieve.so: $(BUILD)/libsieve.so.$(LIB_VERSION)
	$(Q)ln -sf $(notdir $<) $(BUILD)/$(LIB_SONAME) && ln -sf $(LIB_SONAME) $@

# Other parts of the CLI (the XDP loader) add their objects and libraries.
CLI_EXTRA_OBJS ?=
CLI_LDLIBS ?=
$(BUILD)/sieve: $(CLI_OBJS) $$(CLI_EXTRA_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(CLI_EXTRA_OBJS) $(BUILD)/libsieve.a $(CLI_LDLIBS) -lm

# The CLI for the VM, $(CLI_STATIC) (named sieve, so that VM_PROGS +=
# $(CLI_STATIC) puts it on the VM's PATH as sieve): linked statically from
# CLI_VM_OBJS: the CLI without its XDP commands (userspace/cli/xdp*.c; no
# libbpf in the VM) and the agent's (agent_exec.c, agent_command.c),
# main.c built with SIEVE_CLI_NO_XDP.
CLI_STATIC := $(BUILD)/static/sieve
CLI_VM_OBJS = $(filter-out $(BUILD)/cli/main.o $(BUILD)/cli/xdp% $(BUILD)/cli/agent_%, \
	$(CLI_OBJS)) $(BUILD)/static/main.o
$(BUILD)/static/main.o: userspace/cli/main.c
	$(call msg,CC,$< [static])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) -DSIEVE_CLI_NO_XDP -c $< -o $@
$(CLI_STATIC): $$(CLI_VM_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $(CLI_VM_OBJS) $(BUILD)/libsieve.a -lm

# `make install PREFIX=/usr/local DESTDIR=`: libsieve (static, shared,
# pkg-config file), its header and <linux/sieve.h>, the CLI and the
# programs it runs, beside it (INSTALL_PROGS: sieve-agent), and the README
# in DOCDIR, where sieve.conf(5) sends the reader.
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCDIR ?= $(PREFIX)/share/doc/sieve
# fail2ban reads its actions from /etc/fail2ban only, whatever the PREFIX.
FAIL2BAN_ACTIONDIR ?= /etc/fail2ban/action.d
INSTALL_PROGS ?=
install: $(BUILD)/libsieve.a $(BUILD)/libsieve.so $(BUILD)/sieve $$(INSTALL_PROGS)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/linux \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR)
	$(Q)install -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	$(Q)install -m 0644 $(BUILD)/libsieve.a $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 0755 $(BUILD)/libsieve.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libsieve.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libsieve.so
	$(Q)install -m 0644 userspace/lib/libsieve.h $(DESTDIR)$(INCLUDEDIR)/
	$(Q)install -m 0644 include/uapi/linux/sieve.h $(DESTDIR)$(INCLUDEDIR)/linux/
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(LIB_VERSION)|' userspace/sieve.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/sieve.pc
	$(Q)install -m 0755 $(BUILD)/sieve $(INSTALL_PROGS) $(DESTDIR)$(BINDIR)/
	$(Q)install -d $(DESTDIR)$(FAIL2BAN_ACTIONDIR)
	$(Q)install -m 0644 dist/fail2ban/sieve-xdp.conf $(DESTDIR)$(FAIL2BAN_ACTIONDIR)/

# Bash completion, generated from the CLI's own table (`sieve __complete`),
# so it cannot drift from it: install as
# /usr/share/bash-completion/completions/sieve.
COMPLETION := $(BUILD)/completion/sieve
completion: $(COMPLETION)
$(COMPLETION): $(BUILD)/sieve userspace/cli/completion.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && userspace/cli/completion.sh $(BUILD)/sieve > $@

# The man pages are written by hand (doc/man/*.[358]); `make man` checks
# them as the unit suite does (groff, from groff-base: no warnings).
MAN_PAGES := $(wildcard doc/man/*.[358])
man:
	$(Q)for p in $(MAN_PAGES); do \
		out=$$(groff -man -ww -z $$p 2>&1); [ -z "$$out" ] || { echo "$$out"; exit 1; }; \
	done

# BPF: the XDP programs are built by bpf/bpf.mk.

# Debian packages the build, the tests and the demo need. Idempotent, and
# silent when everything is there.
DEB_PACKAGES := make gcc libc6-dev clang llvm libbpf-dev libelf-dev zlib1g-dev \
	linux-headers-$(DEB_ARCH) qemu-system-x86 busybox-static cpio gzip libcmocka-dev \
	pkg-config python3 libsqlite3-dev groff-base pahole linux-source-6.1
# $(call deps_install,PACKAGES): installs those of PACKAGES not installed.
deps_install = missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "  DEPS     installing:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
		|| { echo "make deps: apt-get install$$missing failed" >&2; exit 2; }; \
	fi
# Architectures whose packages (PKG:ARCH) DEB_PACKAGES names: added to
# dpkg first (tests/arm64/arm64.mk's cross build).
DEB_FOREIGN_ARCHS ?=
deps:
	$(Q)for a in $(DEB_FOREIGN_ARCHS); do \
		dpkg --print-foreign-architectures | grep -qx $$a && continue; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "  DEPS     dpkg --add-architecture $$a"; $$sudo dpkg --add-architecture $$a || exit 2; \
	done
	$(Q)$(call deps_install,$(DEB_PACKAGES))

# Every suite writes "PASSED FAILED" to $(RESULTS)/<suite>; `make test`
# runs them all, even after a failure, and sums them up.
SUITES := unit vm
test: deps
	$(Q)rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	$(Q)status=0; for s in $(SUITES); do $(MAKE) test-$$s || status=1; done; \
		tests/summarize.sh $(RESULTS) $(SUITES) || status=1; exit $$status

# `make test-SUITE T=NAME`: only the cases of SUITE whose name holds NAME,
# for every suite (each fragment hands T to its runner: the cmocka and BPF
# runners' filters, the e2e scripts' case lists, the VM's init by the
# kernel command line, the parts of the dist suites). A run with T= that
# counted no case fails, so a misspelt NAME never passes by running
# nothing. NAME is one word: it reaches a kernel command line.
T ?=
ifneq ($(T),)
ifneq ($(filter test,$(MAKECMDGOALS)),)
$(error make test runs every case: one case is make test-SUITE T=$(T))
endif
ifneq ($(shell printf '%s' '$(subst ','',$(T))' | tr -d 'A-Za-z0-9_.-'),)
$(error T='$(T)': a case name is letters, digits, '_', '.' and '-')
endif
endif
# $(call t_result,SUITE): shell for the end of a suite's recipe: with T=,
# a result file of no case becomes one failure, loudly. (No commas in
# these: $(if) would split there.)
t_result = $(if $(T),tests/t_result.sh '$(T)' $(1) $(RESULTS)/$(1) || status=1;)
# $(call t_one_case,SUITE,NAME): shell for the start of the recipe of a
# suite that is one case, NAME: T= that is not part of NAME fails.
# (Patterns in parentheses: make's $(if) counts them.)
t_one_case = $(if $(T),case '$(2)' in (*'$(T)'*) ;; (*) \
	echo "T=$(T) matches no case of $(1) (its one case: $(2))" >&2; \
	mkdir -p $(RESULTS) && echo "0 1" >$(RESULTS)/$(1); exit 1;; esac;)

include tests/unit/unit.mk
include tests/vm/vm.mk
include tests/device/device.mk
include tests/debug/debug.mk
include tests/bench/bench.mk
# Fragments of other parts (the XDP blocklist, the packaging and their
# suites) extend SUITES, DEMOS, BENCHES, DEB_PACKAGES, CLI_EXTRA_OBJS and
# CLI_LDLIBS.
include $(sort $(wildcard bpf/*.mk userspace/xdp/*.mk tests/bpf/*.mk tests/e2e/*.mk \
	tests/kfunc/*.mk dist/*.mk tests/dist/*.mk tests/arm64/*.mk tests/check/*.mk))
# The settings build on the loader's headers, the fleet and the sources
# (userspace/sources: HTTP) on the settings, the agent on all four: read
# after them (their rules name their objects).
include $(wildcard userspace/conf/*.mk) $(wildcard userspace/fleet/*.mk) \
	$(wildcard userspace/sources/*.mk) $(wildcard userspace/agent/*.mk)

# `make demo`: local filters, then the device in the VM, then each script
# of DEMOS (given the CLI's path).
demo: deps user
	$(Q)userspace/cli/demo.sh $(BUILD)/sieve
	$(Q)$(MAKE) demo-vm
	$(Q)for d in $(DEMOS); do $$d $(BUILD)/sieve || exit $$?; done

clean:
	$(Q)if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(TOP) $(KBUILD_ARCH_FLAGS) clean >/dev/null; fi
	$(Q)rm -rf $(BUILD)

# The header dependencies -MMD wrote (none before the first build).
-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d $(BUILD)/*/*/*/*.d)
