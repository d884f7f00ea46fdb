# SPDX-License-Identifier: GPL-2.0
#
# `make check`: the static checks, clean or each remaining finding
# justified where it is kept. `make test` runs it first (a finding stops
# the run). One part alone: `make check-checkpatch`, `check-module`,
# `check-user`, `check-shell`.
#
# - checkpatch: the kernel's scripts/checkpatch.pl --strict --no-tree over
#   kmod/, include/ and bpf/; the findings kept, each with its reason and
#   count, are in tests/check/checkpatch.suppress (tests/check/checkpatch.sh).
#   The script comes from the linux-source-6.1 tarball the debug kernel
#   and the BTF tree are built from: the debug kernel's tree when it is
#   unpacked, else checkpatch.pl, spelling.txt and const_structs.checkpatch
#   alone, unpacked once into cache/checkpatch/ (kept by `make clean`).
#   CHECKPATCH=path/to/checkpatch.pl uses another.
# - module: the module build (the top Kbuild: sieve.ko, its example and
#   the VM's test module) with W=1 and sparse on every file (C=2), for
#   KDIR, from a copy of the sources in build/check/src (as the VM's
#   build), so that the host's own objects are not rebuilt. Any warning
#   fails.
# - user: libsieve, the CLI, sieve-agent and the BPF objects built afresh
#   in build/check/user with CHECK_USER_WARNINGS, warnings as errors.
# - shell: shellcheck over every shell script (tests/check/shellcheck.sh;
#   the checks turned off for the whole tree, with their reasons, are in
#   .shellcheckrc).

CHECK_BUILD := $(BUILD)/check
CHECK_SRC := $(CHECK_BUILD)/src
LINUX_SOURCE_TARBALL ?= /usr/src/linux-source-6.1.tar.xz
CHECKPATCH_CACHE := $(TOP)/cache/checkpatch
CHECKPATCH ?= $(firstword $(wildcard $(DEBUG_KDIR)/scripts/checkpatch.pl) \
	$(CHECKPATCH_CACHE)/checkpatch.pl)
CHECKPATCH_FILES = $(filter-out %.mod.c,$(wildcard kmod/*.[ch] kmod/*/*.[ch] include/*.h \
	include/*/*.h include/*/*/*.h bpf/*.[ch]))
# Warnings userspace is held to beyond the build's own -Wall -Wextra.
CHECK_USER_WARNINGS := -Wshadow -Wformat-security -Wmissing-prototypes -Wstrict-prototypes \
	-Wundef -Wpointer-arith -Wvla -Wnull-dereference -Werror

DEB_PACKAGES += sparse shellcheck perl linux-source-6.1

.PHONY: check check-checkpatch check-module check-user check-shell
check: check-checkpatch check-module check-user check-shell
test: check

$(CHECKPATCH_CACHE)/checkpatch.pl: $(LINUX_SOURCE_TARBALL)
	$(call msg,UNPACK,checkpatch.pl from $(notdir $<))
	$(Q)mkdir -p $(@D) && tmp=$$(mktemp -d $(@D)/unpack.XXXXXX) && \
		tar -xf $< -C $$tmp --strip-components=2 --wildcards '*/scripts/checkpatch.pl' \
			'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch' && \
		mv $$tmp/spelling.txt $$tmp/const_structs.checkpatch $(@D)/ && \
		mv $$tmp/checkpatch.pl $@ && rmdir $$tmp && touch $@

check-checkpatch: deps $(CHECKPATCH)
	$(call msg,CHECK,checkpatch --strict kmod/ include/ bpf/)
	$(Q)tests/check/checkpatch.sh $(CHECKPATCH) tests/check/checkpatch.suppress \
		$(CHECKPATCH_FILES)

check-module: deps
	$(call msg,CHECK,W=1 C=2 (sparse) modules for $(notdir $(KDIR)))
	$(Q)test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 2; }
	$(Q)mkdir -p $(CHECK_SRC) && find $(CHECK_SRC) -type f \( -name '*.[chS]' -o -name Kbuild \
		-o -name Makefile -o -name cores.mk \) ! -name '*.mod.c' -delete
	$(Q)find -L Kbuild kmod include tests/vm tests/cases -type f \( -name '*.[chS]' \
		-o -name Kbuild -o -name Makefile -o -name cores.mk \) ! -name '*.mod.c' -print0 | \
		cpio -pdmL0 --quiet $(CHECK_SRC)
	$(Q)$(call kbuild_tree,$(KDIR)); \
		$(MAKE) -C $$kdir M=$(CHECK_SRC) $(KBUILD_ARCH_FLAGS) W=1 C=2 $$nobtf modules \
		>$(CHECK_BUILD)/module.log 2>&1 || \
		{ cat $(CHECK_BUILD)/module.log; exit 1; }
	$(Q)! grep -iE 'warning:|error:' $(CHECK_BUILD)/module.log

check-user: deps
	$(call msg,CHECK,userspace and BPF with warnings as errors)
	$(Q)mkdir -p $(CHECK_BUILD) && $(MAKE) BUILD=$(CHECK_BUILD)/user CFLAGS="-O2 -g $(CHECK_USER_WARNINGS)" \
		CLANG="$(CLANG) -Werror" user bpf >$(CHECK_BUILD)/user.log 2>&1 || \
		{ grep -E 'warning:|error:' -A3 $(CHECK_BUILD)/user.log || cat $(CHECK_BUILD)/user.log; exit 1; }

check-shell: deps
	$(call msg,CHECK,shellcheck)
	$(Q)tests/check/shellcheck.sh
